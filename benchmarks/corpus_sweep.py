"""polytune on other people's C: every `#pragma scop` file of a Pluto checkout, optimized, classified and run.

    python benchmarks/corpus_sweep.py --pluto /tmp/pluto-src [--jobs 2] [--only NAME] [--md OUT.md] [--json OUT.json]

Pluto's repository is read, never copied into ours (clone it anywhere: `git clone <pluto> /tmp/pluto-src`).
For every examples/*/*.c and test/*.c file, `polytune optimize` runs in four modes (the default, `--no-parallel`,
`--schedule pluto`, `--schedule outer`) and each run is classified:

- ok: exit 0, the output written, nothing on stderr but `FILE:LINE: note/warning` lines and the summary;
- refused: exit 2, one line `FILE:LINE: what`, no output file;
- BUG: a traceback, an isl message, another exit code, more than 120 s, an output file after a refusal.

Then the file is run, where it can be: a full program (it has `main`) in a scratch copy of its directory with
every `#define NAME <integer >= 64>` made small (both the program and its headers), `-DTEST -DVERIFY` and a
`.test` file in the working directory (Pluto's examples print their arrays under these), and a destructor
appended that prints a hash of every file-scope variable (its bytes); a scop snippet (no `main`, the region
at file scope) inside a generated harness: its arrays become `double` parameters of padded shapes, the
names it only reads `long` globals (small values), the scalars it writes `double` globals, and `main` fills
them, calls the kernel and prints a hash of every array and scalar. A call the refusal names (`--pure f`) is
passed as `--pure`. The original (run twice: lines that differ between its runs are timings, left out) and
polytune's output (modes default, pluto and outer, tile sizes 4,5,3 so that small sizes still have several
tiles; `--no-parallel` prints the default's schedule) are built with gcc -O1 (the output with -fopenmp,
2 threads) and their outputs compared: different = WRONG. If the small sizes break the original (an assert),
the file's own sizes are used.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120
RUN_TIMEOUT = 60
MODES = {"default": [], "seq": ["--target", "c", "--no-parallel"], "pluto": ["--schedule", "pluto"],
         "outer": ["--schedule", "outer"]}
CHECK_MODES = {m: MODES[m] for m in ("default", "pluto", "outer")}  # --no-parallel prints the default's schedule
MORE_MODES = {"fuse-max": ["--choice", "scheduler=pluto,fusion=max"], "fuse-none": ["--choice", "fusion=none"],
              "vector-uj3": ["--choice", "scheduler=outer,point_order=vector,unroll=3"],
              "dynamic": ["--choice", "omp_schedule=dynamic,privatize_arrays=0,tiling=reuse"],
              "no-tile": ["--no-tile"]}
SNIPPET_ARGS = [[], ["0"], ["1"], ["2"], ["5"]]  # the harness's parameters: its own values, then these
THREADS = 2
CHECK_ONLY = False  # --check-only: the raw file in the default mode alone, then the checks
SMALL_TILES = ["--tile-sizes", ",".join(["4", "5", "3"] * 6)]
LOCATED = re.compile(r"^\S+:\d+: ")
SUMMARY = re.compile(r"^polytune: ")


@dataclasses.dataclass
class Run:
    """One `polytune optimize` call: its class and what decided it."""

    mode: str
    cls: str  # ok | refused | BUG
    rc: int | None
    seconds: float
    message: str = ""


@dataclasses.dataclass
class FileResult:
    path: str
    kind: str  # program | snippet | other
    runs: list[Run]
    check: str = ""  # SAME | WRONG | BUILD-BUG | n/a: ...
    check_modes: dict[str, str] = dataclasses.field(default_factory=dict)
    note: str = ""

    @property
    def cls(self) -> str:
        classes = {r.cls for r in self.runs}
        if "BUG" in classes or self.check.startswith(("WRONG", "BUILD-BUG")):
            return "BUG" if "BUG" in classes else "WRONG CODE"
        if classes == {"refused"}:
            return "refused"
        if classes == {"ok"}:
            return "optimized"
        return "mixed"


def optimize(src: Path, out: Path, flags: list[str], cwd: Path | None = None) -> Run:
    """Run polytune optimize and classify the run by exit code, stderr and the output file."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "polytune", "optimize", str(src), "-o", str(out), "-I", str(src.parent), *flags]
    if out.exists():
        out.unlink()
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return Run("", "BUG", None, time.monotonic() - t0, f"hang: over {TIMEOUT} s")
    dt = time.monotonic() - t0
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    odd = [ln for ln in lines if not (LOCATED.match(ln) or SUMMARY.match(ln))]
    text = p.stderr
    if "Traceback" in text or re.search(r"\bisl_|isl error|islpy", text):
        return Run("", "BUG", p.returncode, dt, _last(lines, "traceback/isl"))
    if p.returncode == 0:
        if not out.exists():
            return Run("", "BUG", 0, dt, "exit 0 without output")
        if odd:
            return Run("", "BUG", 0, dt, "stderr: " + odd[0][:200])
        notes = [ln for ln in lines if LOCATED.match(ln)]
        return Run("", "ok", 0, dt, "; ".join(n.split(": ", 1)[1][:120] for n in notes[:2]))
    if p.returncode == 2:
        if out.exists():
            return Run("", "BUG", 2, dt, "output written after a refusal")
        if len(lines) != 1 or odd:
            return Run("", "BUG", 2, dt, f"refusal of {len(lines)} lines: " + (odd or lines or [""])[0][:200])
        return Run("", "refused", 2, dt, lines[0][:240])
    return Run("", "BUG", p.returncode, dt, _last(lines, f"exit {p.returncode}"))


