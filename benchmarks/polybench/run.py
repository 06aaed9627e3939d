#!/usr/bin/env python3
"""PolyBench/C 4.2.1, as distributed, side by side: gcc -O3, polytune optimize and tune, clang -O3 and Polly.

Phases, so that the timing can run on another, quieter machine that has no compiler and no islpy:

    python benchmarks/polybench/run.py tune --polybench /work/polybench --out pb --kernels atax,syrk
        [--tune-dataset MEDIUM] [--tune-dataset atax=LARGE] [--max-evals 30] [--time-limit S] [--cpus 0-15]
    python benchmarks/polybench/run.py pluto --polybench /work/polybench --out pluto_src [--polycc PATH]
    python benchmarks/polybench/run.py build --polybench /work/polybench --out pb [--kernels gemm,atax]
        [--dataset LARGE] [--threads 2] [--march x86-64-v4] [--variant NAME=FLAGS] [--check-dataset MINI]
        [--tuned pb/tune.json] [--pluto pluto_src]
    python benchmarks/polybench/run.py run --dir pb [--rounds 3] [--cpus 0,1 | 0,1:2,3:...] [--out results.json]
    python benchmarks/polybench/run.py table results.json [--markdown-out FILE]

`tune` (optional; on the machine that times, since tuning measures) runs `polytune tune` twice per kernel with
the same budget, both from the Pluto-default seed: the schedule space and tile sizes only, each pinned to its
own CPU pair, in parallel over the pairs; `build --tuned` then adds the variants seed, tuned and tuned-tiles,
re-emitted at the timed dataset with the flags the tunes found, and `table` their ratios.

`pluto` (where Pluto's polycc is installed: benchmarks/pluto/build_pluto.sh) runs `polycc --tile --parallel`,
issue 17's reference flags, on every kernel (clan; `--pet` added only where clan fails, then once per dataset,
since pet sees the sizes preprocessed) and writes the generated sources and pluto.json (per kernel: ok or why
polycc failed); `build --pluto` adds them as the variant `pluto`, compiled and checked as polytune's are.

`build` writes statically linked binaries (libgomp included; PolyBench's polybench.c, the harness, is compiled
without OpenMP in every variant, as in the original's) and DIR/manifest.json; for each kernel it also
builds every variant at a small dataset with -DPOLYBENCH_DUMP_ARRAYS and compares the dumps with the
original's: polytune and Pluto keep each element's floating-point order, so their dumps must be identical
(built with -ffp-contract=off); clang and Polly may differ in rounding and are compared with a tolerance. `run` needs
only python3's standard library and taskset: every binary once per round, in a fresh shuffled order each
round, pinned to --cpus with OMP_NUM_THREADS = their number; the time is what PolyBench prints with
-DPOLYBENCH_TIME (the kernel only). `table` prints speedups over the gcc build, the measured pluto column where
the build has one, and Pluto's figures quoted from issue 17 in a column of their own. Nothing of PolyBench or
Pluto is copied into this repository.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import platform
import queue
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Pluto master `--tile --parallel`, speedup over gcc -O3 -march=x86-64-v4, LARGE, 2 threads: issue 17's
# side-by-side measurement on an idle 16-core Xeon (the reference; Pluto cannot be installed here).
PLUTO_REFERENCE = {
    "gemm": 0.68, "2mm": 4.07, "3mm": 5.65, "syrk": 2.27, "syr2k": 7.46, "trmm": 46.8, "lu": 4.69,
    "seidel-2d": 2.42, "symm": 0.96, "heat-3d": 0.62, "gemver": 1.60, "atax": 2.20, "mvt": 1.57,
    "doitgen": 4.98, "cholesky": 4.92, "jacobi-2d": 1.34, "fdtd-2d": 1.69, "covariance": 60.2,
    "correlation": 63.7, "gramschmidt": 20.7,
}
# polytune optimize in the same measurement, before the schedule work of issue 17.
POLYTUNE_ISSUE17 = {
    "gemm": 5.02, "2mm": 23.8, "3mm": 17.1, "syrk": 1.38, "syr2k": 6.41, "trmm": 30.7, "lu": 21.9,
    "seidel-2d": 2.42, "symm": 2.88, "heat-3d": 1.64, "gemver": 1.42, "atax": 0.69, "mvt": 4.27,
    "doitgen": 1.59, "cholesky": 2.40, "jacobi-2d": 1.84, "fdtd-2d": 3.24, "covariance": 58.2,
    "correlation": 73.5, "gramschmidt": 1.89,
}
BASELINE = "gcc"
DATASETS = ("MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE")
DUMP_BEGIN = "==BEGIN DUMP_ARRAYS=="


# ---------------------------------------------------------------------------------------------- build
def find_kernels(polybench: str) -> dict[str, str]:
    """kernel name -> its .c file: every directory with a <dirname>.c (30 in PolyBench/C 4.2.1)."""
    out = {}
    for root, _dirs, files in os.walk(polybench):
        name = os.path.basename(root)
        if name + ".c" in files and "utilities" not in root.split(os.sep):
            out[name] = os.path.join(root, name + ".c")
    return dict(sorted(out.items()))


def sh(cmd: list[str], env: dict | None = None, timeout: float = 900, cwd: str | None = None) -> tuple[int, str]:
    """Exit status and the end of the output of *cmd*; at the timeout its whole process group is killed (killing
    gcc alone would leave its cc1 running)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return 124, f"timed out after {timeout:.0f} s: {shlex.join(cmd)}"
    return p.returncode, (out + err)[-4000:]


def checkout_pythonpath() -> str:
    """PYTHONPATH for a polytune subprocess: this checkout first, then the caller's (packages carried elsewhere,
    a device's wheels)."""
    return os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p)


