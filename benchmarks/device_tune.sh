#!/usr/bin/env bash
# Issue 17's tuned PolyBench columns and issue 18's workers benchmark, in one run on the 16-core device machine
# (about 8 minutes expected, under 9 at the phases' limits). Usage, from the repository root:
#
#     benchmarks/device_tune.sh OUT [POLYBENCH_DIR]
#     PHASES="1 2" benchmarks/device_tune.sh OUT ...; PHASES="3 4" benchmarks/device_tune.sh OUT ...   # in two calls
#     QUICK=1 benchmarks/device_tune.sh /tmp/dt /work/polybench     # a test of the script on 2 cores, small sizes
#
# POLYBENCH_DIR: PolyBench/C 4.2.1 as distributed (default: $POLYBENCH, else out/polybench, else /work/polybench).
# Needs python3 with islpy and pycparser importable (and Ray for the `ray` mode), gcc and taskset.
# Binaries and tuning caches go to $WORK (default /tmp/polytune-device-tune; kept between calls); OUT gets the
# results after each phase: tables (*.md), raw results (*.json), logs, tune reports and the tuned C sources.
# Phases (each prints progress lines and writes its results as it goes, so a run cut short keeps them):
#   1. tune   (<= 185 s, CPUs 0-15 as 8 pairs): polytune tune --space schedule and tile-only, same budget (24
#             evaluations or 35 s of search; the schedule space measures optimize's default and --schedule outer
#             besides the seed, 2 more), for 10 kernels, tuned at MEDIUM (atax, gemver and mvt at LARGE: their
#             MEDIUM runs take microseconds); each tune's best is then run again against the seed and optimize's
#             default, 5 times each in turn, at LARGE, and kept only if it is the fastest (tune --confirm-define);
#             OUT/pb/tune.json has per kernel and space the seed, optimize's default (schedule space), the best,
#             the re-run's medians and which was kept;
#   2. build  (CPUs 8-15) beside the workers benchmark (CPUs 0-7; <= 215 s): LARGE binaries of gcc, polytune,
#             seed, tuned, tuned-tiles, each checked at MINI against the original's dump;
#   3. run    (<= 130 s, 8 streams of 2 CPUs): LARGE, 3 interleaved rounds per kernel (a kernel per stream);
#   4. table: OUT/polybench.md (per kernel gcc, polytune = optimize's default, seed, tuned, tuned-tiles, and
#             tuned/seed, tuned/tuned-tiles, tuned/polytune) and OUT/workers.md.
set -u
OUT=${1:?usage: benchmarks/device_tune.sh OUT [POLYBENCH_DIR]}
PB=${2:-${POLYBENCH:-}}
if [ -z "$PB" ]; then
    if [ -d out/polybench/utilities ]; then PB=out/polybench; else PB=/work/polybench; fi
fi
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/polytune-device-tune}
KERNELS=${KERNELS:-atax,gemver,mvt,syrk,doitgen,cholesky,gramschmidt,jacobi-2d,fdtd-2d,heat-3d}
MARCH=${MARCH:-x86-64-v4}
DATASET=LARGE; TUNE_DS="--tune-dataset MEDIUM --tune-dataset atax=LARGE --tune-dataset gemver=LARGE --tune-dataset mvt=LARGE"
ALL=0-15; BUILD_CPUS=8-15; BUILD_JOBS=8; WORK_CPUS=0-7; WORK_JOBS=8; STREAMS=0,1:2,3:4,5:6,7:8,9:10,11:12,13:14,15
EVALS=24; LIMIT=35; CONFIRM=5; WORK_ARGS="--max-evals 13"  # the workers' budget is work, not time: the seed + 2 steps of 6
if [ -n "${QUICK:-}" ]; then  # a test of this script on a 2-core machine: 2 kernels, small sizes, tiny budgets
    KERNELS=atax,jacobi-2d; MARCH=native; DATASET=SMALL; TUNE_DS="--tune-dataset MINI"; ALL=0-1; BUILD_CPUS=0-1
    BUILD_JOBS=2; WORK_CPUS=0-1; WORK_JOBS=2; STREAMS=0,1; EVALS=3; LIMIT=10; CONFIRM=2; WORK_ARGS="--quick --kernels gemm"