def _last(lines: list[str], default: str) -> str:
    return (lines[-1][:240] if lines else default)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def has_main(text: str) -> bool:
    return re.search(r"\bmain\s*\(", strip_comments(text)) is not None


# ---------------------------------------------------------------- full programs

DEFINE = re.compile(r"^(\s*#\s*define\s+)([A-Za-z_]\w*)(\s+)\(?(\d+)[lL]?\)?(\s*(?://.*|/\*.*)?)$", re.M)
KEEP_DEFINES = {"TIME", "NUM_FP_OPS", "alpha", "beta"}


def shrink(text: str) -> str:
    """Every `#define NAME <integer >= 64>` becomes a small size (distinct per name)."""
    def small(m: re.Match[str]) -> str:
        name, value = m.group(2), int(m.group(4))
        if value < 64 or name in KEEP_DEFINES:
            return m.group(0)
        return f"{m.group(1)}{name}{m.group(3)}{20 + sum(map(ord, name)) % 17}{m.group(5)}"
    return DEFINE.sub(small, text)


GLOBAL = re.compile(r"^(?:static\s+)?(?:double|float|int|long|char|unsigned|short)(?:\s+(?:int|long|double))*\s+"
                    r"([^;(){}=*]+?)\s*(?:=[^;]*)?;", re.M)


def file_scope_names(text: str) -> list[str]:
    """Variables declared at file scope (outside braces), not pointers: what the destructor hashes."""
    clean = strip_comments(text)
    depth, top = 0, []
    for ch in clean:
        if ch == "{":
            depth += 1
        if depth == 0:
            top.append(ch)
        else:
            top.append("\n" if ch == "\n" else " ")
        if ch == "}":
            depth -= 1
    names: list[str] = []
    for m in GLOBAL.finditer("".join(top)):
        for decl in m.group(1).split(","):
            nm = re.match(r"\s*([A-Za-z_]\w*)", decl)
            if nm and nm.group(1) not in names:
                names.append(nm.group(1))
    return names


HASH_FN = """
static unsigned long long sweep_hash(const void *p, unsigned long n) {
  const unsigned char *b = (const unsigned char *)p; unsigned long long h = 1469598103934665603ULL;
  for (unsigned long i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ULL; }
  return h;
}
"""


def dump_destructor(names: list[str]) -> str:
    body = "".join(f'  fprintf(stderr, "dump {n} %016llx\\n", sweep_hash(&{n}, sizeof({n})));\n' for n in names)
    return ("\n#include <stdio.h>\n" + HASH_FN + "__attribute__((destructor)) static void sweep_dump(void) {\n"
            + body + "}\n")


# ---------------------------------------------------------------- snippets

KEYWORDS = {"for", "if", "else", "while", "do", "return", "int", "long", "double", "float", "char", "unsigned",
            "signed", "short", "const", "void", "sizeof", "break", "continue", "static", "register"}