def polly_flags(clang: str) -> list[str] | None:
    """The flags that make *clang* run Polly: built in (Debian's clang links Polly in; loading the plugin
    as well then fails with 'registered more than once'), else the plugin of the same LLVM."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("double a[64][64];\nint main(void){for(int i=0;i<64;i++)for(int j=0;j<64;j++)"
                    "a[i][j]=i+j;return (int)a[3][4];}\n")
        base = ["-mllvm", "-polly", "-mllvm", "-polly-parallel"]
        candidates = [base]
        real = os.path.realpath(shutil.which(clang) or clang)
        libdir = os.path.join(os.path.dirname(os.path.dirname(real)), "lib")
        for so in ("LLVMPolly.so",):
            if os.path.exists(os.path.join(libdir, so)):
                candidates.append([f"-fplugin={os.path.join(libdir, so)}"] + base)
        for flags in candidates:
            rc, _ = sh([clang, "-O3", *flags, src, "-o", os.path.join(d, "t")])
            if rc == 0:
                return flags
    return None


def find_clang() -> str | None:
    for c in ["clang"] + [f"clang-{v}" for v in range(22, 10, -1)]:
        if shutil.which(c):
            return c
    return None


class Builder:
    def __init__(self, args):
        self.args = args
        self.pb = os.path.abspath(args.polybench)
        self.util = os.path.join(self.pb, "utilities")
        self.out = os.path.abspath(args.out)
        self.clang = None if args.no_clang else find_clang()
        self.polly = polly_flags(self.clang) if self.clang and not args.no_polly else None
        if args.no_polytune and args.variant:
            raise SystemExit("--no-polytune with --variant: choose one")
        self.variants = {} if args.no_polytune else parse_variants(args.variant)
        self.roots = dict(x.split("=", 1) for x in args.variant_root)  # variant -> polytune checkout
        self.tune = load_tune(args.tuned) if args.tuned else None
        self.tuned = self.tune["kernels"] if self.tune else {}  # kernel -> variant -> its tune record
        self.pluto_dir = os.path.abspath(args.pluto) if args.pluto else None
        if self.pluto_dir and not os.path.isfile(os.path.join(self.pluto_dir, "pluto.json")):
            raise SystemExit(f"--pluto {args.pluto}: no pluto.json there (`run.py pluto` writes it)")
        self.pluto = load_pluto(self.pluto_dir) if self.pluto_dir else None  # the pluto phase's pluto.json
        self.static = static_link_works()
        if not self.static:
            print("static linking with libgomp fails here: every variant is linked dynamically", file=sys.stderr)

    def tuned_variants(self) -> list[str]:
        """`seed` and the tuned variants, when the build takes a tune phase's results."""
        return ["seed", *TUNE_SPACES] if self.tune else []

    def tuned_description(self, variant: str) -> str:
        if variant == "seed":
            return shlex.join(SEED_FLAGS)
        t = self.tune
        other = {k: d for k, d in t["datasets"].items() if d != t["dataset"]}
        schedule = TUNE_SPACES[variant] == "schedule"
        starts = "the seed" + (", optimize's default and --schedule outer" if schedule else "")
        return (f"per kernel: the best of `polytune tune --space {TUNE_SPACES[variant]}` from {starts} (kept only if "
                f"faster than the seed and the default when its program is run again), tuned at "
                f"{t['dataset']}" + (f" ({', '.join(f'{k}: {d}' for k, d in other.items())})" if other else "")
                + f", budget max_evals={t['max_evals']} time_limit={t['time_limit']}, {t['threads']} threads")

    def variants_for(self, name: str) -> dict[str, list[str]]:
        """The polytune variants of kernel *name*: --variant's, then seed and the tuned ones it has flags for."""
        out = dict(self.variants)
        if self.tune:
            out["seed"] = list(SEED_FLAGS)
            for v in TUNE_SPACES:
                rec = self.tuned.get(name, {}).get(v)
                if rec and rec.get("flags") is not None:
                    out[v] = list(rec["flags"])
        return out

    def includes(self, kdir: str) -> list[str]:
        return ["-I", self.util, "-I", kdir]

    def optimize(self, src: str, dst: str, flags: list[str], dataset: str, extra_defs: list[str],
                 variant: str = "") -> tuple[int, str, float]:
        kdir = os.path.dirname(src)
        env = dict(os.environ)
        root = os.path.abspath(self.roots.get(variant, REPO))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "polytune", "optimize", src, "-o", dst, *self.includes(kdir),
               f"-D{dataset}_DATASET", *extra_defs, *flags, "--report", dst + ".report.json"]
        t0 = time.perf_counter()
        rc, log = sh(cmd, env=env, cwd=root)  # `python -m` puts the working directory first on sys.path
        return rc, log, time.perf_counter() - t0

    def compile(self, cc: str, flags: list[str], src: str, kdir: str, exe: str, defs: list[str]) -> tuple[int, str]:
        util = os.path.join(self.util, "polybench.c")
        if "-fopenmp" in flags:
            # The harness is compiled as for the original, without OpenMP: with it, polybench.c's cache flush
            # is a parallel region right before the timer starts, whose worker then spins (libgomp's
            # GOMP_SPINCOUNT) through the timed kernel beside it; the original's flush is serial, and a
            # kernel's own first parallel region starts the threads inside the timer, as Polly's does.
            obj = exe + ".polybench.o"
            rc, log = sh([cc, *[f for f in flags if f not in ("-fopenmp", "-static")], *self.includes(kdir), "-c",
                          util, *[d for d in defs if not d.startswith("-l")], "-o", obj])
            if rc != 0:
                return rc, log
            util = obj
        cmd = [cc, *flags, *self.includes(kdir), util, src, *defs, "-o", exe, "-lm"]
        return sh(cmd)

    def build_kernel(self, name: str, src: str) -> dict:
        a = self.args
        kdir = os.path.dirname(src)
        kout = os.path.join(self.out, name)
        os.makedirs(kout, exist_ok=True)
        defs = [f"-D{a.dataset}_DATASET", "-DPOLYBENCH_TIME"]
        static = ["-static"] if self.static else []
        rec: dict = {"kernel": name, "source": os.path.relpath(src, self.pb), "binaries": {}, "errors": {},
                     "optimize_s": {}, "check": {}}
        if self.tune:
            rec["tune"] = self.tuned.get(name, {})
            for v in TUNE_SPACES:
                if "flags" not in rec["tune"].get(v, {}):
                    rec["errors"][v] = "tune: " + rec["tune"].get(v, {}).get("error", "not tuned")
        gcc_flags = ["-O3", f"-march={a.march}"]
        omp = ["-fopenmp"]
        jobs: list[tuple[str, str, list[str], str]] = [("gcc", "gcc", gcc_flags + static, src)]
        for v, flags in self.variants_for(name).items():
            dst = os.path.join(kout, f"{name}.{v}.c")
            rc, log, secs = self.optimize(src, dst, flags, a.dataset, ["-DPOLYBENCH_TIME"], v)
            rec["optimize_s"][v] = round(secs, 3)
            if rc != 0:
                rec["errors"][v] = "optimize: " + log.strip().splitlines()[-1] if log.strip() else f"rc {rc}"
                continue
            jobs.append((v, "gcc", gcc_flags + omp + static, dst))
        if self.pluto:
            prec = self.pluto["kernels"].get(name)
            if prec is None:
                rec["errors"]["pluto"] = "polycc: not run on this kernel"
            elif prec["status"] != "ok":
                rec["errors"]["pluto"] = f"polycc failed: {prec.get('error', '')}"
            elif not os.path.exists(psrc := pluto_source(self.pluto_dir, name, a.dataset)):
                rec["errors"]["pluto"] = f"no Pluto source at {a.dataset} (run.py pluto --datasets)"
            else:
                rec["pluto"] = {k: prec[k] for k in ("frontend", "flags") if k in prec}
                jobs.append(("pluto", "gcc", gcc_flags + omp + static, psrc))
        if self.clang:
            jobs.append(("clang", self.clang, ["-O3", f"-march={a.march}"] + static, src))
            if self.polly:
                jobs.append(("polly", self.clang, ["-O3", f"-march={a.march}", *self.polly] + static +
                             ["-lgomp", "-lpthread"], src))
        for v, cc, flags, s in jobs:
            exe = os.path.join(kout, f"{name}.{v}")
            # -lgomp and -lpthread go after the sources (static link order)
            pre = [f for f in flags if f not in ("-lgomp", "-lpthread")]
            post = [f for f in flags if f in ("-lgomp", "-lpthread")]
            rc, log = self.compile(cc, pre, s, kdir, exe, defs + post)
            if rc != 0:
                rec["errors"][v] = "compile: " + " | ".join(log.strip().splitlines()[-3:])
            else:
                if a.strip:
                    sh(["strip", exe])
                rec["binaries"][v] = os.path.relpath(exe, self.out)
        if a.check_dataset:
            rec["check"] = self.check(name, src, kdir, kout)
        return rec

    def check(self, name: str, src: str, kdir: str, kout: str) -> dict:
        """Dumps of every variant at the small dataset against the original's (gcc -O2 -ffp-contract=off)."""
        a = self.args
        cdir = os.path.join(kout, "check")
        os.makedirs(cdir, exist_ok=True)
        defs = [f"-D{a.check_dataset}_DATASET", "-DPOLYBENCH_DUMP_ARRAYS"]
        exact = ["-ffp-contract=off"]
        ref_exe = os.path.join(cdir, "ref")
        rc, log = self.compile("gcc", ["-O2", *exact], src, kdir, ref_exe, defs)
        if rc != 0:
            return {"ref": "compile failed: " + log.strip().splitlines()[-1]}
        ref = dump_of(ref_exe, a.threads)
        if ref is None:
            return {"ref": "run failed"}
        out = {}
        builds: list[tuple[str, str, list[str], str, bool]] = []
        for v, flags in self.variants_for(name).items():
            dst = os.path.join(cdir, f"{name}.{v}.c")
            rc, log, _ = self.optimize(src, dst, flags, a.check_dataset, ["-DPOLYBENCH_DUMP_ARRAYS"], v)
            if rc != 0:
                out[v] = "optimize failed: " + (log.strip().splitlines() or [""])[-1]
                continue
            builds.append((v, "gcc", ["-O3", f"-march={a.check_march}", "-fopenmp", *exact], dst, True))
        if self.pluto and self.pluto["kernels"].get(name, {}).get("status") == "ok":
            # Pluto's transformations respect every dependence, the floating-point ones of reductions included:
            # each element's order of operations is the original's, so its dump must be identical too
            psrc = pluto_source(self.pluto_dir, name, a.check_dataset)
            if os.path.exists(psrc):
                builds.append(("pluto", "gcc", ["-O3", f"-march={a.check_march}", "-fopenmp", *exact], psrc, True))
            else:
                out["pluto"] = f"no Pluto source at {a.check_dataset}"
        if self.clang:
            builds.append(("clang", self.clang, ["-O3", f"-march={a.check_march}"], src, False))
            if self.polly:
                builds.append(("polly", self.clang, ["-O3", f"-march={a.check_march}", *self.polly], src, False))
        for v, cc, flags, s, must_equal in builds:
            exe = os.path.join(cdir, v)
            rc, log = self.compile(cc, flags, s, kdir, exe, defs + (["-lgomp"] if v == "polly" else []))
            if rc != 0:
                out[v] = "compile failed: " + (log.strip().splitlines() or [""])[-1]
                continue
            got = dump_of(exe, a.threads)
            if got is None:
                out[v] = "run failed"
            elif got == ref:
                out[v] = "identical"
            elif not must_equal and close(got, ref):
                out[v] = "within tolerance"
            else:
                out[v] = "DIFFERENT"
        return out


