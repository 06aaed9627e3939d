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
# the dataset, once per dataset of DATASETS (default: LARGE, which run.py times, and MINI, which it checks
# too). PolyBench keeps its fixed-size array prototypes (no POLYBENCH_USE_C99_PROTO: nvcc compiles the host
# file as C++, which has no variable-length array parameters), so PPCG's code has the arrays' sizes built
# in and each dataset needs its own files. OUTDIR/DATASET/KERNEL/ gets KERNEL_host.cu, KERNEL_kernel.cu and
# KERNEL_kernel.hu (PPCG's names); OUTDIR/manifest.json records the kernels, their PolyBench directories,
# the datasets and PPCG's version and arguments.
set -eu
out=${1:?usage: prepare.sh OUTDIR [--tar FILE.tar.xz]}
tarball=
if [ $# -ge 3 ] && [ "$2" = --tar ]; then tarball=$3; fi
PPCG=${PPCG:-/work/ppcg-build/ppcg/ppcg}
POLYBENCH=${POLYBENCH:-/work/polybench}
KERNELS=${KERNELS:-gemm 2mm jacobi-2d covariance atax}
DATASETS=${DATASETS:-LARGE MINI}
PPCG=$(readlink -f "$PPCG")
POLYBENCH=$(readlink -f "$POLYBENCH")
[ -x "$PPCG" ] || { echo "prepare.sh: no ppcg binary at $PPCG (set PPCG)" >&2; exit 2; }
[ -f "$POLYBENCH/utilities/polybench.c" ] || { echo "prepare.sh: no PolyBench at $POLYBENCH (set POLYBENCH)" >&2; exit 2; }

version=$("$PPCG" --version 2>&1 | tr '\n' ' ' | sed 's/ *$//')
flags='--target=cuda -D${DATASET}_DATASET'
mkdir -p "$out"
out=$(readlink -f "$out")
entries=()
for k in $KERNELS; do
  src=$(cd "$POLYBENCH" && find . -name "$k.c" -not -path './utilities/*' | head -1)
  [ -n "$src" ] || { echo "prepare.sh: no $k.c under $POLYBENCH" >&2; exit 2; }
  kdir=$(dirname "${src#./}")
  for ds in $DATASETS; do
    dst=$out/$ds/$k
    rm -rf "${dst:?}" && mkdir -p "$dst"
    # PPCG writes its three files into the current directory, named after the input.
    (cd "$dst" && "$PPCG" --target=cuda "-D${ds}_DATASET" -I "$POLYBENCH/utilities" -I "$POLYBENCH/$kdir" \
      "$POLYBENCH/$kdir/$k.c")
    for f in "${k}_host.cu" "${k}_kernel.cu" "${k}_kernel.hu"; do
      [ -s "$dst/$f" ] || { echo "prepare.sh: ppcg wrote no $ds/$k/$f" >&2; exit 1; }
    done
    echo "$ds $k: $(grep -c '__global__' "$dst/${k}_kernel.cu") kernels"
  done
  entries+=("\"$k\": \"$kdir\"")
done
dsjson=$(printf '"%s", ' $DATASETS)
joined=$(IFS=,; echo "${entries[*]}")
cat > "$out/manifest.json" <<JSON
{"ppcg_version": "$version", "ppcg_args": "$flags -I POLYBENCH/utilities -I POLYBENCH/KERNEL_DIR KERNEL.c",
 "polybench": "PolyBench/C 4.2.1", "datasets": [${dsjson%, }], "kernels": {${joined//,/, }}}
JSON
if [ -n "$tarball" ]; then
  mkdir -p "$(dirname "$tarball")"
  tar cJf "$tarball" -C "$out" .
  echo "wrote $tarball"
fi