MATH = {"sqrt", "exp", "log", "log10", "pow", "fabs", "sin", "cos", "tan", "floor", "ceil", "fmax", "fmin", "abs",
        "sqrtf", "expf", "fabsf"}
HELPERS = {"min": "#define min(a, b) (((a) < (b)) ? (a) : (b))", "max": "#define max(a, b) (((a) > (b)) ? (a) : (b))",
           "floord": "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))",
           "ceild": "#define ceild(n, d) (((n) < 0) ? -((-(n)) / (d)) : ((n) + (d) - 1) / (d))"}


@dataclasses.dataclass(frozen=True)
class Snippet:
    """What a harness must declare for a file-scope scop: arrays (rank), parameters, written scalars."""

    arrays: dict[str, int]
    params: tuple[str, ...]
    scalars: tuple[str, ...]
    locals_: tuple[str, ...]
    helpers: tuple[str, ...]


def _rank_after(text: str, pos: int) -> int:
    rank = 0
    while True:
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        if pos >= len(text) or text[pos] != "[":
            return rank
        depth = 0
        while pos < len(text):
            depth += {"[": 1, "]": -1}.get(text[pos], 0)
            pos += 1
            if depth == 0:
                break
        rank += 1


def scan_snippet(region: str) -> Snippet | str:
    """The names of a scop region by role, or why no harness can be made for it."""
    text = strip_comments(region)
    text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    declared = set(re.findall(r"\b(?:int|long|double|float|char|unsigned)\s+([A-Za-z_]\w*)", text))
    iterators = set(re.findall(r"\bfor\s*\(\s*(?:int\s+|long\s+)?([A-Za-z_]\w*)\s*=", text))
    arrays: dict[str, int] = {}
    calls, others = set(), []
    for m in re.finditer(r"\b([A-Za-z_]\w*)\b", text):
        name = m.group(1)
        if name in KEYWORDS or name in declared - iterators:
            continue
        rest = text[m.end():].lstrip()
        if rest.startswith("("):
            calls.add(name)
        elif rest.startswith("["):
            rank = _rank_after(text, m.end())
            if arrays.get(name, rank) != rank:
                return f"{name} used with {arrays[name]} and {rank} subscripts"
            arrays[name] = rank
        elif name not in others:
            others.append(name)
    unknown = calls - MATH - set(HELPERS)
    if unknown:
        return "calls " + ", ".join(sorted(unknown))
    if set(arrays) & set(others):
        return "a name used both with and without subscripts: " + ", ".join(sorted(set(arrays) & set(others)))
    written = set(re.findall(r"\b([A-Za-z_]\w*)\s*(?:[-+*/]?=(?!=)|\+\+|--)", text))
    written |= set(re.findall(r"(?:\+\+|--)\s*([A-Za-z_]\w*)", text))
    scalars = tuple(n for n in others if n in written and n not in iterators)
    params = tuple(n for n in others if n not in written and n not in iterators)
    locals_ = tuple(sorted(iterators - declared))
    return Snippet(arrays, params, scalars, locals_, tuple(sorted(calls & set(HELPERS))))