def load_pluto(pluto_dir: str) -> dict:
    """The pluto phase's record of a source tree (DIR/pluto.json)."""
    with open(os.path.join(pluto_dir, "pluto.json")) as f:
        return json.load(f)


def load_tune(path: str) -> dict:
    """A tune phase's tune.json."""
    with open(path) as f:
        return json.load(f)


def static_link_works() -> bool:
    """Whether gcc links an OpenMP program statically here (it needs libc.a and libgomp.a)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        return sh(["gcc", "-fopenmp", "-static", src, "-o", os.path.join(d, "t")])[0] == 0


def dump_of(exe: str, threads: int) -> str | None:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0 or DUMP_BEGIN not in p.stderr:
        return None
    return p.stderr


def close(a: str, b: str, rtol: float = 1e-6) -> bool:
    """Dumps equal up to rounding: same words, numbers within rtol or one unit of the printed last digit."""
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb):
        return False
    for x, y in zip(wa, wb):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if not (abs(fx - fy) <= rtol * max(abs(fx), abs(fy)) + 0.0101):
            return False
    return True


def parse_variants(specs: list[str]) -> dict[str, list[str]]:
    """--variant NAME=FLAGS (polytune optimize flags); default: one variant, polytune, with no flags."""
    if not specs:
        return {"polytune": []}
    out = {}
    for s in specs:
        name, _, flags = s.partition("=")
        if not re.fullmatch(r"[A-Za-z][\w-]*", name) or name in ("gcc", "clang", "polly", "pluto"):
            raise SystemExit(f"--variant {s!r}: NAME=FLAGS with a new name (letters, digits, - and _)")
        out[name] = shlex.split(flags)
    return out


def select_kernels(polybench: str, spec: str | None) -> dict[str, str] | None:
    """The kernels named by *spec* (comma-separated; None: all), or None after saying which are unknown."""
    kernels = find_kernels(polybench)
    if not kernels:
        print(f"{polybench}: no PolyBench kernels there (a PolyBench/C 4.2.1 tree: utilities/, linear-algebra/, ...)",
              file=sys.stderr)
        return None
    if not spec:
        return kernels
    wanted = spec.split(",")
    missing = [k for k in wanted if k not in kernels]
    if missing:
        print(f"unknown kernels: {', '.join(missing)} (have: {', '.join(kernels)})", file=sys.stderr)
        return None
    return {k: kernels[k] for k in wanted}


def cmd_build(args) -> int:
    b = Builder(args)
    kernels = select_kernels(b.pb, args.kernels or (",".join(b.tune["datasets"]) if b.tune else None))
    if kernels is None:
        return 2
    os.makedirs(b.out, exist_ok=True)
    print(f"clang: {b.clang or 'none'}; polly: {' '.join(b.polly) if b.polly else 'none'}", file=sys.stderr)
    records = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(b.build_kernel, k, s): k for k, s in kernels.items()}
        for f in concurrent.futures.as_completed(futs):
            rec = f.result()
            records.append(rec)
            bad = {v: c for v, c in rec["check"].items() if c not in ("identical", "within tolerance")}
            print(f"{rec['kernel']}: built {', '.join(rec['binaries'])}"
                  + (f"; errors {rec['errors']}" if rec["errors"] else "")
                  + (f"; check {bad}" if bad else ""), file=sys.stderr)
    records.sort(key=lambda r: r["kernel"])
    manifest = {"dataset": args.dataset, "threads": args.threads, "march": args.march,
                "variants": ["gcc", *b.variants, *b.tuned_variants(), *(["pluto"] if b.pluto else []),
                             *(["clang"] if b.clang else []), *(["polly"] if b.polly else [])],
                "polytune_variants": {**{v: shlex.join(f) for v, f in b.variants.items()},
                                      **{v: b.tuned_description(v) for v in b.tuned_variants()}},
                "static": b.static,
                **({"pluto": {"dir": b.pluto_dir, "polycc": b.pluto["polycc"], "flags": shlex.join(b.pluto["flags"]),
                              "made_at": b.pluto["made_at"]}} if b.pluto else {}),
                "clang": b.clang, "polly_flags": b.polly, "built_on": platform.node(),
                "built_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "kernels": records}
    with open(os.path.join(b.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    wrong = [(r["kernel"], v) for r in records for v, c in r["check"].items() if c == "DIFFERENT"]
    if wrong:
        print("WRONG RESULTS: " + ", ".join(f"{k}/{v}" for k, v in wrong), file=sys.stderr)
    return 1 if wrong else 0


# ----------------------------------------------------------------------------------------------- tune
# The variants the tune phase adds to `build`, and the `polytune tune --space` each comes from. Both tunes start
# from the Pluto-default seed (`--schedule pluto`, every tile 32), which is built as the variant `seed`.
TUNE_SPACES = {"tuned": "schedule", "tuned-tiles": "tiles"}
SEED_FLAGS = ["--schedule", "pluto"]
TUNE_RATIOS = (("tuned", "seed"), ("tuned", "tuned-tiles"), ("tuned", "polytune"))  # the table's ratio columns
# (polytune: what `optimize` emits without measuring)
PROGRAM_GAIN = ("runs", "max_runs", "compiled", "median_ms", "kept", "holds", "search_gain", "program_gain",
               "error")  # of a tune report (runs: the re-run's rounds that ran, of at most max_runs)


def core_groups(spec: str, size: int) -> list[str]:
    """The CPUs of *spec* (taskset syntax) cut into consecutive groups of *size*, each as a taskset list."""
    cpus = cpu_list(spec)
    return [",".join(map(str, cpus[i:i + size])) for i in range(0, len(cpus) - size + 1, size)]


def tune_datasets(specs: list[str]) -> tuple[str, dict[str, str]]:
    """--tune-dataset MEDIUM (every kernel) and KERNEL=LARGE (that kernel): the default and the exceptions."""
    default, per = "MEDIUM", {}
    for spec in specs:
        k, _, ds = spec.rpartition("=")
        if ds not in DATASETS:
            raise SystemExit(f"--tune-dataset {spec!r}: a dataset ({', '.join(DATASETS)}), or KERNEL=DATASET")
        if k:
            per[k] = ds
        else:
            default = ds
    return default, per


def variant_flags(name: str, report: dict) -> list[str]:
    """The `polytune optimize` flags that emit the best program of a tune report: the schedule space's
    --tile-sizes and --choice, or the tile-only tune's sizes under the Pluto schedule it tuned."""
    build = report.get("best_build") or {}
    if build.get("optimize_args"):
        return list(build["optimize_args"])
    sizes = build.get("tile_sizes") or []
    return SEED_FLAGS + (["--tile-sizes", ",".join(map(str, sizes))] if sizes else [])


