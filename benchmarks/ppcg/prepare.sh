#!/bin/bash
# PPCG's default CUDA output for five PolyBench/C 4.2.1 kernels, generated into OUTDIR (and, with --tar, packed
# for a machine that has nvcc but no PPCG). Nothing of PPCG or PolyBench is kept in this repository.
#
#   benchmarks/ppcg/prepare.sh OUTDIR [--tar FILE.tar.xz]
#
# Environment: PPCG (the ppcg binary; default /work/ppcg-build/ppcg/ppcg, see build_ppcg.sh), POLYBENCH
# (PolyBench/C 4.2.1 as distributed; default /work/polybench), KERNELS (default: gemm 2mm jacobi-2d
# covariance atax).
#
# PPCG runs with its default options and --target=cuda; the only other arguments are the include paths and
# LARGE_DATASET, the dataset the benchmark times (the generated code is parametric in the sizes: the same
# files build at any dataset, as run.py's checks do). PolyBench is given its classic fixed-size prototypes
# (no POLYBENCH_USE_C99_PROTO): nvcc compiles the host file as C++, which has no variable-length array
# parameters. OUTDIR/KERNEL/ gets KERNEL_host.cu, KERNEL_kernel.cu and KERNEL_kernel.hu (PPCG's names);
# OUTDIR/manifest.json records the kernels, the PolyBench directories and PPCG's version and arguments.
set -eu
out=${1:?usage: prepare.sh OUTDIR [--tar FILE.tar.xz]}
tarball=
if [ $# -ge 3 ] && [ "$2" = --tar ]; then tarball=$3; fi
PPCG=${PPCG:-/work/ppcg-build/ppcg/ppcg}
POLYBENCH=${POLYBENCH:-/work/polybench}
KERNELS=${KERNELS:-gemm 2mm jacobi-2d covariance atax}
PPCG=$(readlink -f "$PPCG")
POLYBENCH=$(readlink -f "$POLYBENCH")
[ -x "$PPCG" ] || { echo "prepare.sh: no ppcg binary at $PPCG (set PPCG)" >&2; exit 2; }
[ -f "$POLYBENCH/utilities/polybench.c" ] || { echo "prepare.sh: no PolyBench at $POLYBENCH (set POLYBENCH)" >&2; exit 2; }

version=$("$PPCG" --version 2>&1 | tr '\n' ' ' | sed 's/ *$//')
flags="--target=cuda -DLARGE_DATASET"
mkdir -p "$out"
out=$(readlink -f "$out")
entries=()
for k in $KERNELS; do
  src=$(cd "$POLYBENCH" && find . -name "$k.c" -not -path './utilities/*' | head -1)
  [ -n "$src" ] || { echo "prepare.sh: no $k.c under $POLYBENCH" >&2; exit 2; }
  kdir=$(dirname "${src#./}")
  rm -rf "${out:?}/$k" && mkdir -p "$out/$k"
  # PPCG writes its three files into the current directory, named after the input.
  (cd "$out/$k" && "$PPCG" $flags -I "$POLYBENCH/utilities" -I "$POLYBENCH/$kdir" "$POLYBENCH/$kdir/$k.c")
  for f in "${k}_host.cu" "${k}_kernel.cu" "${k}_kernel.hu"; do
    [ -s "$out/$k/$f" ] || { echo "prepare.sh: ppcg wrote no $k/$f" >&2; exit 1; }
  done
  entries+=("\"$k\": \"$kdir\"")
  echo "$k: $(grep -c '__global__' "$out/$k/${k}_kernel.cu") kernels"
done
joined=$(IFS=,; echo "${entries[*]}")
cat > "$out/manifest.json" <<JSON
{"ppcg_version": "$version", "ppcg_args": "$flags -I POLYBENCH/utilities -I POLYBENCH/KERNEL_DIR KERNEL.c",
 "polybench": "PolyBench/C 4.2.1", "kernels": {${joined//,/, }}}
JSON
if [ -n "$tarball" ]; then
  mkdir -p "$(dirname "$tarball")"
  tar cJf "$tarball" -C "$out" .
  echo "wrote $tarball"
fi