def _shape(rank: int) -> tuple[int, int, int]:
    """(extent, offset, parameter value) for an array of this rank: about 4M elements at most."""
    extent = min(4096, int((4_000_000) ** (1.0 / rank)))
    offset = extent // 4
    return extent, offset, max(3, min(13, (extent - 2 * offset) // 2))


def harness(region_text: str, snip: Snippet) -> str:
    """A C program around a file-scope scop region (its text kept as it is, so polytune sees the same region)."""
    maxrank = max(snip.arrays.values(), default=1)
    pval = _shape(maxrank)[2]
    out = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", *(HELPERS[h] for h in snip.helpers),
           HASH_FN]
    out += [f"long {p} = {max(2, pval - i % 3)};" for i, p in enumerate(snip.params)]
    out += [f"double {s} = {1.25 + i};" for i, s in enumerate(snip.scalars)]
    params = []
    for name, rank in snip.arrays.items():
        ext = _shape(rank)[0]
        params.append(f"double {name}" + f"[{ext}]" * rank)
    locals_ = "".join(f"  int {n};\n" for n in snip.locals_)
    out.append(f"void kernel({', '.join(params) or 'void'}) {{\n{locals_}{region_text}\n}}")
    main = ["int main(int argc, char **argv) {"]
    for i, p in enumerate(snip.params):
        main.append(f"  if (argc > 1) {p} = atol(argv[1]) + {i % 3};")
    args = []
    for name, rank in snip.arrays.items():
        ext, off, _ = _shape(rank)
        size = ext ** rank
        main.append(f"  double *{name}_buf = malloc(sizeof(double) * {size}UL);")
        main.append(f"  for (unsigned long x = 0; x < {size}UL; x++) "
                    f"{name}_buf[x] = 1.0 + (double)((x * 2654435761UL + {len(name)}) % 1000) / 250.0;")
        origin = sum(off * ext ** k for k in range(rank))
        args.append(f"(void *)({name}_buf + {origin}UL)")
    main.append(f"  kernel({', '.join(args)});")
    for name, rank in snip.arrays.items():
        size = _shape(rank)[0] ** rank
        main.append(f'  printf("{name} %016llx\\n", sweep_hash({name}_buf, sizeof(double) * {size}UL));')
    for s in snip.scalars:
        main.append(f'  printf("{s} %.17g\\n", {s});')
    main += ["  return 0;", "}"]
    out.append("\n".join(main))
    return "\n".join(out) + "\n"


def shrink_literals(region: str) -> str:
    """Integer literals >= 64 in a snippet's code (not its comments) become 9, 10, ... in their order: constant
    bounds of 10000 (or ten nested loops of 100) in a harness that runs in seconds."""
    code = strip_comments(region)
    big = sorted({int(v) for v in re.findall(r"(?<![\w.])(\d+)(?![\w.])", code) if int(v) >= 64})
    base = 4 if len(re.findall(r"\bfor\b", code)) >= 8 else 9  # deep.c: ten nested loops
    small = {v: str(min(base + k, base + 7)) for k, v in enumerate(big)}
    out, pos = [], 0
    for m in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", code):
        if int(m.group(1)) in small:
            out += [region[pos:m.start()], small[int(m.group(1))]]
            pos = m.end()
    return "".join(out) + region[pos:]


def region_text(text: str) -> str | None:
    """The text from the first `#pragma scop` to the last `#pragma endscop`."""
    start, end = text.find("#pragma scop"), text.rfind("#pragma endscop")
    return text[start:end + len("#pragma endscop")] if 0 <= start < end else None


def file_scope_region(text: str) -> str | None:
    """The region's text, if it stands at file scope."""
    before = strip_comments(text[:max(text.find("#pragma scop"), 0)])
    if before.count("{") != before.count("}") or re.search(r"\)\s*$", before.strip()):
        return None
    return region_text(text)


# ---------------------------------------------------------------- building and running

def build_and_run(src: Path, exe: Path, openmp: bool, cwd: Path, argsets: list[list[str]]) -> tuple[str, str]:
    """('ok', output of each run, one per argument list) or (what failed, detail)."""
    cmd = ["gcc", "-O1", "-w", "-DTEST", "-DVERIFY", "-include", "stdio.h", "-include", "stdlib.h", "-I",
           str(src.parent), str(src), "-o", str(exe), "-lm"]
    if openmp:
        cmd.insert(1, "-fopenmp")
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if b.returncode:
        return "build", b.stderr.strip().splitlines()[0][:240] if b.stderr.strip() else "gcc failed"
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    outs = []
    for args in argsets:
        try:
            r = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=cwd,
                               env=env, errors="replace")
        except subprocess.TimeoutExpired:
            return "timeout", f"over {RUN_TIMEOUT} s (arguments {args})"
        out = r.stdout + r.stderr
        out = "\n".join(ln for ln in out.splitlines() if not re.search(r"GFLOPS|^\s*[\d.]+\s*s\s*$|[Tt]ime", ln))
        if r.returncode < 0:
            return "crash", f"signal {-r.returncode} (arguments {args}): {out[-200:]}"
        outs.append(f"run {args}\n" + out + (f"\nexit status {r.returncode}" if r.returncode else ""))
    return "ok", "\n".join(outs)