def tune_one(args, pb: str, name: str, src: str, variant: str, dataset: str, cpus: str, timeout: float) -> dict:
    """One `polytune tune` run, pinned to *cpus* with OMP_NUM_THREADS = their number; its record for tune.json."""
    util, kdir = os.path.join(pb, "utilities"), os.path.dirname(src)
    kout = os.path.join(os.path.abspath(args.out), name)
    os.makedirs(kout, exist_ok=True)
    stem = os.path.join(kout, f"{name}.tune-{variant}")  # build writes {name}.{variant}.c, at the timed dataset
    budget = (["--max-evals", str(args.max_evals)] if args.max_evals else []) + \
        (["--time-limit", str(args.time_limit)] if args.time_limit else [])
    cmd = [sys.executable, "-m", "polytune", "tune", src, os.path.join(util, "polybench.c"), "-I", util, "-I", kdir,
           f"-D{dataset}_DATASET", "-DPOLYBENCH_TIME", "--space", TUNE_SPACES[variant], "--schedule", "pluto",
           "--seed", "pluto", "--threads", str(len(cpu_list(cpus))), "--jobs", str(args.tune_jobs),
           f"--cflags=-O3 -march={args.march}", "--cache", stem + ".sqlite", *budget,
           "--confirm-runs", str(args.confirm_runs),
           *(["--confirm-define", f"{args.final_dataset}_DATASET", "--confirm-define", "POLYBENCH_TIME"]
             if args.final_dataset and args.final_dataset != dataset else []),
           "-o", stem + ".c", "--report", stem + ".json", "--force"]
    # its own temporary directory per core group: the tuner's machine-wide timing lock (a file there) then
    # serializes the timings of one core group, not those of every tune on the machine
    tmp = os.path.join(os.path.abspath(args.out), "tmp", "cpus-" + cpus.replace(",", "-"))
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(len(cpu_list(cpus))), TMPDIR=tmp,
               PYTHONPATH=checkout_pythonpath())
    taskset = ["taskset", "-c", cpus] if shutil.which("taskset") else []
    if os.path.exists(stem + ".json"):
        os.remove(stem + ".json")  # an earlier run's report; its measurements stay in the cache (a rerun resumes)
    t0 = time.perf_counter()
    rc, log = sh(taskset + cmd, env=env, cwd=REPO, timeout=timeout)
    rec: dict = {"space": TUNE_SPACES[variant], "dataset": dataset, "cpus": cpus, "rc": rc,
                 "wall_s": round(time.perf_counter() - t0, 1), "command": shlex.join(cmd)}
    try:
        with open(stem + ".json") as f:
            report = json.load(f)
    except (OSError, ValueError):
        report = None
    if rc != 0 or report is None or not report.get("best"):
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1]
        return rec
    rec.update({"flags": variant_flags(variant, report), "seed_s": (report.get("seed") or {}).get("median"),
                "best_s": report["best"]["median"], "speedup_over_seed": report.get("speedup_over_seed"),
                "evals": report.get("evals"), "search_time": report.get("search_time"),
                "stop_reason": report.get("stop_reason"), "best_build": report.get("best_build"),
                "default_s": ((report.get("starts") or {}).get("default") or {}).get("median"),
                "speedup_over_default": report.get("speedup_over_default"), "climbed_from": report.get("climbed_from"),
                "program_gain": {k: v for k, v in (report.get("program_gain") or {}).items() if k in PROGRAM_GAIN},
                "tuned_c": os.path.relpath(stem + ".c", os.path.abspath(args.out))})
    return rec


