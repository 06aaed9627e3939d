#!/bin/bash
# On the GPU machine, from the repository root: unpack prepare.sh's tarball, then build, check and time PPCG's
# output with run.py; ppcg_h200.json and ppcg_h200.log go to OUTDIR.
#
#   bash benchmarks/ppcg/device.sh TARBALL POLYBENCH OUTDIR [run.py options]
#   e.g. bash benchmarks/ppcg/device.sh .carry/ppcg/ppcg_cuda.tar.xz .carry/polybench $OUT
set -u
tarball=${1:?usage: device.sh TARBALL POLYBENCH OUTDIR [run.py options]} polybench=${2:?} out=${3:?}
shift 3
gen=$(mktemp -d /tmp/ppcg-gen.XXXXXX)
tar xJf "$tarball" -C "$gen" || exit 1
mkdir -p "$out"
nvidia-smi -L > "$out/ppcg_h200.log" 2>&1
python3 "$(dirname "$0")/run.py" --gen "$gen" --polybench "$polybench" --out "$out/ppcg_h200.json" \
  --jobs "$(nproc)" "$@" 2>&1 | tee -a "$out/ppcg_h200.log"
rc=${PIPESTATUS[0]}
rm -rf "$gen"
exit "$rc"