def check(prog: Path, work: Path, flags_by_mode: dict[str, list[str]], extra: list[str],
          argsets: list[list[str]]) -> tuple[str, dict[str, str]]:
    """Build and run the original (twice: lines that differ between its runs, timings, are left out) and
    polytune's output per mode; compare."""
    (work / ".test").write_text("")
    status, ref = build_and_run(prog, work / "orig.exe", False, work, argsets)
    if status != "ok":
        return f"n/a: original {status}: {ref}", {}
    again = build_and_run(prog, work / "orig.exe", False, work, argsets)[1].splitlines()
    first = ref.splitlines()
    unstable = {k for k in range(len(first)) if k >= len(again) or again[k] != first[k]}
    ref = "\n".join(ln for k, ln in enumerate(first) if k not in unstable)
    modes: dict[str, str] = {}
    for mode, flags in flags_by_mode.items():
        out = prog.with_name(prog.stem + f".{mode}.c")
        run = optimize(prog, out, flags + SMALL_TILES + ["-DTEST", "-DVERIFY"] + extra, cwd=work)
        if run.cls != "ok":
            modes[mode] = f"{run.cls}: {run.message}"
            continue
        status, got = build_and_run(out, work / f"{mode}.exe", True, work, argsets)
        if status == "build":
            modes[mode] = f"BUILD-BUG: {got}"
        elif status != "ok":
            modes[mode] = f"WRONG ({status}): {got}"
        elif (got := "\n".join(ln for k, ln in enumerate(got.splitlines()) if k not in unstable)) != ref:
            diff = [f"{a!r} vs {b!r}" for a, b in zip(ref.splitlines(), got.splitlines()) if a != b]
            modes[mode] = "WRONG: " + (diff[0] if diff else "output length differs")[:240]
        else:
            modes[mode] = "SAME"
    verdicts = set(v.split(":")[0].split(" ")[0] for v in modes.values())
    for worst in ("WRONG", "BUILD-BUG"):
        if worst in verdicts:
            return worst, modes
    if verdicts == {"SAME"}:
        return "SAME", modes
    return ("SAME (some modes refused)" if "SAME" in verdicts else "n/a: every mode refused"), modes


def sweep_file(path: Path, pluto: Path, scratch: Path, check_modes: dict[str, list[str]]) -> FileResult:
    rel = str(path.relative_to(pluto))
    work = Path(tempfile.mkdtemp(dir=scratch, prefix=path.stem + "."))
    text = path.read_text(errors="replace")
    runs = []
    for mode, flags in (MODES if "#pragma scop" in text and not CHECK_ONLY else {"default": []}).items():
        run = optimize(path, work / f"raw.{mode}.c", flags, cwd=work)
        run.mode = mode
        runs.append(run)
    extra = [f"--pure={name}" for name in sorted({m for r in runs for m in re.findall(r"--pure (\w+)", r.message)})]
    if "#pragma scop" not in text:
        return FileResult(rel, "other", runs, "n/a: no #pragma scop")
    if has_main(text):
        copy = work / "prog"
        shutil.copytree(path.parent, copy, ignore=shutil.ignore_patterns(".*", "*.o"))
        for f in list(copy.glob("*.c")) + list(copy.glob("*.h")):
            f.write_text(shrink(f.read_text(errors="replace")))
        prog = copy / path.name
        prog.write_text(prog.read_text() + dump_destructor(file_scope_names(prog.read_text())))
        verdict, modes = check(prog, copy, check_modes, extra, [[]])
        if verdict.startswith("n/a: original"):  # the small sizes broke it (an assert on the size): its own sizes
            shutil.rmtree(copy)
            shutil.copytree(path.parent, copy, ignore=shutil.ignore_patterns(".*", "*.o"))
            prog.write_text(prog.read_text() + dump_destructor(file_scope_names(prog.read_text())))
            verdict, modes = check(prog, copy, check_modes, extra, [[]])
            verdict += " (own sizes)"
        if not verdict.startswith("n/a: original"):
            return FileResult(rel, "program", runs, verdict, modes)
        region = region_text(text)  # a program that does not build or run (undeclared names, out of bounds)
    else:
        region = file_scope_region(text)
    if region is None:
        return FileResult(rel, "snippet", runs, "n/a: the region is not at file scope")
    snip = scan_snippet(region)
    if isinstance(snip, str):
        return FileResult(rel, "snippet", runs, f"n/a: {snip}")
    region = shrink_literals(region)
    prog = work / (path.stem + ".harness.c")
    prog.write_text(harness(region, snip))
    verdict, modes = check(prog, work, check_modes, extra, SNIPPET_ARGS)
    return FileResult(rel, "snippet", runs, verdict, modes)


