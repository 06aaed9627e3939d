#!/usr/bin/env bash
# Issue 17's protocol, side by side in ONE stream: every variant of a kernel pinned to the same 2 cores of an
# otherwise idle machine, interleaved, shuffled per round (session 22's 4 concurrent streams cost the
# memory-bound kernels 15-35%). Build here (compilers, islpy, Pluto's sources), time on the quiet machine.
#
#   benchmarks/polybench/single_stream.sh build POLYBENCH_DIR PLUTO_SRC OUT [BEFORE_CHECKOUT]
#       gcc, polytune (this tree), pluto (`run.py pluto` sources), and polytune-before from another checkout
#       (git worktree add /tmp/before HEAD~1) where one is given; every dump checked against gcc's at MINI
#   benchmarks/polybench/single_stream.sh run OUT KERNELS ROUNDS RESULTS.json [CPUS]
#       (stdlib python3 and taskset only; CPUS default 2,3); then `run.py table RESULTS.json`
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in
  build)
    pb=$2 pluto=$3 out=$4 before=${5:-}
    extra=()
    if [ -n "$before" ]; then
      extra=(--variant polytune= --variant polytune-before= --variant-root "polytune-before=$before")
    fi
    python3 "$here/run.py" build --polybench "$pb" --out "$out" --dataset LARGE --march x86-64-v4 \
      --pluto "$pluto" ${extra[@]+"${extra[@]}"} ;;
  run)
    out=$2 kernels=$3 rounds=$4 results=$5 cpus=${6:-2,3}
    python3 "$here/run.py" run --dir "$out" --rounds "$rounds" --cpus "$cpus" --kernels "$kernels" \
      --out "$results" ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