fi
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
log() { echo "[device_tune $(date -u +%H:%M:%S)] $*" >&2; }
[ -d "$PB/utilities" ] || { log "no PolyBench at $PB (pass its directory as the second argument)"; exit 2; }
NCPU=$(nproc)
[ "$NCPU" -ge 16 ] || [ -n "${QUICK:-}" ] || log "warning: $NCPU CPUs; the CPU sets below assume 16"
log "PolyBench: $PB; kernels: $KERNELS; work: $WORK; out: $OUT"

collect() {  # the results, without the binaries
    cp "$WORK"/*.log "$WORK"/*.json "$WORK"/*.md "$OUT"/ 2>/dev/null
    [ -d "$WORK/workers.reports" ] && cp -r "$WORK/workers.reports" "$OUT"/
    if [ -d "$WORK/pb" ]; then
        mkdir -p "$OUT/pb"
        cp "$WORK"/pb/*.json "$OUT/pb/" 2>/dev/null
        (cd "$WORK/pb" && find . -mindepth 2 -maxdepth 2 \( -name '*.tune-*.json' -o -name '*.tune-*.c' \
            -o -name '*.seed.c' -o -name '*.tuned.c' -o -name '*.tuned-tiles.c' \) -exec cp --parents {} "$OUT/pb" \;)
    fi
}

PHASES=${PHASES:-1 2 3 4}
has() { case " $PHASES " in *" $1 "*) return 0;; esac; return 1; }

if has 1; then
    log "phase 1: tune (20 tunes on 8 CPU pairs, each budget $EVALS evaluations or $LIMIT s of search; <= 185 s)"
    timeout 200 $PY benchmarks/polybench/run.py tune --polybench "$PB" --out "$WORK/pb" --kernels "$KERNELS" \
        $TUNE_DS --max-evals $EVALS --time-limit $LIMIT --tune-timeout 90 --deadline 180 --cpus $ALL --threads 2 \
        --march "$MARCH" --final-dataset $DATASET --confirm-runs $CONFIRM 2>&1 | tee "$WORK/tune.log"
    collect
    [ -f "$WORK/pb/tune.json" ] || { log "phase 1 wrote no tune.json"; exit 1; }
fi

if has 2; then
    log "phase 2: build (CPUs $BUILD_CPUS) beside the workers benchmark (CPUs $WORK_CPUS; <= 215 s)"
    ( taskset -c $BUILD_CPUS timeout 210 $PY benchmarks/polybench/run.py build --polybench "$PB" --out "$WORK/pb" \
        --tuned "$WORK/pb/tune.json" --dataset $DATASET --march "$MARCH" --check-march "$MARCH" --jobs $BUILD_JOBS \
        --no-clang > "$WORK/build.log" 2>&1; echo "build exit $?" >> "$WORK/build.log" ) &
    BUILD=$!
    timeout 215 $PY benchmarks/workers.py --kernels gemm,jacobi-2d,fdtd-2d --cpus $WORK_CPUS --threads 2 --jobs $WORK_JOBS \
        $WORK_ARGS --timeout 60 --deadline 200 --cflags "-O3 -march=$MARCH" \
        --out "$WORK/workers.json" --markdown-out "$WORK/workers.md" 2>&1 | tee "$WORK/workers.log"
    wait $BUILD
    tail -n 15 "$WORK/build.log" >&2
    collect
fi

if has 3; then
    log "phase 3: run (LARGE, 8 streams of 2 CPUs, 3 rounds per kernel, no round starts after 75 s; <= 130 s)"
    timeout 130 $PY benchmarks/polybench/run.py run --dir "$WORK/pb" --rounds 3 --time-limit 75 --timeout 45 \
        --cpus $STREAMS --out "$WORK/results.json" > "$WORK/run.log" 2>&1
    tail -n 3 "$WORK/run.log" >&2
    collect
fi

if has 4; then
    log "phase 4: tables"
    $PY benchmarks/polybench/run.py table "$WORK/results.json" --markdown-out "$WORK/polybench.md"
    [ -f "$WORK/workers.md" ] && cat "$WORK/workers.md"
    collect
    log "done: $OUT/polybench.md, $OUT/workers.md (raw: results.json, pb/tune.json, workers.json; logs *.log)"
fi
