#!/usr/bin/env python3
"""PPCG's default CUDA output for PolyBench/C 4.2.1, compiled with nvcc, checked and timed on the GPU.

The files come from prepare.sh (PPCG is not needed here): a folder with manifest.json and, per dataset and
kernel, KERNEL_host.cu, KERNEL_kernel.cu and KERNEL_kernel.hu, or its tarball (--tar), unpacked into the build
folder. Each is built with PolyBench's polybench.c and
headers (-I utilities -I the kernel's directory), nvcc -O3 -arch=ARCH, in these ways:

  - "ppcg": PPCG's files as written, -DPOLYBENCH_TIME -D{--dataset}_DATASET (LARGE). The time is the region's,
    as PolyBench prints it; it includes creating the CUDA context, since PPCG's host code makes the
    program's first CUDA call.
  - "ppcg, eager context": the same with -include eager_context.h, which creates the context when the program
    starts, as benchmarks/cuda_mappings.py does for polytune's output: the region then holds the device
    allocations, the copies in, the kernels, the copies back and the frees. Compare this one with polytune.
  - "ppcg, eager context, events": the same, with two CUDA events (kernel_events.h) recorded before PPCG's
    first kernel launch and after its last (two inserted calls, the only edit of PPCG's code), their elapsed
    time printed at exit as `ppcg-kernel-ms:`: the kernel time, as cuda_mappings.py measures polytune's.
  - checks: -DPOLYBENCH_DUMP_ARRAYS at each --check-datasets dataset (by default every one prepare.sh
    generated: LARGE, the very code timed, and MINI, where every tile is partial), from PPCG's files for that
    dataset (their array sizes are built in); the arrays PolyBench dumps compared with the original
    program's (gcc -O2, on the CPU) within 1e-6 relative or one unit of the dump's last printed digit.

All builds run in parallel first, then the checks. Then a warm-up round (not recorded) and --rounds rounds;
each round runs every timed binary once, in the same order (interleaved). Every time and the medians go to
--out as JSON; a table goes to stdout. Exit status 1 when a build, a run or a check failed.

    python3 benchmarks/ppcg/run.py --gen DIR --polybench DIR --out ppcg.json [--rounds 3] [--arch sm_90]
    python3 benchmarks/ppcg/run.py ... --compile-only     # no GPU needed: build everything, run nothing

PolyBench is not part of this repository: --polybench names a copy of PolyBench/C 4.2.1 as distributed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
EAGER_CONTEXT = os.path.join(HERE, "eager_context.h")
VARIANTS = ("ppcg", "ppcg, eager context", "ppcg, eager context, events")
EVENTS = VARIANTS[2]  # the one benchmarks/cuda_mappings.py times beside polytune's
KERNEL_EVENTS = os.path.join(HERE, "kernel_events.h")
DUMP_BLOCK = re.compile(r"begin dump:.*?\n(.*?)end   dump", re.S)


def sh(cmd: list[str], timeout: float = 600) -> tuple[int, str, str]:
    """(exit code, stdout, stderr); 124 when it ran past *timeout* seconds."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s: {' '.join(cmd)}"
    return p.returncode, p.stdout, p.stderr


class Kernel:
    """One kernel at one dataset: PPCG's files for it (under *gen*) and the PolyBench directory they came from."""

    def __init__(self, name: str, kdir: str, gen: str, polybench: str, dataset: str):
        self.name, self.dataset, self.kdir, self.gen, self.polybench = name, dataset, kdir, gen, polybench
        self.dir = os.path.join(polybench, kdir)
        self.original = os.path.join(self.dir, name + ".c")
        self.host = os.path.join(gen, dataset, name, name + "_host.cu")
        self.device = os.path.join(gen, dataset, name, name + "_kernel.cu")
        self.utilities = os.path.join(polybench, "utilities")

    def at(self, dataset: str) -> Kernel:
        """The same kernel at *dataset*: PPCG's files for that dataset."""
        return Kernel(self.name, self.kdir, self.gen, self.polybench, dataset)

    def includes(self) -> list[str]:
        return ["-I", self.utilities, "-I", self.dir]

    def nvcc(self, arch: str, defines: list[str], extra: list[str], exe: str, host: str | None = None) -> list[str]:
        """*host*: a copy of PPCG's host file elsewhere (it still finds KERNEL_kernel.hu in PPCG's folder)."""
        return ["nvcc", "-O3", f"-arch={arch}", *extra, *self.includes(), "-I", os.path.dirname(self.host),
                *(f"-D{d}" for d in defines), host or self.host, self.device,
                # polybench.c as C++ too (-x cu): the host file, C++, declares its functions without extern "C"
                "-x", "cu", os.path.join(self.utilities, "polybench.c"), "-o", exe, "-lm"]

    def gcc(self, defines: list[str], exe: str) -> list[str]:
        return ["gcc", "-O2", *self.includes(), *(f"-D{d}" for d in defines), self.original,
                os.path.join(self.utilities, "polybench.c"), "-o", exe, "-lm"]


