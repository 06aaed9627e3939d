#!/usr/bin/env bash
# Build Pluto (polycc) from local git mirrors, outside the repository.
#
# Usage: build_pluto.sh PLUTO_REPO MIRROR_ROOT [WORKDIR]
#   PLUTO_REPO   a clone or bare mirror of github.com/bondhugula/pluto
#   MIRROR_ROOT  a folder holding one mirror per submodule as OWNER+NAME/repo (the layout the
#                session's fetch tool writes, e.g. MIRROR_ROOT/bondhugula+isl-for-pluto/repo)
#   WORKDIR      default /work/tools/pluto: sources go to WORKDIR/src, the install to WORKDIR/install
# Environment: CLANG_PREFIX (default /usr/lib/llvm-14), JOBS (default 2).
# Needs autoconf, automake, libtool, bison, flex, libgmp-dev, llvm-dev and libclang-dev.
#
# Each submodule is checked out at the commit the superproject pins when its mirror has it; when
# it does not, the mirror's HEAD is used and a line "DIFFERS: ..." says so (the build log keeps it).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PLUTO_REPO MIRROR_ROOT [WORKDIR]" >&2
    exit 2
fi
pluto_repo=$(realpath "$1")
mirror_root=$(realpath "$2")
workdir=${3:-/work/tools/pluto}
clang_prefix=${CLANG_PREFIX:-/usr/lib/llvm-14}
jobs=${JOBS:-2}
src=$workdir/src
prefix=$workdir/install

# submodule path -> OWNER+NAME of its mirror (from pluto's .gitmodules)
declare -A mirror_of=(
    [isl]=bondhugula+isl-for-pluto
    [cloog-isl]=bondhugula+cloog
    [piplib]=periscop+piplib
    [polylib]=vincentloechner+polylib
    [candl]=periscop+candl
    [clan]=periscop+clan
    [openscop]=periscop+openscop
    [pet]=bondhugula+pet-for-pluto
)

mkdir -p "$workdir"
if [[ ! -d $src/.git ]]; then
    git clone --quiet "$pluto_repo" "$src"
fi
cd "$src"
echo "pluto $(git rev-parse HEAD)"

for path in "${!mirror_of[@]}"; do
    mirror=$mirror_root/${mirror_of[$path]}/repo
    pinned=$(git ls-tree HEAD "$path" | awk '{print $3}')
    if [[ ! -d $mirror ]]; then
        echo "missing mirror for submodule $path: $mirror" >&2
        exit 1
    fi
    if [[ ! -e $path/.git ]]; then
        rm -rf "$path"
        git clone --quiet "$mirror" "$path"
    fi
    if git -C "$path" cat-file -e "$pinned^{commit}" 2>/dev/null; then
        git -C "$path" checkout --quiet "$pinned"
        echo "submodule $path at pinned $pinned"
    else
        head=$(git -C "$path" rev-parse "origin/HEAD" 2>/dev/null || git -C "$path" rev-parse HEAD)
        git -C "$path" checkout --quiet "$head"
        echo "DIFFERS: submodule $path pinned $pinned is not in $mirror; using its HEAD $head"
    fi
done

[[ -x configure && -x cloog-isl/configure && -x pet/configure ]] || ./autogen.sh
# no PDF manuals: where texi2dvi is installed without TeX, cloog's doc/cloog.pdf fails the build
export ac_cv_prog_TEXI2DVI=
./configure --prefix="$prefix" --with-clang-prefix="$clang_prefix"
make -j"$jobs"
make install
echo "polycc: $prefix/bin/polycc"
