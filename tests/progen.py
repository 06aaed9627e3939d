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

``python tests/progen.py SEED`` prints one program.
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


if __name__ == "__main__":  # pragma: no cover
    import sys

    print(program(int(sys.argv[1]) if len(sys.argv) > 1 else 0))


# ---------------------------------------------------------------------------------------------- contractions
CMAX = 29  # the largest trip count of a contraction's loops (several blocks of small block sizes)


def contraction_program(seed: int) -> Program:
    """A random contraction (poly/contraction.py's shapes), seeded by one integer: `C[..] op= [alpha *] A[..] *
    B[..] [+ second product]` over rows i, columns j and k, in a random loop order, with transposed operands
    and result, an optional batch loop (outermost or innermost of the free ones), triangular bounds (j <= i,
    j >= i + c), extents that differ per loop and depend on n (smaller than a block at small n), an optional
    beta scaling before, double or int elements. ``main`` runs the kernel for several n and prints every
    element (exact: the packed code keeps each element's operations in order)."""
    r = random.Random(seed)
    ty = r.choice(["double", "double", "int"])
    batch = r.random() < 0.3
    tri = r.choice(["", "", "j <= i", "j >= i + 1", "j <= i + 2"])
    ext = {v: r.choice(["n", "n + 3", "2 * n + 1", "n - 1"]) for v in "ijk"}
    if tri:
        ext["j"] = ext["i"]
    bsub = "[b]" if batch else ""
    a = r.choice([("A", "[i][k]"), ("A", "[k][i]")])
    b = r.choice([("B", "[k][j]"), ("B", "[j][k]")])
    c = r.choice([("C", "[i][j]"), ("C", "[i][j]"), ("C", "[j][i]")])
    alpha = r.choice(["", "alpha * "]) if ty == "double" else r.choice(["", "3 * "])
    second = r.random() < 0.25
    prod = f"{alpha}{a[0]}{bsub}{a[1]} * {b[0]}{bsub}{b[1]}"
    if second:
        prod += f" + {b[0]}{bsub}{a[1].replace('i', 'j')} * {a[0]}{bsub}{b[1].replace('j', 'i')}"
    w = f"{c[0]}{bsub}{c[1]}"
    form = r.choice(["+=", "-=", "= w +", "= w -"])
    stmt = f"{w} = {w} {form.split()[2]} ({prod});" if form.startswith("=") else f"{w} {form} {prod};"
    order = r.sample("ijk", 3)
    if tri and order.index("j") < order.index("i"):
        order.remove("i")
        order.insert(order.index("j"), "i")  # (the triangle's bound j <= i needs i outside j)
    loops = []
    for v in order:
        hi = f"{ext[v]}"
        if v == "j" and tri:
            lo, hi = {"j <= i": ("0", "i + 1"), "j >= i + 1": ("i + 1", hi),
                      "j <= i + 2": ("0", f"(i + 3 < {ext['j']} ? i + 3 : {ext['j']})")}[tri]
        else:
            lo = "0"
        loops.append(f"for ({v} = {lo}; {v} < {hi}; {v}++)")
    if batch:
        loops.insert(r.choice([0, 1]) if order[0] != "j" or not tri else 0, "for (b = 0; b < NB; b++)")
    beta = r.random() < 0.4 and not batch
    body = []
    if beta:
        scale = "beta" if ty == "double" else "2"
        body += [f"for (i = 0; i < {ext['i']}; i++)", f"  for (j = 0; j < {ext['j']}; j++)",
                 f"    {c[0]}{c[1]} *= {scale};"]
    indent = ""
    for lp in loops:
        body.append(indent + lp)
        indent += "  "
    body.append(indent + stmt)
    dims = f"[{2 * CMAX + 4}][{2 * CMAX + 4}]"
    decl = ", ".join(f"{x}{'[NB]' if batch else ''}{dims}" for x in "ABC")
    src = ["#include <stdio.h>", "", f"#define NMAX {CMAX // 2}", "#define NB 3", f"static {ty} {decl};", "",
           f"static void kernel(int n, {ty} alpha, {ty} beta)", "{", "  int b, i, j, k;", "#pragma scop"]
    src += ["  " + line for line in body]
    src += ["#pragma endscop", "  (void)alpha; (void)beta;", "}", "", "int main(void)", "{",
            "  int b, i, j, n;", f"  for (b = 0; b < {'NB' if batch else 1}; b++)",
            f"    for (i = 0; i < {2 * CMAX + 4}; i++)", f"      for (j = 0; j < {2 * CMAX + 4}; j++) {{"]
    for q, x in enumerate("ABC"):
        val = f"(i * {7 + 2 * q} + j * {3 + q} + b + {q}) % 17"
        src.append(f"        {x}{bsub}[i][j] = " + (f"({val}) * 0.125 - 1.0;" if ty == "double" else f"{val} - 8;"))
    src += ["      }", "  for (n = 0; n <= NMAX; n += 3)", "    kernel(n, 1.5, 0.75);" if ty == "double" else
            "    kernel(n, 3, 2);", f"  for (b = 0; b < {'NB' if batch else 1}; b++)",
            f"    for (i = 0; i < {2 * CMAX + 4}; i++)", f"      for (j = 0; j < {2 * CMAX + 4}; j++)",
            '        printf("' + ("%.17g" if ty == "double" else "%d") + f'\\n", C{bsub}[i][j]);',
            "  return 0;", "}", ""]
    summary = ", ".join(filter(None, [ty, "batch" if batch else "", tri, "beta" if beta else "",
                                      "two products" if second else "", "".join(order), a[1], b[1], c[1], form]))
    return Program(seed, "\n".join(src), 1, summary)