def with_events(host: str) -> str:
    """PPCG's host file with kernel_events.h's calls: ppcg_bench_start() before the first kernel launch's
    block (its `dim3 kN_dimBlock` line), ppcg_bench_stop() after the last launch's check. ValueError when the
    file has no launch."""
    lines = host.split("\n")
    first = next((i for i, x in enumerate(lines) if re.match(r"\s*dim3 k\d+_dimBlock", x)), None)
    launch = [i for i, x in enumerate(lines) if "<<<" in x]
    if first is None or not launch:
        raise ValueError("no kernel launch")
    last = next((i for i in range(launch[-1], len(lines)) if "cudaCheckKernel();" in lines[i]), None)
    if last is None or first > launch[0]:
        raise ValueError("the launches are not PPCG's blocks (dim3 ..., kernel <<<...>>>, cudaCheckKernel())")
    indent = re.match(r"\s*", lines[last]).group(0)
    lines.insert(last + 1, indent + "ppcg_bench_stop();")
    lines.insert(first, re.match(r"\s*", lines[first]).group(0) + "ppcg_bench_start();")
    return "\n".join(lines)


def timed_builds(k: Kernel, arch: str, defines: list[str], work: str,
                 flags: list[str] | None = None) -> list[tuple[str, str, list[str] | str]]:
    """The three timed builds of *k* (VARIANTS, in order) as (label, exe, nvcc command), the command a string
    where there is none (why). The events build's copy of the host file is written into *work*; *flags*: more
    nvcc options for all three (benchmarks/cuda_mappings.py: -Xptxas -v)."""
    eager = ["-include", EAGER_CONTEXT]
    events = os.path.join(work, k.name + "_host_events.cu")
    with open(k.host) as f:
        host = f.read()
    try:
        with open(events, "w") as g:
            g.write(with_events(host))
    except ValueError as e:
        events = f"cannot place the events: {e}"
    out = []
    for label, extra, host in zip(VARIANTS, ([], eager, [*eager, "-include", KERNEL_EVENTS]),
                                  (None, None, events)):
        exe = os.path.join(work, f"{k.name}_{re.sub(r'[^a-z]+', '_', label)}")
        cmd = k.nvcc(arch, defines, [*(flags or []), *extra], exe, host) \
            if host is None or host.endswith(".cu") else host
        out.append((label, exe, cmd))
    return out


def check_builds(k: Kernel, arch: str, work: str) -> list[tuple[str, str, list[str]]]:
    """The dump check of *k* at its dataset: PPCG's build and the CPU original's (the same exe + "_cpu", as
    check() runs them), as (label, exe, command)."""
    dump = ["POLYBENCH_DUMP_ARRAYS", f"{k.dataset}_DATASET"]
    exe = os.path.join(work, f"{k.name}_check_{k.dataset}")
    return [(f"check {k.dataset}", exe, k.nvcc(arch, dump, [], exe)),
            (f"original {k.dataset}", exe + "_cpu", k.gcc(dump, exe + "_cpu"))]


