"""Random C programs with the shapes tests/nestgen.py does not make (issue 14), seeded by one integer.

Each program has 1-3 functions ``kernel<k>(int n, double s)``, each with one ``#pragma scop`` region, and
``main`` calls every kernel for n = 0, 1, 2, 3 and NMAX, in order, printing each returned ``s``; at the end
it prints every array element and the global scalar ``t``. So:
- loop bounds are parametric (``i < n - 1``, ``j < n - i``) and empty for some n (0 and 1 always run);
- inner ranges are empty at the edges of outer loops (``j = i + 1 .. n - 1`` at i = n - 1);
- loops count down and step by 2 or 3 under triangular bounds;
- the scalar ``s`` is live into the region (a parameter) and out of it (returned), and is written, read
  and accumulated across loops; ``t`` (a global) lives across regions and functions;
- several regions sit in several functions.
Every subscript stays inside the arrays for every n <= NMAX (checked by construction: iterators lie in
[0, NMAX], subscripts are `v + c`, `2 * v + c`, `NMAX + 4 - v` or constants). Values stay bounded:
coefficients of an assignment sum to at most 1, accumulations add an eighth.

- shapes an outside generator makes (issue 14, second round): ``if`` guards comparing iterators and
  parameters, ``min``/``max``-like bounds written as conditionals (``i < (n < 7 ? n : 7)``), transposed and
  diagonal accesses of 2-D arrays, a scalar reduced in an inner loop and read after it and after the nest
  (the lastprivate pattern), imperfect nests (statements before and after inner loops), loops starting at a
  parameter (``for (j = n - 1; j >= 0; j--)``).

``COND_SUBSCRIPTS`` turns on conditionals in subscripts (``A[v < 4 ? v : 4]``).

``guarded_program(seed)`` makes another class (issue 33): guards and subscripts with ``%`` and ``/``, loops
counting down by steps, parameters read from argv.

``python tests/progen.py SEED`` prints one program (``--guarded``: one of the guarded class).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

NMAX = 9
SIZE = 2 * NMAX + 8  # every subscript is in [0, 2 * NMAX + 4]
N_VALUES = (0, 1, 2, 3, NMAX)
COND_SUBSCRIPTS = True  # the frontend models them (issue 14 item 3)
ITERS = ("i", "j", "k")


@dataclass(frozen=True)
class Program:
    seed: int
    source: str
    kernels: int
    summary: str

    def __repr__(self) -> str:
        return f"Program(seed={self.seed}: {self.summary})\n{self.source}"


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.features: set[str] = set()

    def pick(self, xs):
        return self.r.choice(list(xs))

    def loop(self, var: str, outer: list[str]) -> str:
        """A loop whose iterator stays in [0, NMAX] for every n <= NMAX (bounds: lower inclusive, upper
        exclusive)."""
        lows = ["0", "1"] + outer + [f"{o} + 1" for o in outer]
        highs = ["n", "n - 1", "n - 2", "n - 3"] + outer + [f"{o} + 1" for o in outer] + \
            [f"n - {o}" for o in outer] + ["3"]
        lo, hi = self.pick(lows), self.pick(highs)
        if hi.startswith("n") or hi in outer or "+" in hi:
            self.features.add("parametric" if hi.startswith("n") else "triangular")
        if hi != "3" and self.r.random() < 0.15:  # min(hi, c) and max(lo, c), as C conditionals
            self.features.add("min-max-bound")
            c = self.pick([2, 5, 7])
            hi = f"({hi} < {c} ? {hi} : {c})"
            if self.r.random() < 0.5:
                lo = f"({lo} > 1 ? {lo} : 1)"
        kind = self.pick(["up"] * 5 + ["down", "down", "step", "step"])
        if kind == "down":
            self.features.add("decreasing")
            if hi.startswith("n"):
                self.features.add("from-parameter")
            step = self.pick(["--", " -= 2"])
            return f"for ({var} = {hi} - 1; {var} >= {lo}; {var}{step})"
        if kind == "step":
            self.features.add("strided")
            return f"for ({var} = {lo}; {var} < {hi}; {var} += {self.pick(['2', '3'])})"
        return f"for ({var} = {lo}; {var} < {hi}; {var}++)"

    def subscript(self, iters: list[str]) -> str:
        if not iters or self.r.random() < 0.1:
            return str(self.pick([0, 2, 5, NMAX]))
        v = self.pick(iters)
        if COND_SUBSCRIPTS and self.r.random() < 0.1:
            self.features.add("conditional-subscript")
            return f"({v} < 4 ? {v} : 4)"
        form = self.r.random()
        if form < 0.7:
            return f"{v} + {self.pick([0, 0, 1, 2, 3])}"
        if form < 0.85:
            return f"2 * {v} + {self.pick([0, 1, 2])}"
        return f"{NMAX + 4} - {v}"

    def access(self, arrays: list[str], iters: list[str]) -> str:
        if len(iters) >= 2 and self.r.random() < 0.15:  # the inner iterator first: a transposed access
            self.features.add("transposed")
            outer, inner = sorted(self.r.sample(range(len(iters)), 2))
            return f"{self.pick(arrays)}[{iters[inner]} + {self.pick([0, 1])}][{iters[outer]}]"
        if iters and self.r.random() < 0.1:
            self.features.add("diagonal")
            v = self.pick(iters)
            return f"{self.pick(arrays)}[{v}][{v} + {self.pick([0, 0, 1])}]"
        return f"{self.pick(arrays)}[{self.subscript(iters)}][{self.subscript(iters)}]"

    def guard(self, iters: list[str]) -> str:
        """A condition on iterators and the parameter n."""
        v = self.pick(iters)
        simple = [f"{v} > 1", f"{v} % 2 == 0", f"{v} < n - 2"]
        if len(iters) < 2 or self.r.random() < 0.3:
            return self.pick(simple)
        self.features.add("if-guard")
        a, b = self.r.sample(iters, 2)
        cmp = self.pick([f"{a} <= {b}", f"{a} < {b} + 2", f"{a} + {b} < n", f"{a} == {b}", f"{b} > n - 3",
                         f"{a} != {b}"])
        return cmp if self.r.random() < 0.7 else f"{cmp} && {self.pick(simple)}"

    def statement(self, arrays: list[str], iters: list[str]) -> str:
        kind = self.pick(["assign"] * 4 + ["accumulate", "scalar_write", "scalar_acc", "scalar_read",
                                           "global_write", "global_read"])
        read = lambda: self.access(arrays, iters)  # noqa: E731
        if kind == "assign":
            text = f"{read()} = {read()} * 0.5 + {read()} * 0.25 + 1.0;"
        elif kind == "accumulate":
            text = f"{read()} += {read()} * 0.125;"
        elif kind == "scalar_write":
            self.features.add("scalar")
            text = f"s = {read()} * 0.5 + {self.pick(['0.25', 's * 0.25'])};"
        elif kind == "scalar_acc":
            self.features.add("scalar")
            text = f"s += {read()} * 0.125;"
        elif kind == "scalar_read":
            self.features.add("scalar")
            text = f"{read()} = s * 0.5 + {read()} * 0.25;"
        elif kind == "global_write":
            self.features.add("global-scalar")
            text = f"t = {read()} * 0.5 + t * 0.25;"
        else:
            self.features.add("global-scalar")
            text = f"{read()} = t * 0.25 + {read()} * 0.5;"
        if iters and self.r.random() < 0.2:
            text = f"if ({self.guard(iters)})\n  {text}"
        return text

    def reduction(self, arrays: list[str], depth: int) -> tuple:
        """A scalar reduced in an inner loop, read after that loop and (at the top) after the nest: the
        pattern OpenMP compiles with lastprivate. Returns the nest (header, body) and the statement after it."""
        self.features |= {"inner-reduction", "scalar"}
        outer, inner = ITERS[:depth - 1], list(ITERS[:depth])
        body: list = [f"{self.access(arrays, list(outer))} += s * 0.125;"] if self.r.random() < 0.3 else []
        if self.r.random() < 0.6:
            body.append("s = 0.0;")
        body.append((self.loop(ITERS[depth - 1], list(outer)), [f"s += {self.access(arrays, inner)} * 0.125;"]))
        body.append(f"{self.access(arrays, list(outer))} = s * 0.5 + {self.access(arrays, list(outer))} * 0.25;")
        top = node = (self.loop(ITERS[0], []), [])
        for lvl in range(1, depth - 1):
            child = (self.loop(ITERS[lvl], list(ITERS[:lvl])), [])
            node[1].append(child)
            node = child
        node[1].extend(body)
        return top, f"{self.access(arrays, [])} = s * 0.5 + t * 0.25;"

    def region(self, arrays: list[str]) -> list[str]:
        """The statements of one region: nests sharing outer loops with the previous statement or not."""
        top: list = []
        prev: list = []  # path of (header, body list) of the previous statement
        for s in range(self.r.randint(1, 4)):
            depth = self.r.randint(1, 3)
            share = self.r.randint(0, min(depth, len(prev))) if s else 0
            path = prev[:share]
            for lvl in range(share, depth):
                node = (self.loop(ITERS[lvl], [ITERS[q] for q in range(lvl)]), [])
                (path[-1][1] if path else top).append(node)
                path.append(node)
            path[-1][1].append(self.statement(arrays, list(ITERS[:depth])))
            prev = path
        if self.r.random() < 0.3:
            nest, after = self.reduction(arrays, self.r.randint(2, 3))
            top.insert(self.r.randint(0, len(top)), after)
            top.insert(top.index(after), nest)
        if _imperfect(top):
            self.features.add("imperfect")
        return _render(top, 1)


def _imperfect(items: list) -> bool:
    """Some loop body holds both a statement and a loop."""
    for it in items:
        if not isinstance(it, str):
            body = it[1]
            if (any(isinstance(b, str) for b in body) and any(not isinstance(b, str) for b in body)) \
                    or _imperfect(body):
                return True
    return False


def _render(items: list, indent: int) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    for it in items:
        if isinstance(it, str):
            out += [pad + line for line in it.split("\n")]
        else:
            header, body = it
            out.append(pad + header + " {")
            out += _render(body, indent + 1)
            out.append(pad + "}")
    return out


def program(seed: int) -> Program:
    g = _Gen(seed)
    arrays = ["A", "B", "C"][:g.r.randint(1, 3)]
    nk = g.pick([1, 1, 2, 3])
    if nk > 1:
        g.features.add("several-regions")
    decls = ", ".join(f"{a}[{SIZE}][{SIZE}]" for a in arrays)
    src = ["#include <stdio.h>", "", f"#define NMAX {NMAX}", f"static double {decls};", "static double t = 0.5;", ""]
    for k in range(nk):
        src += [f"static double kernel{k}(int n, double s)", "{", "  int i, j, k;", "#pragma scop"]
        src += g.region(arrays)
        src += ["#pragma endscop", "  return s;", "}", ""]
    src += ["int main(void)", "{", "  int i, j, n;", f"  for (i = 0; i < {SIZE}; i++)",
            f"    for (j = 0; j < {SIZE}; j++) {{"]
    src += [f"      {a}[i][j] = (double)((i * {7 + 2 * q} + j * {3 + q} + {q}) % 17) * 0.125 - 1.0;"
            for q, a in enumerate(arrays)]
    src += ["    }", f"  for (n = 0; n < {len(N_VALUES)}; n++) {{",
            f"    static const int ns[] = {{{', '.join(map(str, N_VALUES))}}};"]
    src += [f'    printf("%.17g\\n", kernel{k}(ns[n], 0.75 + {k}));' for k in range(nk)]
    src += ["  }", f"  for (i = 0; i < {SIZE}; i++)", f"    for (j = 0; j < {SIZE}; j++) {{"]
    src += [f'      printf("%.17g\\n", {a}[i][j]);' for a in arrays]
    src += ["    }", '  printf("%.17g\\n", t);', "  return 0;", "}", ""]
    return Program(seed, "\n".join(src), nk, ", ".join(sorted(g.features)) or "plain")




# ---- guarded programs (issue 33, item 4): guards and subscripts with `%` and `/`, loops counting down
# with steps, parameters read from argv at run time. Its own generator: `guarded_program(seed)`.
GUARD_PMAX = 16  # runtime parameters are clamped to [0, GUARD_PMAX]
GUARD_VMAX = GUARD_PMAX + 6  # every iterator lies in [0, GUARD_VMAX] (a bound is at most an outer one + 2)
GUARD_SIZE = GUARD_VMAX + GUARD_PMAX + 12  # every subscript is in [0, GUARD_SIZE - 1]
GUARD_ARGS = ((), ("0", "0"), ("3", "5"), (str(GUARD_PMAX), str(GUARD_PMAX)), ("7", "12"), ("12", "2"))


class _GuardGen:
    """Programs in the style of issue 33's reproduction 4: ``n`` and ``p`` from argv, ``m`` a constant
    variable, loops over them counting up or down by 1-3, guards ``v % d == r`` and ``(v - 1) / 2 > w - c``,
    subscripts ``(v - 1) / 2 + c``, ``v % d + c``, ``(v + w) / 3 + c``."""

    # `/` and `%` terms per region: each makes the dependence analysis split its relations on the remainder,
    # and a region with eight of them (three statements) ran past 15 minutes in isl (issue 33 item 5's matter)
    DIV_BUDGET = 3

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.features: set[str] = set()
        self.divs = 0

    def pick(self, xs):
        return self.r.choice(list(xs))

    def loop(self, var: str, outer: list[str]) -> str:
        lows = ["0", "1", "2", "5"] + outer
        highs = ["n", "p", "m", "m - 3", "p - 2", str(GUARD_PMAX)] + [f"{o} + 2" for o in outer] + \
            [f"p - {o}" for o in outer]
        lo, hi = self.pick(lows), self.pick(highs)
        step = self.pick([1, 1, 2, 3])
        if any(x in hi for x in "np"):
            self.features.add("runtime-bound")
        if step > 1:
            self.features.add("step")
        if self.r.random() < 0.5:
            self.features.add("down")
            if self.r.random() < 0.5:  # `for (i = m - 3; i > 5; i -= 3)`: the start is a bound, the end strict
                return f"for ({var} = {hi}; {var} > {lo}; {var}{' -= ' + str(step) if step > 1 else '--'})"
            return f"for ({var} = {hi} - 1; {var} >= {lo}; {var}{' -= ' + str(step) if step > 1 else '--'})"
        if self.r.random() < 0.3:  # `j >= i + 2` style: the bound an expression of the outer iterator
            return f"for ({var} = {lo}; {var} <= {hi}; {var}{' += ' + str(step) if step > 1 else '++'})"
        return f"for ({var} = {lo}; {var} < {hi}; {var}{' += ' + str(step) if step > 1 else '++'})"

    def subscript(self, iters: list[str]) -> str:
        v = self.pick(iters)
        form = self.r.random()
        if 0.3 <= form < 0.7:
            self.divs += 1
            if self.divs > self.DIV_BUDGET:
                form = self.pick([0.0, 0.8])
        if form < 0.3:
            return f"{v} + {self.pick([0, 1, 6, 7])}"
        if form < 0.5:
            self.features.add("floor-div-subscript")
            return f"({v} - 1) / 2 + {self.pick([0, 1, 2])}"
        if form < 0.6:
            self.features.add("floor-div-subscript")
            w = self.pick(iters)
            return f"({v} + {w}) / 3 + {self.pick([0, 1])}"
        if form < 0.7:
            self.features.add("mod-subscript")
            return f"{v} % {self.pick([2, 3])} + {self.pick([0, 4])}"
        if form < 0.85:
            self.features.add("parameter-subscript")
            return f"{self.pick(['n', 'p'])} - {v} + {GUARD_VMAX}"
        return f"{GUARD_VMAX + 4} - {v}"

    def access(self, array: str, iters: list[str]) -> str:
        return f"{array}[{self.subscript(iters)}][{self.subscript(iters)}]"

    def guard(self, iters: list[str]) -> str:
        v, w = self.pick(iters), self.pick(iters)
        self.features.add("guard")
        self.divs += 1
        return self.pick([f"{v} % 2 == 0", f"{v} % 3 != 1", f"({v} - 1) / 2 > {w} - 4", f"({v} + {w}) % 2 == 1",
                          f"{v} / 3 < p - 5", f"{v} % 2 == 0 && {w} > 3"])

    def statement(self, arrays: list[str], iters: list[str]) -> str:
        dst = self.access(self.pick(arrays), iters)
        a, b = self.access(self.pick(arrays), iters), self.access(self.pick(arrays), iters)
        text = self.pick([f"{dst} = {a} * 0.25;", f"{dst} = ({a} + {iters[-1]}) * 0.33;",
                          f"{dst} = {a} * 0.5 + {b} * 0.25;", f"{dst} += {a} * 0.125;"])
        if self.r.random() < 0.5 and self.divs < self.DIV_BUDGET:
            text = f"if ({self.guard(iters)})\n  {text}"
        return text

    def region(self, arrays: list[str]) -> list[str]:
        depth = self.r.randint(2, 3)
        iters = list(ITERS[:depth])
        node = top = (self.loop(iters[0], []), [])
        for lvl in range(1, depth):
            child = (self.loop(iters[lvl], iters[:lvl]), [])
            if self.r.random() < 0.25:  # a statement beside the inner loop
                node[1].append(self.statement(arrays, iters[:lvl]))
            node[1].append(child)
            node = child
        for _ in range(self.r.randint(1, 2)):
            node[1].append(self.statement(arrays, iters))
        return _render([top], 1)


def guarded_program(seed: int) -> Program:
    """A program of the guarded class (see _GuardGen); it reads ``n`` and ``p`` from argv (GUARD_ARGS lists
    the runs to compare) and prints every element of its arrays."""
    g = _GuardGen(seed)
    arrays = ["A", "B"][:g.r.randint(1, 2)]
    decls = ", ".join(f"{a}[{GUARD_SIZE}][{GUARD_SIZE}]" for a in arrays)
    m = g.r.randint(0, GUARD_PMAX)
    src = ["#include <stdio.h>", "#include <stdlib.h>", f"double {decls};", "", "int main(int argc, char **argv)",
           "{", f"  int n = argc > 1 ? atoi(argv[1]) : {g.r.randint(0, GUARD_PMAX)};", f"  int m = {m};",
           f"  int p = argc > 2 ? atoi(argv[2]) : {g.r.randint(0, GUARD_PMAX)};", "  int i, j, k, a, b;",
           f"  if (n < 0) n = 0;\n  if (n > {GUARD_PMAX}) n = {GUARD_PMAX};",
           f"  if (p < 0) p = 0;\n  if (p > {GUARD_PMAX}) p = {GUARD_PMAX};",
           f"  for (a = 0; a < {GUARD_SIZE}; a++)", f"    for (b = 0; b < {GUARD_SIZE}; b++) {{"]
    src += [f"      {x}[a][b] = (a * {3 + q} + b * {1 + 4 * q}) % {7 + 4 * q} - {3 + 2 * q};"
            for q, x in enumerate(arrays)]
    src += ["    }", "#pragma scop"] + g.region(arrays) + ["#pragma endscop",
                                                          f"  for (a = 0; a < {GUARD_SIZE}; a++)",
                                                          f"    for (b = 0; b < {GUARD_SIZE}; b++)"]
    src += ['      printf("' + " ".join(["%.17g"] * len(arrays)) + '\\n", ' +
            ", ".join(f"{x}[a][b]" for x in arrays) + ");", "  return 0;", "}", ""]
    return Program(seed, "\n".join(src), 1, ", ".join(sorted(g.features)) or "plain")


if __name__ == "__main__":  # pragma: no cover
    import sys

    make = guarded_program if "--guarded" in sys.argv else program
    seeds = [a for a in sys.argv[1:] if not a.startswith("--")]
    print(make(int(seeds[0]) if seeds else 0))
