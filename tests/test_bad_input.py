"""Inputs outside the model are rejected with one ``FILE:LINE: message`` line; tricky valid inputs work.

Every ``tests/bad_inputs/*.c`` holds one construct polytune must refuse. Its first line says where and
what: ``// expect: LINE: message substring`` (the substring is matched case-insensitively). Every
``tests/bad_inputs/valid/*.c`` starts with ``// expect: ok`` and must be optimized into a program that
prints exactly what the original prints. Optional header lines (leading ``//`` comments):
``// flags: -DN=10 ...`` (given to polytune and to gcc), ``// or-reject: LINE`` (a valid file that polytune
may also refuse, with one error line at LINE), ``// xfail: reason`` (a known polytune bug: the case is a
strict xfail) and ``// xfail-run: reason`` (the same, only for the compile-and-run test).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from polytune.cli import main

HERE = Path(__file__).resolve().parent
BAD_DIR = HERE / "bad_inputs"
VALID_DIR = BAD_DIR / "valid"
BAD = sorted(BAD_DIR.glob("*.c"))
VALID = sorted(VALID_DIR.glob("*.c"))
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not found")
_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+(scop|endscop)\b")


def header(path: Path) -> dict[str, str]:
    """The ``// key: value`` lines at the top of a corpus file."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("//"):
                break
            m = re.match(r"^//\s*(expect|flags|or-reject|xfail|xfail-run):\s?(.*?)\s*$", line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def cases(paths: list[Path], xfail_keys: tuple[str, ...] = ("xfail",)) -> list:
    out = []
    for p in paths:
        h = header(p)
        reason = next((h[k] for k in xfail_keys if k in h), None)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(p, marks=marks, id=p.stem))
    return out


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def optimize_valid(path: Path, out: Path, options: list[str], capsys) -> bool:
    """Run polytune on a valid corpus file: True if it was optimized, False if it was refused and the file
    allows that (``// or-reject: LINE``)."""
    h = header(path)
    rc, _, err = run_cli(["optimize", *shlex.split(h.get("flags", "")), str(path), "-o", str(out), *options],
                         capsys)
    assert "Traceback" not in err
    if rc == 2 and "or-reject" in h:
        msg = assert_one_error_line(err)
        assert msg.startswith(f"{path}:{h['or-reject']}: "), msg
        assert not out.exists()
        return False
    assert rc == 0, err
    assert out.exists()
    return True


def assert_one_error_line(err: str) -> str:
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, f"expected exactly one line on stderr, got:\n{err}"
    return err[:-1]


# ---- inputs outside the model ----------------------------------------------------------------------

def test_corpus_is_complete():
    assert len(BAD) >= 25 and len(VALID) >= 12
    for p in BAD:
        assert re.fullmatch(r"\d+:.*", header(p).get("expect", "")), f"{p.name}: bad '// expect:' line"
    for p in VALID:
        assert header(p).get("expect") == "ok", f"{p.name}: needs '// expect: ok'"


@pytest.mark.parametrize("path", cases(BAD))
def test_bad_input_rejected(path: Path, tmp_path: Path, capsys):
    line_text, _, substring = header(path)["expect"].partition(":")
    substring = substring.strip()
    out = tmp_path / "out.c"
    rc, stdout, err = run_cli(["optimize", str(path), "-o", str(out)], capsys)
    msg = assert_one_error_line(err)
    assert rc == 2, msg
    m = re.fullmatch(r"(.*?):(\d+): (.+)", msg)
    assert m, f"not 'FILE:LINE: message': {msg}"
    assert m.group(1) == str(path), msg
    assert int(m.group(2)) == int(line_text), f"wrong line (expected {line_text}): {msg}"
    assert substring.lower() in m.group(3).lower(), f"expected '{substring}' in: {msg}"
    assert stdout == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind either


def test_nonexistent_input(tmp_path: Path, capsys):
    src, out = tmp_path / "no_such_file.c", tmp_path / "out.c"
    rc, _, err = run_cli(["optimize", str(src), "-o", str(out)], capsys)
    msg = assert_one_error_line(err)
    assert rc == 2
    assert msg.startswith(f"{src}: ") and "no such file" in msg.lower(), msg
    assert not out.exists()