def gen_folder(path: str, work: str) -> str:
    """prepare.sh's output: *path* itself when a folder, else its tarball (prepare.sh --tar) unpacked into
    *work*/ppcg-gen."""
    if os.path.isdir(path):
        return os.path.abspath(path)
    out = os.path.join(work, "ppcg-gen")
    os.makedirs(out, exist_ok=True)
    with tarfile.open(path) as tar:
        tar.extractall(out, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return out


def build(cmd: list[str] | str) -> dict:
    """The build's command, seconds and, when it failed, its error (*cmd* a string: the reason none ran)."""
    if isinstance(cmd, str):
        return {"error": cmd}
    t0 = time.perf_counter()
    rc, _out, err = sh(cmd)
    row = {"command": " ".join(cmd), "seconds": round(time.perf_counter() - t0, 2)}
    if rc != 0:
        row["error"] = err[-2000:] or f"exit {rc}"
    return row


def dump_values(stderr: str) -> list[str]:
    """The words PolyBench's POLYBENCH_DUMP_ARRAYS printed between its begin/end dump markers."""
    return [w for block in DUMP_BLOCK.findall(stderr) for w in block.split()]


def compare_dumps(got: list[str], want: list[str], rtol: float = 1e-6) -> str:
    """'' when equal up to rounding (PolyBench prints two decimals), else what differs."""
    if not want:
        return "the original program dumped nothing"
    if len(got) != len(want):
        return f"{len(got)} values dumped, expected {len(want)}"
    wrong = 0
    for i, (a, b) in enumerate(zip(got, want)):
        if a == b:
            continue
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            return f"value {i}: {a!r} where the original dumped {b!r}"
        if not abs(fa - fb) <= rtol * max(abs(fa), abs(fb)) + 0.0101:  # also catches NaN
            if not wrong:
                first = f"value {i}: {a} where the original dumped {b}"
            wrong += 1
    return f"{wrong} of {len(want)} values differ; first: {first}" if wrong else ""


def check(exe: str) -> str:
    """'' when the PPCG build *exe*'s dump matches the CPU original's (*exe*_cpu), else what went wrong."""
    results = []
    for path in (exe, exe + "_cpu"):
        rc, _out, err = sh([path], timeout=300)
        if rc != 0:
            return f"{os.path.basename(path)} exited {rc}: {err[-300:]}"
        results.append(dump_values(err))
    return compare_dumps(*results)


def polybench_time(stdout: str) -> float | None:
    """The seconds PolyBench's POLYBENCH_TIME printed (a number alone on a line)."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            return float(line.strip())
        except ValueError:
            continue
    return None


def tool_version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gen", required=True, help="prepare.sh's output folder (with manifest.json), or its tarball")
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"),
                    help="PolyBench/C 4.2.1 as distributed")
    ap.add_argument("--out", help="JSON results")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--kernels", help="comma-separated subset of the manifest's kernels")
    ap.add_argument("--dataset", default="LARGE", help="the dataset timed")
    ap.add_argument("--check-datasets", help="comma-separated datasets of the dump checks (default: every one "
                    "prepare.sh generated; '' for none)")
    ap.add_argument("--compile-only", action="store_true", help="build everything, run nothing (no GPU needed)")
    ap.add_argument("--work", help="build folder (default: a temporary one, removed at the end)")
    args = ap.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="ppcg-run-")
    os.makedirs(work, exist_ok=True)
    gen = gen_folder(args.gen, work)
    with open(os.path.join(gen, "manifest.json")) as f:
        manifest = json.load(f)
    names = args.kernels.split(",") if args.kernels else list(manifest["kernels"])
    unknown = [n for n in names if n not in manifest["kernels"]]
    if unknown:
        print(f"run.py: not in {args.gen}/manifest.json: {', '.join(unknown)}", file=sys.stderr)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
        return 2
    polybench = os.path.abspath(args.polybench)
    datasets = manifest["datasets"] if args.check_datasets is None else [d for d in args.check_datasets.split(",") if d]
    missing = [d for d in [args.dataset, *datasets] if d not in manifest["datasets"]]
    if missing:
        print(f"run.py: {args.gen} has no PPCG output for {', '.join(missing)} (see prepare.sh's DATASETS)",
              file=sys.stderr)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
        return 2
    kernels = [Kernel(n, manifest["kernels"][n], gen, polybench, args.dataset) for n in names]

    # Every build, in parallel: (kernel, role, exe, command).
    jobs = []
    for k in kernels:
        jobs += [(k, *b) for b in timed_builds(k, args.arch, ["POLYBENCH_TIME", f"{args.dataset}_DATASET"], work)]
        for ds in datasets:
            jobs += [(k.at(ds), *b) for b in check_builds(k.at(ds), args.arch, work)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        built = list(pool.map(lambda j: build(j[3]), jobs))
    print(f"built {len(jobs)} programs in {time.perf_counter() - t0:.0f} s", flush=True)

    result: dict = {
        "what": "PPCG default CUDA output, PolyBench/C 4.2.1; times in seconds as PolyBench's POLYBENCH_TIME prints",
        "ppcg": {k: manifest[k] for k in ("ppcg_version", "ppcg_args")},
        "nvcc": tool_version(["nvcc", "--version"]).splitlines()[-1:],
        "gpu": tool_version(["nvidia-smi", "-L"]), "host": platform.node(), "arch": args.arch,
        "rounds": args.rounds, "kernels": {},
    }
    exes = {}
    for (k, role, exe, _cmd), row in zip(jobs, built):
        entry = result["kernels"].setdefault(k.name, {"variants": {}, "checks": {}})
        if role in VARIANTS:
            entry["variants"][role] = row
            if "error" not in row:
                exes[(k.name, role)] = exe
        elif "error" in row:
            ds = role.split()[-1]
            entry["checks"][ds] = f"{role} did not build: {row['error'][-500:]}"
        if "error" in row:
            print(f"{k.name} {role}: build failed:\n{row['error'][-1500:]}", file=sys.stderr)

    if args.compile_only:
        for k in kernels:
            for ds in datasets:
                result["kernels"][k.name]["checks"].setdefault(ds, "built, not run")
    else:
        # The checks in parallel (the CPU originals at LARGE take seconds each), before any timing.
        todo = [(k.name, ds) for k in kernels for ds in datasets if ds not in result["kernels"][k.name]["checks"]]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            outcomes = pool.map(lambda t: check(os.path.join(work, f"{t[0]}_check_{t[1]}")), todo)
            for (name, ds), outcome in zip(todo, outcomes):
                result["kernels"][name]["checks"][ds] = outcome or "ok"
        for k in kernels:
            for ds, outcome in result["kernels"][k.name]["checks"].items():
                print(f"{k.name} check {ds}: {outcome}", flush=True)
        order = sorted(exes)
        for r in range(-1, args.rounds):  # round -1: the warm-up, not recorded
            for key in order:
                rc, out, err = sh([exes[key]], timeout=300)
                row = result["kernels"][key[0]]["variants"][key[1]]
                if r < 0:
                    continue
                t = polybench_time(out) if rc == 0 else None
                row.setdefault("times_s", []).append(t)
                ms = re.findall(r"ppcg-kernel-ms: ([0-9.eE+-]+)", err)
                if ms:
                    row.setdefault("kernel_ms", []).append(sum(float(x) for x in ms))
                if t is None:
                    row.setdefault("run_errors", []).append(f"exit {rc}: {err[-300:]}")
        for entry in result["kernels"].values():
            for row in entry["variants"].values():
                ts = [t for t in row.get("times_s", []) if t is not None]
                if ts:
                    row["median_s"] = statistics.median(ts)
                if row.get("kernel_ms"):
                    row["kernel_ms_median"] = statistics.median(row["kernel_ms"])
        print(table(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    failed = any("error" in row or row.get("run_errors") for e in result["kernels"].values()
                 for row in e["variants"].values())
    failed |= any(v != "ok" for e in result["kernels"].values() for v in e["checks"].values()) and not args.compile_only
    return 1 if failed else 0


def table(result: dict) -> str:
    lines = ["| kernel | variant | program s (median) | times s | kernel ms (median) | checks |",
             "|---|---|---|---|---|---|"]
    for name, entry in result["kernels"].items():
        checks = ", ".join(f"{ds} {v if v == 'ok' else 'FAILED'}" for ds, v in entry["checks"].items())
        for label, row in entry["variants"].items():
            med = row.get("median_s")
            times = " ".join("-" if t is None else f"{t:.6f}" for t in row.get("times_s", []))
            kms = row.get("kernel_ms_median")
            lines.append(f"| {name} | {label} | {'error' if med is None else f'{med:.6f}'} | {times} | "
                         f"{'' if kms is None else f'{kms:.4f}'} | {checks} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
