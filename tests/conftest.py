from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The tests' sizes are small: without this, the branch to a serial copy (poly/parallel.py: PARALLEL_WORK)
# would run their parallel loops serially, and the parallel code would go untested. Subprocesses inherit it.
os.environ.setdefault("POLYTUNE_PARALLEL_WORK", "0")
os.environ.setdefault("POLYTUNE_PACK_WORK", "0")  # small products still run the packed code (emit/blis.py)
# and so are their contractions: packed blocks even where the three matrices fit in L1 (poly/contraction.py)
os.environ.setdefault("POLYTUNE_BLOCK_MIN_BYTES", "0")
KERNELS = os.path.join(ROOT, "benchmarks", "pluto")
# How the CPU emulation of generated CUDA (tests/data/cuda_emu.h) is compiled. -fno-ivopts: gcc 12.2's
# induction-variable optimization miscompiles some kernels' loops on the host at -O1
# (tests/data/gcc12_ivopts_wrong_code.c, from random program 82153; again random program 1845's kernels,
# whose emulation printed wrong values at -O1 and the right ones at -O0 or with -fno-ivopts).
EMU_CXXFLAGS = ("-O1", "-fno-ivopts", "-w")  # (tests/data/fake_nvcc.py compiles with the same)
# Small sizes: every kernel runs in milliseconds; not powers of two on purpose.
SMALL = ["-DN=13", "-DTSTEPS=3", "-DNC=3", "-DD=7"]


def compile_run(src: str, exe: str, flags: list[str], openmp: bool, threads: int = 2,
                env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> str:
    """*src* built with gcc -O2 into *exe* and run on *threads* OpenMP threads (more variables: *env*; its
    arguments: *args*): its output. A build of the same file, flags and inputs earlier in this process is
    reused (copied to *exe*) instead of compiled again."""
    cmd = ["gcc", "-O2", *(["-fopenmp"] if openmp else []), *flags, src, "-o", exe, "-lm"]
    key = _build_key(src, cmd[:-3])
    if key in _BUILT:
        shutil.copy2(_BUILT[key], exe)
    else:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        _BUILT[key] = os.path.join(_built_dir(), f"{len(_BUILT)}.exe")
        shutil.copy2(exe, _BUILT[key])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **(env or {}))
    return subprocess.run([exe, *args], check=True, capture_output=True, text=True, env=env, timeout=60).stdout


def representatives(params, keep, ids=None) -> list:
    """A parametrized sweep for the default suite (docs/DESIGN.md, "Tests: what the default suite is for"): the
    parameters named in *keep* stay in it, every other one is marked slow (CI's slow line runs them).
    *params*: pytest.param objects, tuples (the values of several argnames) or single values; a parameter is
    named by its own id, else ids[k] where *ids* is given, else str() of its (first) value; the ids pytest
    gives are unchanged. A name in *keep* that names no parameter is an error."""
    out, seen = [], set()
    for k, p in enumerate(params):
        if isinstance(p, type(pytest.param(0))):
            values, marks, pid = p.values, tuple(p.marks), p.id
        else:
            values, marks, pid = (p if isinstance(p, tuple) else (p,)), (), None
        pid = pid if pid is not None else ids[k] if ids is not None else None
        name = pid if pid is not None else str(values[0])
        seen.add(name)
        out.append(pytest.param(*values, marks=marks if name in keep else (*marks, pytest.mark.slow), id=pid))
    assert set(keep) <= seen, f"representatives that name no parameter: {sorted(set(keep) - seen)}"
    return out


_BUILT: dict[tuple, str] = {}  # build key -> a private copy of the executable


def _built_dir() -> str:
    if not hasattr(_built_dir, "path"):
        _built_dir.path = tempfile.mkdtemp(prefix="polytune-test-builds-")
        atexit.register(shutil.rmtree, _built_dir.path, True)
    return _built_dir.path


_SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".inc", ".def", ".c", ".cc", ".cpp", ".cu")


def _build_key(src: str, cmd: list[str]) -> tuple:
    """What a build's result depends on: the command, the source's path and bytes, and the name and bytes of
    every source or header file in the directories its includes can come from (its own and each -I;
    executables written there do not count)."""
    src = os.path.abspath(src)
    dirs = [os.path.dirname(src)]
    for k, f in enumerate(cmd):
        if f == "-I" and k + 1 < len(cmd):
            dirs.append(os.path.abspath(cmd[k + 1]))
        elif f.startswith("-I") and len(f) > 2:
            dirs.append(os.path.abspath(f[2:]))
    listing = []
    for d in dirs:
        with os.scandir(d) as entries:
            listing.append(sorted((e.name, _digest(e.path)) for e in entries
                                  if e.name.endswith(_SOURCE_SUFFIXES) and e.is_file()))
    return (tuple(cmd), src, _digest(src), repr(listing))


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# The matrix product the tuner's tests tune (tests/test_tune*.py): N is 24 unless -DN gives another size (a
# tune's --confirm-define), and main prints one element of C.
MATMUL_TUNE = """#include <stdio.h>
#ifndef N
#define N 24
#endif
double A[N][N], B[N][N], C[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) { A[i][j] = (i * j % 7) / 7.0; B[i][j] = (i + j) % 5; C[i][j] = 0; }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  printf("%f\\n", C[3][4]);
  return 0;
}
"""