@pytest.mark.parametrize("options, substring", [
    (["--tile-sizes", "0"], "tile size"),
    (["--tile-sizes", "a,b"], "tile size"),
    (["--tile-sizes", "4,-2"], "tile size"),
    (["--tile-sizes=-3"], "tile size"),
    (["--tile-sizes", "2.5"], "tile size"),
    (["--tile-sizes-file", "/nonexistent/tile.sizes"], "tile sizes"),
    (["--target", "opencl"], "target"),
    (["--no-such-option"], "unrecognized"),
], ids=["zero", "letters", "negative", "negative-eq", "float", "missing-sizes-file", "target", "unknown"])
def test_bad_option(options: list[str], substring: str, tmp_path: Path, capsys):
    out = tmp_path / "out.c"
    rc, _, err = run_cli(["optimize", str(VALID_DIR / "c99_for.c"), "-o", str(out), *options], capsys)
    msg = assert_one_error_line(err)
    assert rc == 2, msg
    assert substring in msg.lower(), msg
    assert not out.exists()


# ---- tricky but valid inputs -----------------------------------------------------------------------

def _compile_and_run(src: Path, exe: Path, flags: list[str], openmp: bool) -> bytes:
    cmd = [GCC, "-O2", *(["-fopenmp"] if openmp else []), *flags, str(src), "-o", str(exe), "-lm"]
    cc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"{' '.join(cmd)}\n{cc.stderr}"
    env = dict(os.environ, OMP_NUM_THREADS="2")
    run = subprocess.run([str(exe)], check=False, capture_output=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    return run.stdout


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """stdout of the original program, compiled once per file."""
    cache: dict[Path, bytes] = {}
    d = tmp_path_factory.mktemp("reference")

    def get(path: Path) -> bytes:
        if path not in cache:
            flags = shlex.split(header(path).get("flags", ""))
            cache[path] = _compile_and_run(path, d / (path.stem + ".orig"), flags, openmp=False)
            assert cache[path], f"{path.name} prints nothing"
        return cache[path]

    return get


@needs_gcc
@pytest.mark.parametrize("options", [[], ["--tile-sizes", "2,3,5"]], ids=["default", "small-tiles"])
@pytest.mark.parametrize("path", cases(VALID, ("xfail", "xfail-run")))
def test_valid_input_same_output(path: Path, options: list[str], tmp_path: Path, reference, capsys):
    flags = shlex.split(header(path).get("flags", ""))
    out = tmp_path / path.name
    if not optimize_valid(path, out, options, capsys):
        return
    got = _compile_and_run(out, tmp_path / "opt", flags, openmp=True)
    assert got == reference(path), f"{path.name}: the optimized program prints something else"


def outside_segments(text: str) -> list[str]:
    """The text before the first region, between regions, and after the last (lines split at '\\n' only,
    which is how the C preprocessor counts lines)."""
    lines = text.split("\n")
    lines = [x + "\n" for x in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    segments, cur, inside = [], [], False
    for line in lines:
        m = _PRAGMA.match(line)
        if m and m.group(1) == "scop" and not inside:
            segments.append("".join(cur))
            cur, inside = [], True
        elif m and m.group(1) == "endscop" and inside:
            inside = False
        elif not inside:
            cur.append(line)
    segments.append("".join(cur))
    return segments


def assert_outside_preserved(original: str, optimized: str) -> None:
    segs = outside_segments(original)
    assert len(segs) >= 2
    assert optimized.startswith(segs[0]), "text before the first '#pragma scop' changed"
    assert optimized.endswith(segs[-1]), "text after the last '#pragma endscop' changed"
    pos = len(segs[0])
    for seg in segs[1:-1]:
        k = optimized.find(seg, pos)
        assert k >= 0, f"text between regions changed: {seg!r}"
        pos = k + len(seg)
    assert pos <= len(optimized) - len(segs[-1])


@pytest.mark.parametrize("path", cases(VALID))
def test_outside_of_regions_preserved(path: Path, tmp_path: Path, capsys):
    out = tmp_path / path.name
    if not optimize_valid(path, out, [], capsys):
        return
    original = path.read_bytes().decode("utf-8", errors="surrogateescape")
    optimized = out.read_bytes().decode("utf-8", errors="surrogateescape")
    assert_outside_preserved(original, optimized)
    assert "#pragma scop" not in optimized and "#pragma endscop" not in optimized


@pytest.mark.parametrize("variant", [
    "crlf", "no-final-newline", "latin1-comment", "tabs"])
def test_outside_preserved_odd_text(variant: str, tmp_path: Path, capsys):
    """Line endings, a missing final newline, non-UTF-8 bytes and tabs survive outside the region."""
    text = (VALID_DIR / "two_regions.c").read_bytes()
    if variant == "crlf":
        text = text.replace(b"\n", b"\r\n")
    elif variant == "no-final-newline":
        text = text.rstrip(b"\n")
    elif variant == "latin1-comment":
        text = text.replace(b"/* between the regions */", b"/* entre les r\xe9gions, \xa9 */")
    else:
        text = text.replace(b"\n  ", b"\n\t")
    src, out = tmp_path / "in.c", tmp_path / "out.c"
    src.write_bytes(text)
    rc, _, err = run_cli(["optimize", str(src), "-o", str(out)], capsys)
    assert rc == 0, err
    original = text.decode("utf-8", errors="surrogateescape")
    optimized = out.read_bytes().decode("utf-8", errors="surrogateescape")
    assert_outside_preserved(original, optimized)


# ---- odd files and output paths (issue 14): one line, exit code 2, never an internal error ------------

SMALL = """#include <stdio.h>
#define N 8
double A[N];
int main(void)
{
  int i;
  for (i = 0; i < N; i++) A[i] = i;
#pragma scop
  for (i = 0; i < N; i++)
    A[i] = 2.0 * A[i] + 1.0;
#pragma endscop
  printf("%g\\n", A[3]);
  return 0;
}
"""


@pytest.mark.parametrize("seed", range(4))
def test_binary_garbage_is_one_line(seed: int, tmp_path: Path, capsys):
    """Random bytes: one line (the preprocessor's or the parser's complaint), never an internal error."""
    import random
    src = tmp_path / "garbage.c"
    src.write_bytes(bytes(random.Random(seed).randrange(256) for _ in range(4000)))
    out = tmp_path / "out.c"
    rc, _, err = run_cli(["optimize", str(src), "-o", str(out)], capsys)
    assert_one_error_line(err)  # an error, or the count of regions optimized
    assert rc == 2 or rc == 0 and out.read_bytes() == src.read_bytes(), err  # (no region: left as it is)


@needs_gcc
def test_latin1_byte_outside_the_region_is_kept(tmp_path: Path, capsys):
    """A Latin-1 string literal (not UTF-8) outside the region: optimized, and the byte is kept as it is."""
    src = tmp_path / "latin1.c"
    text = SMALL.replace('printf("%g\\n", A[3]);', 'printf("%g caf\xe9\\n", A[3]);')
    src.write_bytes(text.encode("latin-1"))
    out = tmp_path / "out.c"
    rc, _, err = run_cli(["optimize", str(src), "-o", str(out)], capsys)
    assert rc == 0, err
    assert b'"%g caf\xe9\\n"' in out.read_bytes()


@needs_gcc
def test_statement_of_160_terms(tmp_path: Path, capsys):
    src = tmp_path / "terms.c"
    terms = " + ".join(f"B[i + {k % 5}]" for k in range(160))
    src.write_text(SMALL.replace("double A[N];", "double A[N], B[N + 8];")
                   .replace("A[i] = 2.0 * A[i] + 1.0;", f"A[i] = {terms};"))
    out = tmp_path / "out.c"
    rc, _, err = run_cli(["optimize", str(src), "-o", str(out)], capsys)
    assert rc == 0, err
    assert _compile_and_run(out, tmp_path / "opt", [], True) == _compile_and_run(src, tmp_path / "ref", [], False)


@pytest.mark.parametrize("where, substring", [
    ("{tmp}/missing/out.c", "does not exist"),
    ("{tmp}", "directory"),
    ("/proc/self/polytune-out.c", "cannot write"),
    ("/proc/version", "cannot write"),
    ("/sys/polytune-out.c", "cannot write"),
], ids=["missing-dir", "a-directory", "proc-new", "proc-existing", "read-only-fs"])
@pytest.mark.parametrize("command", ["optimize", "optimize-report"])
def test_unwritable_output_is_one_line(where: str, substring: str, command: str, tmp_path: Path, capsys):
    if where.startswith("/sys") and not os.path.isdir("/sys"):
        pytest.skip("no /sys")
    src = tmp_path / "small.c"
    src.write_text(SMALL)
    target = where.format(tmp=tmp_path)
    argv = ["optimize", str(src), "-o", target] if command == "optimize" else \
        ["optimize", str(src), "-o", str(tmp_path / "ok.c"), "--report", target]
    rc, _, err = run_cli(argv, capsys)
    msg = assert_one_error_line(err)
    assert rc == 2 and substring in msg, msg
    assert not (tmp_path / "ok.c").exists()  # checked before any output is written


def test_output_over_the_input_is_refused_unless_forced(tmp_path: Path, capsys):
    src = tmp_path / "same.c"
    src.write_text(SMALL)
    rc, _, err = run_cli(["optimize", str(src), "-o", str(src)], capsys)
    msg = assert_one_error_line(err)
    assert rc == 2 and "overwrite the input" in msg, msg
    assert src.read_text() == SMALL
    rc, _, err = run_cli(["optimize", str(src), "-o", str(src), "--force"], capsys)
    assert rc == 0, err
    assert "#pragma omp" in src.read_text()
