#!/usr/bin/env bash
# Issue 17's tuned PolyBench columns and issue 18's workers benchmark, in one run on the 16-core device machine
# (about 8 minutes). Usage, from the repository root:
#
#     benchmarks/device_tune.sh OUT [POLYBENCH_DIR]
#
# POLYBENCH_DIR: PolyBench/C 4.2.1 as distributed (default: $POLYBENCH, else out/polybench, else /work/polybench).
# Needs python3 with islpy and pycparser importable (and Ray for the `ray` mode), gcc and taskset.
# Phases (each prints progress lines and writes its results as it goes, so a run cut short keeps them):
#   1. tune   (~3 min, CPUs 0-15 as 8 pairs): polytune tune --space schedule and tile-only, same budget, for 10
#             kernels, tuned at MEDIUM (atax, gemver, mvt at LARGE: their MEDIUM runs take microseconds);
#   2. build  (CPUs 8-15) next to the workers benchmark (CPUs 0-7, ~3.5 min): LARGE binaries of gcc, polytune,
#             seed, tuned, tuned-tiles, each checked at MINI against the original's dump;
#   3. run    (~1.5 min, 8 streams of 2 CPUs): LARGE, 3 interleaved rounds per kernel;
#   4. table: OUT/polybench.md and OUT/workers.md.
set -u
OUT=${1:?usage: benchmarks/device_tune.sh OUT [POLYBENCH_DIR]}
PB=${2:-${POLYBENCH:-}}
if [ -z "$PB" ]; then
    if [ -d out/polybench/utilities ]; then PB=out/polybench; else PB=/work/polybench; fi
fi
PY=${PYTHON:-python3}
KERNELS=${KERNELS:-atax,gemver,mvt,syrk,doitgen,cholesky,gramschmidt,jacobi-2d,fdtd-2d,heat-3d}
MARCH=${MARCH:-x86-64-v4}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "[device_tune $(date -u +%H:%M:%S)] $*" >&2; }
[ -d "$PB/utilities" ] || { log "no PolyBench at $PB (pass its directory as the second argument)"; exit 2; }
NCPU=$(nproc)
[ "$NCPU" -ge 16 ] || log "warning: $NCPU CPUs; the CPU sets below assume 16"
log "PolyBench: $PB; kernels: $KERNELS; out: $OUT"

log "phase 1: tune (20 tunes on 8 CPU pairs, each budget 24 evaluations or 45 s of search)"
timeout 260 $PY benchmarks/polybench/run.py tune --polybench "$PB" --out "$OUT/pb" --kernels "$KERNELS" \
    --tune-dataset MEDIUM --tune-dataset atax=LARGE --tune-dataset gemver=LARGE --tune-dataset mvt=LARGE \
    --max-evals 24 --time-limit 45 --tune-timeout 110 --cpus 0-15 --threads 2 --march "$MARCH" \
    2>&1 | tee "$OUT/tune.log"
[ -f "$OUT/pb/tune.json" ] || { log "phase 1 wrote no tune.json"; exit 1; }

log "phase 2: build (CPUs 8-15) and the workers benchmark (CPUs 0-7) side by side"
( taskset -c 8-15 timeout 300 $PY benchmarks/polybench/run.py build --polybench "$PB" --out "$OUT/pb" \
    --tuned "$OUT/pb/tune.json" --dataset LARGE --march "$MARCH" --check-march "$MARCH" --jobs 8 --no-clang \
    > "$OUT/build.log" 2>&1; echo "build exit $?" >> "$OUT/build.log" ) &
BUILD=$!
timeout 270 $PY benchmarks/workers.py --kernels gemm,jacobi-2d,lu --cpus 0-7 --threads 2 --jobs 8 \
    --max-evals 20 --time-limit 35 --timeout 80 --cflags "-O3 -march=$MARCH" \
    --out "$OUT/workers.json" --markdown-out "$OUT/workers.md" 2>&1 | tee "$OUT/workers.log"
wait $BUILD
tail -n 15 "$OUT/build.log" >&2

log "phase 3: run (LARGE, 8 streams of 2 CPUs, 3 rounds per kernel)"
timeout 150 $PY benchmarks/polybench/run.py run --dir "$OUT/pb" --rounds 3 --time-limit 100 --timeout 60 \
    --cpus 0,1:2,3:4,5:6,7:8,9:10,11:12,13:14,15 --out "$OUT/results.json" 2>&1 | tee "$OUT/run.log" | grep -v "^cpus"
log "phase 4: tables"
$PY benchmarks/polybench/run.py table "$OUT/results.json" --markdown-out "$OUT/polybench.md"
[ -f "$OUT/workers.md" ] && cat "$OUT/workers.md"
log "done: $OUT/polybench.md, $OUT/workers.md (raw: results.json, pb/tune.json, workers.json)"
