#!/bin/bash
# Builds PPCG (with the isl and pet it pins) from a git checkout, outside this repository.
#
#   benchmarks/ppcg/build_ppcg.sh SRC
#
# SRC: a clone of PPCG's upstream repository at PPCG_COMMIT, with its two submodules checked out in
# SRC/isl (ISL_COMMIT) and SRC/pet (PET_COMMIT), as its get_submodules.sh would. pet parses C with
# libclang from the system packages (Debian 12: clang 14):
#   apt-get install -y libclang-dev llvm-dev clang libgmp-dev libyaml-dev automake autoconf libtool pkg-config
# The binary is SRC/ppcg (not installed). Runs niced, on 2 jobs (the machine is shared).
set -eu
PPCG_COMMIT=5e07c52e13fc8ea9fac7c1daf247d81d60822a93  # "PPCG 0.09", 2022-07-02: the newest release, master of the mirror used
ISL_COMMIT=f7b0ef95845d57fc839090d5075b84fa706eeb15   # isl 0.25, the submodule commit of PPCG 0.09
PET_COMMIT=c8adf54b904c7b293d0400d80cb6f21249a5a1cd   # pet 0.11.6, the submodule commit of PPCG 0.09
src=${1:?usage: build_ppcg.sh SRC}
cd "$src"
for pair in ".:$PPCG_COMMIT" "isl:$ISL_COMMIT" "pet:$PET_COMMIT"; do
  d=${pair%%:*} want=${pair#*:}
  have=$(git -C "$d" rev-parse HEAD)
  [ "$have" = "$want" ] || { echo "$src/$d is at $have, expected $want" >&2; exit 1; }
done
nice -n 15 ./autogen.sh
nice -n 15 ./configure --with-clang=system
nice -n 15 make -j2
./ppcg --version