def corpus(pluto: Path) -> list[Path]:
    files = sorted(pluto.glob("examples/*/*.c")) + sorted(pluto.glob("test/*.c"))
    return [f for f in files if "#pragma scop" in f.read_text(errors="replace")] + \
        [f for f in files if "#pragma scop" not in f.read_text(errors="replace")]


def table(results: list[FileResult]) -> str:
    from collections import Counter
    lines = ["| file | kind | class | default | seq | pluto | outer | run check |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        cells = []
        for run in r.runs:
            cells.append(run.cls if run.cls == "ok" else f"{run.cls}: {run.message}".replace("|", "\\|"))
        check_cell = r.check if not r.check_modes else r.check + " (" + ", ".join(
            f"{m}: {v}" for m, v in r.check_modes.items() if v != "SAME") + ")" if any(
            v != "SAME" for v in r.check_modes.values()) else r.check
        lines.append(f"| {r.path} | {r.kind} | {r.cls} | " + " | ".join(cells) + f" | {check_cell.replace('|', '/')} |")
    runs = Counter(run.cls for r in results for run in r.runs)
    classes = Counter(r.cls for r in results if r.kind != "other")
    checks = Counter(r.check.split(":")[0] for r in results if r.kind != "other")
    head = [f"files: {len(results)} ({sum(r.kind != 'other' for r in results)} with `#pragma scop`)",
            "optimize runs by class: " + ", ".join(f"{k} {v}" for k, v in sorted(runs.items())),
            "files with a scop by class: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())),
            "run checks: " + ", ".join(f"{k} {v}" for k, v in sorted(checks.items()))]
    return "\n".join(f"- {h}" for h in head) + "\n\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pluto", type=Path, help="a checkout of Pluto's repository")
    ap.add_argument("--table-from", type=Path, help="print the table of a JSON file this script wrote (--json)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", action="append", default=[], help="substring of the file's path (repeatable)")
    ap.add_argument("--more", action="store_true", help="check the schedule choices of MORE_MODES too")
    ap.add_argument("--check-only", action="store_true", help="classify the file in the default mode only")
    ap.add_argument("--scop-only", action="store_true", help="leave out the files without '#pragma scop'")
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of the runs")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--scratch", type=Path, help="keep the work files here (default: a temporary folder, removed)")
    args = ap.parse_args(argv)
    if args.table_from:
        records = json.loads(args.table_from.read_text())
        results = [FileResult(**{**r, "runs": [Run(**x) for x in r["runs"]]}) for r in records]
        print(table(results), end="")
        return 0
    if args.pluto is None:
        ap.error("--pluto is required")
    global THREADS, CHECK_ONLY
    THREADS, CHECK_ONLY = args.threads, args.check_only
    files = [f for f in corpus(args.pluto) if not args.only or any(s in str(f) for s in args.only)]
    if args.scop_only:
        files = [f for f in files if "#pragma scop" in f.read_text(errors="replace")]
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="corpus_sweep."))
    scratch.mkdir(parents=True, exist_ok=True)
    results: list[FileResult] = []

    def one(f: Path) -> FileResult:
        try:
            return sweep_file(f, args.pluto, scratch, CHECK_MODES | (MORE_MODES if args.more else {}))
        except Exception as exc:  # a harness problem, not polytune's: say so and go on
            return FileResult(str(f.relative_to(args.pluto)), "other", [], f"n/a: sweep error {exc!r}")

    with ThreadPoolExecutor(args.jobs) as pool:
        for res in pool.map(one, files):
            results.append(res)
            print(f"{res.cls:10s} {res.path}: {res.check} "
                  + " ".join(f"{r.mode}={r.cls}" for r in res.runs), flush=True)
            if args.json:
                args.json.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1))
    if args.md:
        args.md.write_text(table(results))
    print(table(results).split("\n\n")[0])
    if not args.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
