"""Odd tile sizes on strided, triangular and decreasing nests 3-4 deep never fail where size 32 works (issue
14: ``--tile-sizes 2,7,3,5`` on a strided triangular nest once gave isl's "cannot handle void expression",
exit 3; it never reproduced). A search, under ``-m slow``: ``POLYTUNE_NESTS`` nests (default 60) from seed
``POLYTUNE_NESTS_START`` (default 0), each with every tile-size tuple of ``SIZES`` under both schedulers and
with and without unroll-and-jam, generated in-process from one analysis; one in four nests is also compiled
and run against the original.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import compile_run

from polytune.pipeline import OptimizeOptions, analyze, generate

SIZES = [(2, 7, 3, 5), (3, 5, 7, 2), (7, 3, 5, 2), (5, 2, 7, 3), (3, 3, 3, 3), (1, 7, 3, 5), (2, 7), (7, 5, 3),
         (13, 9, 11, 3), (32,)]
START = int(os.environ.get("POLYTUNE_NESTS_START", "0"))
NESTS = range(START, START + int(os.environ.get("POLYTUNE_NESTS", "60")))


def nest(seed: int) -> str:
    """A 3-4 deep nest of strided (`+= 2`, `+= 3`), triangular (`j <= i`), decreasing and plain loops with
    1-3 statements, sometimes one before the innermost loop; a main that initializes, runs and prints."""
    r = random.Random(seed)
    its = "ijkl"[:r.randint(3, 4)]
    heads = []
    for d, v in enumerate(its):
        outer = its[:d]
        kind = r.choice(["up", "up", "step2", "step3", "down", "tri", "tri"])
        lo = r.choice(["0", "1"] + list(outer) + [f"{o} + 1" for o in outer])
        hi = r.choice(["N", "N - 1"] + [f"{o} + 1" for o in outer] + [f"N - {o}" for o in outer])
        if kind == "tri" and outer:
            heads.append(f"for ({v} = 0; {v} <= {r.choice(outer)}; {v}++)")
        elif kind.startswith("step"):
            heads.append(f"for ({v} = {lo}; {v} < {hi}; {v} += {kind[-1]})")
        elif kind == "down":
            heads.append(f"for ({v} = {hi} - 1; {v} >= {lo}; {v}--)")
        else:
            heads.append(f"for ({v} = {lo}; {v} < {hi}; {v}++)")
    lines = ["#include <stdio.h>", "#define N 20", "double A[N + 2][N + 2], B[N + 2][N + 2], C[N + 2][N + 2];",
             "int main(void)", "{", f"  int {', '.join(its)};", "  for (i = 0; i < N + 2; i++)",
             "    for (j = 0; j < N + 2; j++) { A[i][j] = (i * 7 + j) % 11 * 0.25; B[i][j] = (i + 3 * j) % 5 * 0.5;"
             " C[i][j] = (i * j) % 3; }", "#pragma scop"]
    pad = "  "
    for h in heads[:-1]:
        lines.append(pad + h + " {")
        pad += "  "
    if r.random() < 0.4:
        lines.append(pad + f"{r.choice('ABC')}[{its[0]}][{its[-2]}] += 1.0;")
    lines.append(pad + heads[-1] + " {")
    for _ in range(r.randint(1, 3)):
        a, b = r.sample("ABC", 2)
        sub = lambda: f"[{r.choice(its)}][{r.choice(its)}]"  # noqa: E731
        lines.append(pad + f"  {a}{sub()} = {b}{sub()} * 0.5 + {a}{sub()} * 0.25;")
    lines.append(pad + "}")
    for _ in heads[:-1]:
        pad = pad[:-2]
        lines.append(pad + "}")
    lines += ["#pragma endscop", "  double cs = 0;", "  for (i = 0; i < N + 2; i++)",
              "    for (j = 0; j < N + 2; j++) cs += (i + 2 * j + 1) * (A[i][j] + 3 * B[i][j] + 5 * C[i][j]);",
              '  printf("checksum: %.17g\\n", cs);', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("seed", NESTS)
def test_odd_tile_sizes_never_fail_on_strided_triangular_nests(tmp_path, seed):
    src = tmp_path / "nest.c"
    src.write_text(nest(seed))
    program = analyze(str(src))
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False) if seed % 4 == 0 else None
    for sizes in SIZES:
        for schedule in ("pluto", "outer"):
            for unroll in (0, 4):
                opts = OptimizeOptions(tile_sizes=sizes, schedule=schedule, unroll_jam=unroll)
                text = generate(program, opts).text  # any exception is the failure sought
                if ref is not None and sizes[0] in (2, 13):
                    out = Path(tmp_path / "out.c")
                    out.write_text(text)
                    got = compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=2)
                    assert got == ref, f"{sizes} {schedule} unroll {unroll}\n{nest(seed)}"