def cmd_tune(args) -> int:
    """Both tunes of every kernel, in parallel over core groups; OUT/tune.json after each one finishes."""
    pb = os.path.abspath(args.polybench)
    kernels = select_kernels(pb, args.kernels)
    if kernels is None:
        return 2
    default, per = tune_datasets(args.tune_dataset)
    groups = core_groups(args.cpus, args.threads)
    if not groups:
        print(f"--cpus {args.cpus}: fewer than {args.threads} CPUs", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "tune.json")
    state = {"dataset": default, "datasets": {k: per.get(k, default) for k in kernels}, "threads": args.threads,
             "march": args.march, "max_evals": args.max_evals, "time_limit": args.time_limit,
             "seed_flags": shlex.join(SEED_FLAGS), "core_groups": groups,
             "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "kernels": {}}
    free: queue.Queue = queue.Queue()
    for g in groups:
        free.put(g)
    lock = threading.Lock()
    t_start = time.perf_counter()

    def job(name: str, variant: str) -> None:
        cpus = free.get()
        try:
            left = args.deadline - (time.perf_counter() - t_start) if args.deadline else args.tune_timeout
            if left < 10:
                rec = {"space": TUNE_SPACES[variant], "error": f"not started: --deadline {args.deadline} s"}
            else:
                print(f"tune {name} {variant}: started on cpus {cpus}", file=sys.stderr, flush=True)
                rec = tune_one(args, pb, name, kernels[name], variant, per.get(name, default), cpus,
                               min(args.tune_timeout, left))
        finally:
            free.put(cpus)
        with lock:
            state["kernels"].setdefault(name, {})[variant] = rec
            state["seconds"] = round(time.perf_counter() - t_start, 1)
            with open(path + ".tmp", "w") as f:
                json.dump(state, f, indent=1)
            os.replace(path + ".tmp", path)
            done = sum(len(v) for v in state["kernels"].values())
            what = rec.get("error") or (f"{rec['speedup_over_seed']:.2f}x over the seed in {rec['evals']} evals "
                                        f"({rec['stop_reason']}): {shlex.join(rec['flags'])}")
        print(f"tune {name} {variant} [{done}/{2 * len(kernels)}, {rec.get('wall_s', 0):.0f} s]: {what}",
              file=sys.stderr, flush=True)

    # the two tunes of a kernel side by side, so that both meet the same neighbours
    order = [(k, v) for k in kernels for v in TUNE_SPACES]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(groups)) as ex:
        for f in [ex.submit(job, k, v) for k, v in order]:
            f.result()
    failed = [f"{k}/{v}" for k, r in state["kernels"].items() for v, rec in r.items() if "error" in rec]
    print(f"wrote {path}" + (f"; failed: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------- pluto
# Pluto's polycc with issue 17's reference flags; the variant `pluto` of `build --pluto DIR` is its output.
PLUTO_FLAGS = ["--tile", "--parallel"]
PLUTO_DATASETS = ("MINI", "SMALL", "LARGE")  # --pet output is specialized to a dataset: these are emitted


def pluto_source(pluto_dir: str, name: str, dataset: str) -> str:
    """The Pluto source of kernel *name* at *dataset*: clan keeps PolyBench's size macros (one file for every
    dataset), pet sees them preprocessed (one file per dataset)."""
    per_dataset = os.path.join(pluto_dir, name, f"{name}.{dataset}.c")
    return per_dataset if os.path.exists(per_dataset) else os.path.join(pluto_dir, name, f"{name}.c")


def polycc_once(polycc: str, src: str, dst: str, flags: list[str], env: dict, timeout: float,
                prelude: str = "") -> str | None:
    """One polycc run, in a fresh working directory (polycc leaves .srcfilename, .outfilename and CLooG files
    in it), on *src* or, with a *prelude*, on a copy of it there that starts with those lines; None when it wrote a
    transformed *dst*, else why not."""
    with tempfile.TemporaryDirectory(prefix="polycc-") as work:
        with open(src) as f:
            original = prelude + f.read()
        if prelude:
            src = os.path.join(work, os.path.basename(src))
            with open(src, "w") as f:
                f.write(original)
        rc, log = sh([polycc, src, *flags, "-o", dst], env=env, timeout=timeout, cwd=work)
    if rc != 0 or not os.path.exists(dst):
        lines = [x for x in log.strip().splitlines() if x.strip()]
        why = next((x for x in lines if re.search(r"error|fail|abort|not|unsupported", x, re.I)), None)
        return f"rc {rc}: " + (why or (lines[-1] if lines else "no output")).strip()[:300]
    with open(dst) as f:
        text = f.read()
    if "#pragma scop" in text or text == original:  # polycc replaces each SCoP, pragmas included
        return "no transformed SCoP in the output"
    return None


def pluto_one(polycc: str, util: str, name: str, src: str, kout: str, datasets: list[str], timeout: float) -> dict:
    """polycc on one kernel: with clan (Pluto's default frontend), and with --pet only where clan fails."""
    os.makedirs(kout, exist_ok=True)
    for old in os.listdir(kout):
        if old.startswith(name + ".") and old.endswith(".c"):
            os.remove(os.path.join(kout, old))
    # pet parses the file with its includes; polycc gives it no -I, clang's driver reads CPATH
    env = dict(os.environ, CPATH=os.pathsep.join([util, os.path.dirname(src)]))
    t0 = time.perf_counter()
    rec: dict = {"flags": PLUTO_FLAGS, "frontend": "clan"}
    clan_error = polycc_once(polycc, src, os.path.join(kout, f"{name}.c"), PLUTO_FLAGS, env, timeout)
    if clan_error is None:
        rec.update(status="ok", sources={"*": f"{name}/{name}.c"})
    else:
        # pet preprocesses the file, and polycc gives it no -D: each dataset's output comes from a copy that
        # defines the dataset in its first lines (kept in the output, harmless under the same -D)
        rec.update(frontend="pet", clan_error=clan_error, flags=PLUTO_FLAGS + ["--pet"], sources={})
        for ds in datasets:
            dst = os.path.join(kout, f"{name}.{ds}.c")
            err = polycc_once(polycc, src, dst, PLUTO_FLAGS + ["--pet"], env, timeout,
                              prelude=f"#ifndef {ds}_DATASET\n#define {ds}_DATASET\n#endif\n")
            if err is not None:
                rec.update(status="polycc failed", error=f"clan: {clan_error}; pet at {ds}: {err}")
                break
            rec["sources"][ds] = f"{name}/{name}.{ds}.c"
        else:
            rec["status"] = "ok"
    rec["seconds"] = round(time.perf_counter() - t0, 1)
    return rec


def cmd_pluto(args) -> int:
    """polycc --tile --parallel on every kernel: OUT/<kernel>/<kernel>.c and OUT/pluto.json, for build --pluto."""
    pb = os.path.abspath(args.polybench)
    kernels = select_kernels(pb, args.kernels)
    if kernels is None:
        return 2
    polycc = args.polycc or shutil.which("polycc")
    if not polycc or not os.path.exists(polycc):
        print("polycc not found: give --polycc (benchmarks/pluto/build_pluto.sh builds it)", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    datasets = args.datasets.split(",")
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        print(f"--datasets: unknown {', '.join(unknown)} (have {', '.join(DATASETS)})", file=sys.stderr)
        return 2
    util = os.path.join(pb, "utilities")
    state = {"polycc": os.path.abspath(polycc), "flags": PLUTO_FLAGS, "datasets": datasets,
             "made_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "kernels": {}}
    try:  # a run on some kernels keeps the others' records of an earlier run with the same polycc
        earlier = load_pluto(out)
        if (earlier["polycc"], earlier["flags"]) == (state["polycc"], state["flags"]):
            state["kernels"] = {k: r for k, r in earlier["kernels"].items() if k not in kernels}
    except (OSError, ValueError, KeyError):
        pass
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(pluto_one, state["polycc"], util, k, s, os.path.join(out, k), datasets, args.timeout): k
                for k, s in kernels.items()}
        for f in concurrent.futures.as_completed(futs):
            k, rec = futs[f], f.result()
            state["kernels"][k] = rec
            print(f"pluto {k}: {rec['status']} ({rec['frontend']}, {rec['seconds']:.1f} s)"
                  + (f": {rec['error']}" if "error" in rec else ""), file=sys.stderr, flush=True)
    state["kernels"] = dict(sorted(state["kernels"].items()))
    with open(os.path.join(out, "pluto.json"), "w") as f:
        json.dump(state, f, indent=1)
    failed = [k for k, r in state["kernels"].items() if r["status"] != "ok"]
    pet = [k for k, r in state["kernels"].items() if r["frontend"] == "pet" and r["status"] == "ok"]
    print(f"wrote {out}/pluto.json: {len(state['kernels']) - len(failed)} of {len(state['kernels'])} ok"
          + (f"; with --pet: {', '.join(pet)}" if pet else "") + (f"; failed: {', '.join(failed)}" if failed else ""),
          file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------------------------ run
def parse_time(stdout: str) -> float | None:
    """PolyBench's POLYBENCH_TIME output: the kernel's seconds, printed alone on a line (or, in the
    programs of benchmarks/pluto, after `time:`)."""
    m = re.search(r"^time:\s*([0-9.eE+-]+)", stdout, re.M)
    if m:
        return float(m.group(1))
    for line in reversed(stdout.strip().splitlines()):
        try:
            return float(line.strip())
        except ValueError:
            continue
    return None


def cpu_list(spec: str) -> list[int]:
    """taskset's list syntax: 0,1 or 0-7,16-23."""
    return _identity().cpu_list(spec)


def run_binary(taskset: list[str], exe: str, env: dict, timeout: float) -> tuple[float | None, str | None]:
    """One timed run: PolyBench's printed kernel time, or why there is none."""
    try:
        p = subprocess.run(taskset + [exe], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout {timeout} s"
    t = parse_time(p.stdout) if p.returncode == 0 else None
    return t, None if t is not None else f"exit {p.returncode}: {p.stderr.strip()[-200:]}"


def cmd_run(args) -> int:
    """--cpus 0,1: every binary once per round over the whole suite. --cpus 0,1:2,3:...: one stream per CPU
    set, each taking the next kernel and running its rounds (its variants interleaved, shuffled per round)."""
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    streams = args.cpus.split(":")
    cpus = cpu_list(streams[0])
    jobs = [(r["kernel"], v, os.path.join(args.dir, p)) for r in manifest["kernels"]
            for v, p in r["binaries"].items() if not args.kernels or r["kernel"] in args.kernels.split(",")
            if not args.variants or v in args.variants.split(",")]
    have_taskset = bool(shutil.which("taskset"))
    if not have_taskset:
        print("warning: no taskset; runs are not pinned", file=sys.stderr)
    times: dict[str, dict[str, list[float]]] = {}
    errors: dict[str, dict[str, str]] = {}
    lock = threading.Lock()
    t_start = time.time()

    def over() -> bool:
        return bool(args.time_limit) and time.time() - t_start > args.time_limit

    def one_round(label: str, order: list, stream: str, rng: random.Random) -> None:
        env = dict(os.environ, OMP_NUM_THREADS=str(len(cpu_list(stream))), OMP_PROC_BIND="false")
        taskset = ["taskset", "-c", stream] if have_taskset else []
        order = order[:]
        rng.shuffle(order)
        for k, v, exe in order:
            if v in errors.get(k, {}):
                continue
            t, err = run_binary(taskset, exe, env, args.timeout)
            with lock:
                if err:
                    errors.setdefault(k, {})[v] = err
                else:
                    times.setdefault(k, {}).setdefault(v, []).append(t)
            print(f"{label} {k} {v}: {err or f'{t:.4f} s'}", file=sys.stderr, flush=True)

    if len(streams) == 1:
        rng = random.Random(args.seed)
        for r in range(args.rounds):
            if r and over():
                print(f"--time-limit {args.time_limit} s reached after {r} rounds", file=sys.stderr)
                break
            one_round(f"round {r + 1}/{args.rounds}", jobs, streams[0], rng)
            write_results(args, manifest, jobs, times, errors, cpus, t_start, r + 1)
    else:
        kernels: queue.Queue = queue.Queue()
        for k in dict.fromkeys(k for k, _, _ in jobs):
            kernels.put(k)

        def stream_worker(stream: str) -> None:
            while True:
                try:
                    k = kernels.get_nowait()
                except queue.Empty:
                    return
                rng = random.Random(f"{args.seed}/{k}")
                for r in range(args.rounds):
                    if over():
                        print(f"--time-limit {args.time_limit} s reached: {k} after {r} rounds", file=sys.stderr)
                        break
                    one_round(f"cpus {stream} round {r + 1}/{args.rounds}", [j for j in jobs if j[0] == k],
                              stream, rng)
                with lock:
                    write_results(args, manifest, jobs, times, errors, cpus, t_start, args.rounds)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(streams)) as ex:
            for f in [ex.submit(stream_worker, s) for s in streams]:
                f.result()
        write_results(args, manifest, jobs, times, errors, cpus, t_start, args.rounds)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def write_results(args, manifest: dict, jobs: list, times: dict, errors: dict, cpus: list[int], t_start: float,
                  rounds: int) -> None:
    """results.json after each round, or each kernel with streams (a run cut short keeps what it finished)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    result = {
        "dataset": manifest["dataset"], "march": manifest["march"], "cpus": args.cpus, "threads": len(cpus),
        "streams": len(args.cpus.split(":")),
        "rounds": rounds, "variants": manifest["variants"], "polytune_variants": manifest["polytune_variants"],
        **({"pluto": manifest["pluto"]} if manifest.get("pluto") else {}),
        "machine": platform.node(), "cpu": _cpu_model(), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                                 time.gmtime(t_start)),
        "seconds": round(time.time() - t_start, 1), "load_after": load,
        "kernels": {r["kernel"]: {"times": dict(times.get(r["kernel"], {})),
                                  "median": {v: statistics.median(ts) for v, ts in times.get(r["kernel"], {}).items()},
                                  "errors": {**r["errors"], **errors.get(r["kernel"], {})},
                                  "check": r["check"], **({"tune": r["tune"]} if "tune" in r else {})}
                    for r in manifest["kernels"] if r["kernel"] in {k for k, _, _ in jobs}},
    }
    with open(args.out + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(args.out + ".tmp", args.out)


def _identity():
    """polytune.workers.identity, loaded by path: `run` needs only the standard library (no islpy)."""
    import importlib.util

    if "_polytune_identity" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "_polytune_identity", os.path.join(REPO, "polytune", "workers", "identity.py"))
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # dataclasses look their module up in sys.modules
    return sys.modules["_polytune_identity"]


def _cpu_model() -> str:
    return _identity().cpu_model()


# ---------------------------------------------------------------------------------------------- table
def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def tune_notes(res: dict, ratio: dict[tuple[str, str], dict[str, float]]) -> list[str]:
    """Issue 17's tuning targets stated (tuned at least 1.3x over the seed as a geometric mean, never slower than
    tile-only tuning on the same budget), and what each tune found."""
    out = []
    over_seed, over_tiles = ratio.get(("tuned", "seed"), {}), ratio.get(("tuned", "tuned-tiles"), {})
    over_default = ratio.get(("tuned", "polytune"), {})
    if over_seed:
        g = geomean(list(over_seed.values()))
        out.append(f"- tuned over the seed: geometric mean {g:.2f}x over {len(over_seed)} kernels "
                   f"(issue 17's target: at least 1.3x): {'met' if g >= 1.3 else 'NOT met'}.")
    if over_tiles:
        slower = [f"{k} {x:.2f}x" for k, x in sorted(over_tiles.items()) if x < 1.0]
        g = geomean(list(over_tiles.values()))
        out.append(f"- tuned over tile-only tuning (same budget): geometric mean {g:.2f}x;"
                   f" slower on {len(slower)} of {len(over_tiles)}" + (f": {', '.join(slower)}" if slower else "")
                   + " (issue 17: never slower; differences within the noise of the rounds are not losses).")
    if over_default:
        slower = [f"{k} {x:.2f}x" for k, x in sorted(over_default.items()) if x < 1.0]
        out.append(f"- tuned over `optimize`'s default (polytune): geometric mean "
                   f"{geomean(list(over_default.values())):.2f}x; slower on {len(slower)} of {len(over_default)}"
                   + (f": {', '.join(slower)}" if slower else "") + " (the schedule space starts from the default).")
    for k, r in sorted(res["kernels"].items()):
        for v, rec in sorted(r.get("tune", {}).items()):
            if "flags" in rec:
                default = (f", {rec['speedup_over_default']:.2f}x over optimize's default"
                           if rec.get("speedup_over_default") else "")
                pg = rec.get("program_gain") or {}
                again = ("; re-run in the program: " + ", ".join(f"{a} {b:.4g} ms" for a, b in pg["median_ms"].items())
                         + f", kept the {pg['kept']}, {pg.get('runs')} rounds") if pg.get("median_ms") else ""
                out.append(f"- {k} {v}: `{shlex.join(rec['flags'])}`; at {rec['dataset']} the tuner measured "
                           f"{rec['speedup_over_seed']:.2f}x over the seed{default} in {rec['evals']} evaluations "
                           f"({rec['stop_reason']}, {rec['search_time']:.0f} s of search, "
                           f"{rec['wall_s']:.0f} s in all){again}")
    return out


def behind_line(v: str, mine: dict[str, float], theirs: dict[str, float], who: str) -> str:
    """'- v: more than 5% behind WHO on n of m: ...', over the kernels both have a speedup for."""
    both = [k for k in sorted(mine) if k in theirs]
    behind = [f"{k} {mine[k] / theirs[k]:.2f}x" for k in both if mine[k] < 0.95 * theirs[k]]
    return (f"- {v}: more than 5% behind {who} on {len(behind)} of {len(both)}"
            + (f": {', '.join(behind)}" if behind else "") + ".")


def cmd_table(args) -> int:
    with open(args.results) as f:
        res = json.load(f)
    variants = [v for v in res["variants"] if v != BASELINE]
    polytune = [v for v in res["polytune_variants"]]
    ratios = [(a, b) for a, b in TUNE_RATIOS if a in variants and b in variants]
    head = (["kernel", "gcc (s)"] + [f"{v}" for v in variants] + [f"{a}/{b}" for a, b in ratios]
            + ["Pluto (issue 17, quoted)"])
    streams = res.get("streams", 1)
    how = (f"{streams} concurrent streams (cpus {res['cpus']}: a kernel's variants interleaved in one stream)"
           if streams > 1 else f"cpus {res['cpus']}")
    lines = [f"PolyBench/C 4.2.1, {res['dataset']}, {res['threads']} threads ({how}), "
             f"-march={res['march']}, median of {res['rounds']} interleaved rounds, on {res['cpu']} "
             f"({res['started']}). Speedup over the original built with gcc -O3"
             + ("; pluto: Pluto's `polycc " + (res.get("pluto") or {}).get("flags", shlex.join(PLUTO_FLAGS))
                + "` output built with gcc -O3 -fopenmp, measured in this run" if "pluto" in variants else "")
             + "; Pluto (issue 17, quoted): issue 17's figures, not measured here."
             + (" a/b: speedup of variant a over variant b (time of b / time of a)." if ratios else ""),
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speed: dict[str, dict[str, float]] = {}
    ratio: dict[tuple[str, str], dict[str, float]] = {}
    for k, r in sorted(res["kernels"].items()):
        base = r["median"].get(BASELINE)
        row = [k, f"{base:.4f}" if base else "-"]
        for v in variants:
            t = r["median"].get(v)
            if base and t:
                speed.setdefault(v, {})[k] = base / t
                bad = any(str(c).startswith(("DIFF", "run failed")) for vv, c in r["check"].items() if vv == v)
                row.append(f"{base / t:.2f}" + (" (wrong)" if bad else ""))
            else:
                row.append("err" if v in r["errors"] else "-")
        for a, b in ratios:
            ta, tb = r["median"].get(a), r["median"].get(b)
            if ta and tb:
                ratio.setdefault((a, b), {})[k] = tb / ta
            row.append(f"{tb / ta:.2f}" if ta and tb else "-")
        ref = PLUTO_REFERENCE.get(k)
        row.append(f"{ref:.2f}" if ref else "")
        lines.append("| " + " | ".join(row) + " |")
    ref_kernels = [k for k in PLUTO_REFERENCE if k in res["kernels"]]
    for label, ks in (("geometric mean, all", sorted(res["kernels"])), ("geometric mean, issue 17's 20", ref_kernels)):
        row = [label, ""]
        for v in variants:
            xs = [speed.get(v, {}).get(k) for k in ks]
            row.append(f"**{geomean([x for x in xs if x]):.2f}**" + ("" if all(xs) else f" ({sum(map(bool, xs))})"))
        for a, b in ratios:
            xs = [ratio.get((a, b), {}).get(k) for k in ks]
            row.append(f"**{geomean([x for x in xs if x]):.2f}**" + ("" if all(xs) else f" ({sum(map(bool, xs))})")
                       if any(xs) else "")
        row.append(f"{geomean([PLUTO_REFERENCE[k] for k in ks if k in PLUTO_REFERENCE]):.2f}")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for v in polytune:
        mine = speed.get(v, {})
        if "pluto" in speed:
            lines.append(behind_line(v, mine, speed["pluto"], "Pluto (measured)"))
        behind_pluto = [f"{k} {mine[k] / PLUTO_REFERENCE[k]:.2f}x of Pluto" for k in ref_kernels
                        if k in mine and mine[k] < 0.95 * PLUTO_REFERENCE[k]]
        behind_polly = [f"{k} {mine[k] / speed['polly'][k]:.2f}x of Polly" for k in sorted(mine)
                        if k in speed.get("polly", {}) and mine[k] < speed["polly"][k]]
        slower = [f"{k} {mine[k]:.2f}x" for k in sorted(mine) if mine[k] < 1.0]
        lines.append(f"- {v}: more than 5% behind Pluto's issue-17 figure on {len(behind_pluto)} of {len(ref_kernels)}"
                     + (f": {', '.join(behind_pluto)}" if behind_pluto else "") + ".")
        if "polly" in speed:
            lines.append(f"- {v}: behind Polly on {len(behind_polly)} of {len(mine)}"
                         + (f": {', '.join(behind_polly)}" if behind_polly else "") + ".")
        lines.append(f"- {v}: slower than gcc on {len(slower)}" + (f": {', '.join(slower)}" if slower else "") + ".")
    lines += tune_notes(res, ratio)
    errs = [f"{k}/{v}: {e}" for k, r in sorted(res["kernels"].items()) for v, e in r["errors"].items()]
    wrong = [f"{k}/{v}: {c}" for k, r in sorted(res["kernels"].items()) for v, c in r["check"].items()
             if c not in ("identical", "within tolerance")]
    if errs:
        lines.append("- errors: " + "; ".join(errs))
    if wrong:
        lines.append("- result check failures: " + "; ".join(wrong))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build", help="optimize and compile every kernel (static binaries) and check results")
    p.add_argument("--polybench", required=True, help="PolyBench/C 4.2.1 as distributed")
    p.add_argument("--out", required=True)
    p.add_argument("--kernels", help="comma-separated subset (default: all 30)")
    p.add_argument("--dataset", default="LARGE", choices=DATASETS)
    p.add_argument("--threads", type=int, default=2, help="threads of the result check runs")
    p.add_argument("--march", default="x86-64-v4", help="-march of the timed binaries")
    p.add_argument("--check-dataset", default="MINI", help="dataset of the dump comparison ('' to skip)")
    p.add_argument("--check-march", default="native", help="-march of the check binaries (they run here)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                   help="a polytune variant: its name and `polytune optimize` flags (repeat; default polytune=)")
    p.add_argument("--variant-root", action="append", default=[], metavar="NAME=DIR",
                   help="run that variant's polytune from another checkout (e.g. the code before a change)")
    p.add_argument("--no-clang", action="store_true")
    p.add_argument("--no-polly", action="store_true")
    p.add_argument("--no-polytune", action="store_true",
                   help="no polytune variant (e.g. only --pluto's, to merge into another build)")
    p.add_argument("--strip", action="store_true", help="strip the binaries (smaller, to copy elsewhere)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--pluto", metavar="DIR",
                   help="a pluto phase's source tree: adds the variant pluto (its output, built like polytune's)")
    p.add_argument("--tuned", metavar="TUNE.json",
                   help="a tune phase's results: adds the variants seed, tuned and tuned-tiles (default kernels: its)")
    p = sub.add_parser("tune", help="polytune tune twice per kernel (schedule space, tiles only), in parallel "
                                    "over core groups; writes OUT/tune.json for build --tuned")
    p.add_argument("--polybench", required=True, help="PolyBench/C 4.2.1 as distributed")
    p.add_argument("--out", required=True)
    p.add_argument("--kernels", help="comma-separated subset (default: all 30)")
    p.add_argument("--tune-dataset", action="append", default=[], metavar="[KERNEL=]DATASET",
                   help="dataset of the tuning runs (default MEDIUM); KERNEL=DATASET for one kernel (repeat)")
    p.add_argument("--max-evals", type=int, default=30, help="budget of each tune: evaluations (0: none)")
    p.add_argument("--time-limit", type=float, default=0, help="budget of each tune: search seconds (0: none)")
    p.add_argument("--cpus", default=f"0-{(os.cpu_count() or 1) - 1}",
                   help="taskset CPU list, cut into groups of --threads: one tune per group at a time")
    p.add_argument("--threads", type=int, default=2, help="CPUs per tune = OMP_NUM_THREADS of its timed runs")
    p.add_argument("--march", default="x86-64-v4", help="-march of the tuned variants (as the timed binaries)")
    p.add_argument("--tune-jobs", type=int, default=2,
                   help="tune --jobs: candidates compiled at once in a tune's core group (none while one is timed)")
    p.add_argument("--tune-timeout", type=float, default=900, help="kill a tune after this many seconds")
    p.add_argument("--final-dataset", default="",
                   help="the dataset the tuned binaries are timed at: a tune at another one re-runs its best, seed "
                        "and default at this one before keeping the best (tune --confirm-define)")
    p.add_argument("--confirm-runs", type=int, default=5, help="tune --confirm-runs (0: keep the search's best)")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds for the whole phase: no tune starts later, running ones are killed then")
    p = sub.add_parser("pluto", help="polycc --tile --parallel on every kernel: the source tree of build --pluto")
    p.add_argument("--polybench", required=True, help="PolyBench/C 4.2.1 as distributed")
    p.add_argument("--out", required=True, help="the source tree: OUT/<kernel>/<kernel>.c and OUT/pluto.json")
    p.add_argument("--kernels", help="comma-separated subset (default: all 30)")
    p.add_argument("--polycc", help="Pluto's polycc (default: the one on PATH)")
    p.add_argument("--datasets", default=",".join(PLUTO_DATASETS),
                   help="datasets emitted for a kernel that needs --pet (clan's output serves every dataset)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=900, help="seconds per polycc run")
    p = sub.add_parser("run", help="time every binary, interleaved rounds (python3 stdlib only)")
    p.add_argument("--dir", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cpus", default="0,1", help="taskset CPU list; OMP_NUM_THREADS = their number; "
                   "several lists separated by ':' run as concurrent streams, a kernel at a time each")
    p.add_argument("--time-limit", type=float, default=0, help="start no new round after this many seconds")
    p.add_argument("--kernels", help="comma-separated subset")
    p.add_argument("--variants", help="comma-separated subset of the built variants (default: all)")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results.json")
    p = sub.add_parser("table", help="markdown table of a run's results")
    p.add_argument("results")
    p.add_argument("--markdown-out")
    args = ap.parse_args(argv)
    commands = {"build": cmd_build, "tune": cmd_tune, "pluto": cmd_pluto, "run": cmd_run, "table": cmd_table}
    return commands[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