def write_matmul(directory, timed: bool = False) -> str:
    """MATMUL_TUNE written to DIRECTORY/mm.c: its path. TIMED: the program also prints a 'time: SECONDS' line
    (the region's wall time), the line `bench` reads."""
    path = os.path.join(str(directory), "mm.c")
    text = MATMUL_TUNE
    if timed:
        text = ("#define _POSIX_C_SOURCE 199309L\n#include <time.h>\n" + text
                .replace("#pragma scop",
                         "struct timespec t0, t1;\n  clock_gettime(CLOCK_MONOTONIC, &t0);\n#pragma scop")
                .replace("#pragma endscop", "#pragma endscop\n  clock_gettime(CLOCK_MONOTONIC, &t1);")
                .replace('printf("%f\\n", C[3][4]);',
                         'printf("time: %.9f\\n%f\\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), '
                         'C[3][4]);'))
    with open(path, "w") as f:
        f.write(text)
    return path


def synthetic_times(monkeypatch) -> None:
    """Keep the real build, run and verification of every candidate; replace its times by a surface of the
    tile sizes whose minimum is at (8, 16, 4) (optimize's default, no configuration: cost 0). A replay: the
    same times whatever ran when."""
    import dataclasses

    from polytune.measure import c as measure
    real = measure._verify_and_time

    def replay(ref, config, exe, ct, bound, cwd):
        m = real(ref, config, exe, ct, None, cwd)
        if not m.ok:
            return m
        cost = sum(abs(v.bit_length() - w.bit_length()) for v, w in zip(config, (8, 16, 4)))
        return dataclasses.replace(m, times=(1e-3 * (1 + cost),) * ref.build.runs)

    monkeypatch.setattr(measure, "_verify_and_time", replay)


def run_source(source: str, directory, name: str, openmp: bool = True) -> str:
    """The output of C *source*, written to DIRECTORY/NAME.c and built by compile_run (gcc -O2)."""
    src = os.path.join(str(directory), f"{name}.c")
    with open(src, "w") as f:
        f.write(source)
    return compile_run(src, os.path.join(str(directory), name), [], openmp)


def checksum_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("checksum"))


def checksums_before_and_after(source: str, directory, args: list[str]) -> tuple[str, str]:
    """The checksum lines of C *source* as it is (no OpenMP) and of `polytune optimize ARGS`'s output
    (with OpenMP), both written to and built in *directory*."""
    from polytune.cli import main
    src, out = os.path.join(str(directory), "src.c"), os.path.join(str(directory), "src.opt.c")
    with open(src, "w") as f:
        f.write(source)
    assert main(["optimize", src, "-o", out, *args]) == 0
    want = compile_run(src, os.path.join(str(directory), "ref"), [], openmp=False)
    got = compile_run(out, os.path.join(str(directory), "opt"), [], openmp=True)
    return checksum_line(want), checksum_line(got)


def emu_header() -> str:
    """tests/data/cuda_emu.h, copied for this process with a precompiled header beside it, built with the
    options the tests build the emulated programs with (EMU_CXXFLAGS): a build that includes it first does not
    parse the C++ library headers again. g++ reads the header itself wherever the options differ."""
    if not hasattr(emu_header, "path"):
        d = tempfile.mkdtemp(prefix="polytune-test-emu-")
        atexit.register(shutil.rmtree, d, True)
        path = os.path.join(d, "cuda_emu.h")
        shutil.copyfile(os.path.join(ROOT, "tests", "data", "cuda_emu.h"), path)
        if shutil.which("g++") is not None:
            subprocess.run(["g++", *EMU_CXXFLAGS, "-x", "c++-header", path, "-o", path + ".gch"], capture_output=True)
        emu_header.path = path
        os.environ["POLYTUNE_TEST_EMU_HEADER"] = path  # what tests/data/fake_nvcc.py includes, where set
    return emu_header.path


@pytest.fixture(autouse=True, scope="session")
def _need_gcc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is required")


class TritonHarness:
    """The Triton target's runner driven as the tuner drives it: each configuration's variant from the
    target, a configuration that runs the same code as one measured before answered by Memo (same_as)."""

    def __init__(self, program, build, runs: int = 5):
        import dataclasses

        from polytune.measure import Memo
        from polytune.pipeline import OptimizeOptions
        from polytune.targets.triton import TritonTarget
        self.target = TritonTarget(program, OptimizeOptions(target="triton"), dataclasses.replace(build, runs=runs))
        self.runner = self.target.runner()
        self.memo = Memo(self.runner)

    def __getattr__(self, name):  # the runner's state (mods, text, resources, ...)
        if name in ("runner", "target", "memo"):
            raise AttributeError(name)
        return getattr(self.runner, name)

    def measure_reference(self):
        return self.runner.reference()

    def measure(self, config, names):
        return self.memo.measure(self.target.variant(tuple(names), tuple(config)))

    def close(self) -> None:
        self.runner.close()


@pytest.fixture
def tiled_as_any_band(monkeypatch):
    """For the tests of the tuner's mechanics on a space of tile sizes (their pytestmark): the small matmul's
    band is tiled, not packed as a contraction (its block coordinates: tests/test_contraction.py), as
    optimize does where its matrices fit in half of L1 (this file sets 0 for the other tests, so that their
    small products are packed)."""
    import multiprocessing.forkserver as forkserver
    monkeypatch.setenv("POLYTUNE_BLOCK_MIN_BYTES", str(1 << 40))
    # the pools' workers fork from a server started with the environment of its time: restart it, so that
    # they see this one, and again afterwards
    forkserver._forkserver._stop()
    yield
    monkeypatch.undo()
    forkserver._forkserver._stop()
