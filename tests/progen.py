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

``int_program(seed)`` makes another class of programs: C's integer types and conversions (see there).

``guarded_program(seed)`` makes another class (issue 33): guards and subscripts with ``%`` and ``/``, loops
counting down by steps, parameters read from argv.

``python tests/progen.py SEED`` prints one program (``--ints``: of int_program; ``--guarded``: of the guarded
class).
"""
from __future__ import annotations

import random
import re
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


# ---- C's integer types and conversions (issue 33): a generator feature of its own -------------------------
# `int_program(seed)`: each kernel takes one parameter per width and signedness (`int n, unsigned un, long ln,
# size_t sn, short sh, unsigned char uc`, all equal to the n of the call) and fills `long` arrays with
# expressions that mix them with loop iterators declared with every integer type (char to size_t, signed and
# unsigned; sibling loops may declare one name with two types, `for (j = ...)` loops count in the function's
# own `int i; unsigned j; long k`), whose starts are parenthesized or cast (`(1)`, `(unsigned)1`,
# `(4 + 1) / 2`, `(long)(i + 1)`), in bounds that compare them with parameters of other widths. Every
# program is one polytune must accept: no bound or subscript converts a value that may be negative to
# unsigned (a signed parameter is never compared with an unsigned iterator, an unsigned parameter never has
# a constant subtracted), iterators stay in [0, NMAX] and subscripts are `v + c`. Bodies may wrap around
# (unsigned arithmetic is defined) but never overflow a signed type: a product has a small factor (an
# iterator, a parameter or a constant), every value stored is reduced `% 1009`, and divisions are by
# constants.

INT_TYPES = ("int", "unsigned", "long", "unsigned long", "size_t", "short", "unsigned short", "signed char",
             "unsigned char", "char")
INT_PARAMS = {"n": "int", "un": "unsigned", "ln": "long", "sn": "size_t", "sh": "short", "uc": "unsigned char"}
INT_LOCALS = {"i": "int", "j": "unsigned", "k": "long"}  # the function's own iterators, for `for (j = ...)`


_NARROW = ("short", "unsigned short", "signed char", "unsigned char", "char")  # a cast to these may change a
# value in a bound, which polytune refuses unless it can prove the value in range


def _rank(t: str) -> tuple[int, bool]:
    """(bits, unsigned) of C type *t* after the integer promotions (LP64)."""
    if t in _NARROW or t == "int":
        return 32, False
    return (64 if "long" in t or t == "size_t" else 32), t.startswith("unsigned") or t == "size_t"


def _unsigned_conversion(a: str, b: str) -> bool:
    """Whether C's usual arithmetic conversions of types *a* and *b* give an unsigned type."""
    (x, ux), (y, uy) = _rank(a), _rank(b)
    if ux == uy:
        return ux
    u, s = (x, y) if ux else (y, x)
    return u >= s


class _IntGen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.features: set[str] = set()

    def pick(self, xs):
        return self.r.choice(list(xs))

    def loop(self, var: str, outer: list[tuple[str, str]], used: dict[str, str]) -> tuple[str, str]:
        """(header, the iterator's type) of a loop over [0, NMAX]. *outer*: (iterator, type) of the enclosing
        loops; *used*: the type this name had in an earlier loop of the region (a sibling)."""
        if self.r.random() < 0.25:
            t, decl = INT_LOCALS[var], ""
            self.features.add("assigned-iterator")
        else:
            t = self.pick(INT_TYPES)
            decl = f"{t} "
            if var in used and used[var] != t:
                self.features.add("sibling-types")
        used[var] = t
        unsigned = t.startswith("unsigned") or t == "size_t"  # wraps below 0 (unsigned char too)
        self.features.add("unsigned-iterator" if unsigned else "signed-iterator")
        if t in _NARROW:
            self.features.add("narrow-iterator")
        # bounds: parameters (P), P + 1, constants, outer iterators; never a signed value converted to unsigned
        highs = [p for p, pt in INT_PARAMS.items() if not (_unsigned_conversion(t, pt) and not _rank(pt)[1])]
        highs += [f"{p} + 1" for p in highs if _rank(INT_PARAMS[p])[1]] + ["3", "(5)"]
        highs += [f"{o} + 1" for o, ot in outer if not (_unsigned_conversion(t, ot) and not _rank(ot)[1])]
        if any(h.split()[0] in INT_PARAMS and INT_PARAMS[h.split()[0]] != t for h in highs):
            self.features.add("mixed-bound")
        lows = ["0", "1", "(1)", f"({t})1", "(4 + 1) / 2", "(0)"] + [o for o, _ in outer] + \
            [f"({o})" for o, _ in outer] + [f"({t})({o} + 1)" for o, _ in outer if t not in _NARROW]
        kind = self.pick(["up"] * 5 + ["down", "down", "step"])
        if kind == "down" and unsigned:  # from a value that cannot be negative, down to a bound above 0
            hi = self.pick([p for p, pt in INT_PARAMS.items() if _rank(pt)[1]] + ["(9)", f"({t})7"] +
                           [o for o, _ in outer])
            lo = self.pick(["0", "1"] + [o for o, ot in outer])
            self.features.add("down-unsigned")
            return f"for ({decl}{var} = {hi}; {var} > {lo}; {var}--)", t
        if kind == "down":
            hi = self.pick([h for h in highs if not any(h.startswith(p) for p, pt in INT_PARAMS.items()
                                                        if _rank(pt)[1])])
            # a signed iterator compared with an unsigned bound converts below 0 to a huge value: C would not stop
            lo = self.pick(["0", "1"] + [o for o, ot in outer if not _unsigned_conversion(t, ot)])
            return f"for ({decl}{var} = {hi} - 1; {var} >= {lo}; {var}{self.pick(['--', ' -= 2'])})", t
        lo, hi = self.pick(lows), self.pick(highs)
        if lo.startswith("("):
            self.features.add("cast-start" if lo.startswith(f"({t})") else "parenthesized-start")
        step = f"{var}++" if kind == "up" else f"{var} += {self.pick([2, 3])}"
        return f"for ({decl}{var} = {lo}; {var} < {hi}; {step})", t

    def atom(self, iters: list[tuple[str, str]]) -> str:
        r = self.r.random()
        if iters and r < 0.45:
            return self.pick([v for v, _ in iters])
        if r < 0.8:
            return self.pick(INT_PARAMS)
        return str(self.pick([0, 1, 2, 3, 7, 9]))

    def term(self, iters: list[tuple[str, str]]) -> str:
        """An atom, two atoms under an operator, or a cast of either (values: |v| < 2^33 in a signed type)."""
        r = self.r.random()
        if r < 0.35:
            return self.atom(iters)
        if r < 0.85:
            a, b = self.atom(iters), self.atom(iters)
            op = self.pick(["+", "-", "-", "*", "<", ">="])
            if op in ("-", "+", "*"):
                self.features.add("mixed-body")
            return f"({a} {op} {b})"
        inner = self.term(iters)
        self.features.add("body-cast")
        return f"({self.pick(INT_TYPES)})({inner})"

    def expr(self, iters: list[tuple[str, str]], arrays: list[str]) -> str:
        a, b = self.term(iters), self.term(iters)
        op = self.pick(["+", "-", "*", "/", "%"])
        if op == "*":  # one factor small: an atom
            b = self.atom(iters)
        if op in ("/", "%"):
            b = self.pick(["3", "7", "1009"])
        text = f"({a} {op} {b})"
        if self.r.random() < 0.3:
            text = f"({text} + {self.pick(arrays)}[{self.subscript(iters)}][{self.subscript(iters)}])"
        return text

    def subscript(self, iters: list[tuple[str, str]]) -> str:
        if not iters or self.r.random() < 0.1:
            return str(self.pick([0, 2, NMAX]))
        return f"{self.pick([v for v, _ in iters])} + {self.pick([0, 0, 1, 2])}"

    def guard(self, iters: list[tuple[str, str]]) -> str:
        v, t = self.pick(iters)
        ok = [p for p, pt in INT_PARAMS.items() if not (_unsigned_conversion(t, pt) and not _rank(pt)[1])]
        return self.pick([f"{v} % 2 == 0", f"{v} > 1"] + [f"{v} < {p}" for p in ok])

    def statement(self, iters: list[tuple[str, str]], arrays: list[str]) -> str:
        target = f"{self.pick(arrays)}[{self.subscript(iters)}][{self.subscript(iters)}]"
        text = f"{target} {self.pick(['=', '=', '+='])} (long)(({self.expr(iters, arrays)}) % 1009);"
        if iters and self.r.random() < 0.2:
            self.features.add("if-guard")
            text = f"if ({self.guard(iters)})\n  {text}"
        return text

    def region(self, arrays: list[str]) -> list[str]:
        top: list = []
        prev: list = []  # (header, body, iterator, type) of the previous statement's loops
        used: dict[str, str] = {}
        for s in range(self.r.randint(1, 4)):
            depth = self.r.randint(1, 3)
            share = self.r.randint(0, min(depth, len(prev))) if s else 0
            path = prev[:share]
            for lvl in range(share, depth):
                header, t = self.loop(ITERS[lvl], [(p[2], p[3]) for p in path], used)
                node = (header, [], ITERS[lvl], t)
                (path[-1][1] if path else top).append(node)
                path.append(node)
            path[-1][1].append(self.statement([(p[2], p[3]) for p in path], arrays))
            prev = path
        return _render([_strip(x) for x in top], 1)


def _strip(item):
    """A generated loop (header, body, iterator, type) as _render's (header, body)."""
    return item if isinstance(item, str) else (item[0], [_strip(x) for x in item[1]])


def int_program(seed: int) -> Program:
    """A program of C's integer types and conversions (see above), seeded by *seed*."""
    g = _IntGen(seed)
    arrays = ["A", "B"][:g.r.randint(1, 2)]
    nk = g.pick([1, 1, 2])
    params = ", ".join(f"{t} {p}" for p, t in INT_PARAMS.items())
    decls = ", ".join(f"{a}[{SIZE}][{SIZE}]" for a in arrays)
    src = ["#include <stdio.h>", "#include <stddef.h>", "", f"static long {decls};", ""]
    for k in range(nk):
        src += [f"static void kernel{k}({params})", "{"] + [f"  {t} {v};" for v, t in INT_LOCALS.items()]
        src += ["#pragma scop"] + g.region(arrays) + ["#pragma endscop", "}", ""]
    src += ["int main(void)", "{", "  int i, j, n;", f"  for (i = 0; i < {SIZE}; i++)",
            f"    for (j = 0; j < {SIZE}; j++) {{"]
    src += [f"      {a}[i][j] = (i * {7 + 2 * q} + j * {3 + q} + {q}) % 17 - 8;" for q, a in enumerate(arrays)]
    src += ["    }", f"  for (n = 0; n < {len(N_VALUES)}; n++) {{",
            f"    static const int ns[] = {{{', '.join(map(str, N_VALUES))}}};"]
    src += [f"    kernel{k}(ns[n], (unsigned)ns[n], (long)ns[n], (size_t)ns[n], (short)ns[n], (unsigned char)ns[n]);"
            for k in range(nk)]
    src += ["  }", f"  for (i = 0; i < {SIZE}; i++)", f"    for (j = 0; j < {SIZE}; j++) {{"]
    src += [f'      printf("%ld\\n", {a}[i][j]);' for a in arrays]
    src += ["    }", "  return 0;", "}", ""]
    return Program(seed, "\n".join(src), nk, ", ".join(sorted(g.features)) or "plain")


# --- Large and straight-line regions (issue 33, item 5): optimize must end within its wall-clock limit ---

LARGE_ARRAYS = tuple(f"L{k}" for k in range(8))
LARGE_SIZE = 64


def large_region(statements: int, in_loop: bool, seed: int = 0) -> str:
    """A program whose one region is *statements* assignments over 8 shared 1-D arrays: straight-line
    (constant subscripts) or all in the body of one loop ``for (i = 0; i < n; i++)`` (subscripts ``i + c``).
    ``main`` fills the arrays, runs the region with n = 50 and prints every element. Values stay bounded
    (each right side is a convex combination)."""
    r = random.Random(seed)
    lines = ["#include <stdio.h>", "", f"static double {', '.join(f'{a}[{LARGE_SIZE}]' for a in LARGE_ARRAYS)};",
             "", "static void kernel(int n)", "{", "  int i;", "#pragma scop"]
    pad = "  "
    if in_loop:
        lines.append("  for (i = 0; i < n; i++) {")
        pad = "    "
    for _ in range(statements):
        a, b, c = r.sample(LARGE_ARRAYS, 3)
        if in_loop:
            x, y, z = (f"i + {r.randint(0, 12)}" for _ in range(3))
        else:
            x, y, z = (str(r.randrange(LARGE_SIZE)) for _ in range(3))
        w = r.choice(("0.5", "0.25", "0.75"))
        lines.append(f"{pad}{a}[{x}] = {b}[{y}] * {w} + {c}[{z}] * (1.0 - {w});")
    if in_loop:
        lines.append("  }")
    lines += ["#pragma endscop", "}", "", "int main(void)", "{", "  int i;", f"  for (i = 0; i < {LARGE_SIZE}; i++) {{"]
    lines += [f"    {a}[i] = (double)((i * {3 + 2 * q} + {q}) % 13) * 0.5;" for q, a in enumerate(LARGE_ARRAYS)]
    lines += ["  }", "  kernel(50);", f"  for (i = 0; i < {LARGE_SIZE}; i++)"]
    fmt, values = " ".join(["%.17g"] * len(LARGE_ARRAYS)), ", ".join(f"{a}[i]" for a in LARGE_ARRAYS)
    lines += [f'    printf("{fmt}\\n", {values});', "  return 0;", "}", ""]
    return "\n".join(lines)


def large_program(seed: int) -> Program:
    """A random large or straight-line region (large_region): 50-2,000 statements, straight-line or in one
    loop. Its check is on the clock: optimize within its default limit, original or optimized code that
    prints what the original prints."""
    r = random.Random(seed)
    in_loop = r.random() < 0.5
    n = r.choice((50, 100, 300, 1000, 2000))
    shape = "in one loop" if in_loop else "straight-line"
    return Program(seed, large_region(n, in_loop, seed), 1, f"{n} statements {shape}")


_ELEMENT = re.compile(r"\b([ABC])\[([^\[\]]*)\]\[([^\[\]]*)\]")


def flattened(prog: Program, pointers: bool = False) -> Program:
    """The same program with flat arrays: `A[x][y]` becomes `A[(x) * w + (y)]` over `A[SIZE * SIZE]`, the
    row length w a run-time value (the program's first argument, SIZE when absent: then it prints what
    *prog* prints; a smaller w overlaps the rows, and the optimized program must still print what the flat
    original prints). *pointers*: the kernels take the arrays as pointer parameters of a function that is
    not static (their overlap is checked at run time)."""
    arrays = [a for a in "ABC" if re.search(rf"\b{a}\[{SIZE}\]\[", prog.source)]
    src = re.sub(rf"\b([ABC])\[{SIZE}\]\[{SIZE}\]", rf"\1[{SIZE} * {SIZE}]", prog.source)
    src = _ELEMENT.sub(lambda m: f"{m.group(1)}[({m.group(2)}) * w + ({m.group(3)})]", src)
    extra = "".join(f", double *{a}" for a in arrays) if pointers else ""
    src = re.sub(r"static double (kernel\d+)\(int n, double s\)",
                 (r"double \1" if pointers else r"static double \1") + f"(int n, double s, int w{extra})", src)
    src = re.sub(r"(kernel\d+)\((ns\[n\], [^()]*)\)", rf"\1(\2, w{''.join(', ' + a for a in arrays)})"
                 if pointers else r"\1(\2, w)", src)
    src = src.replace("#include <stdio.h>", "#include <stdio.h>\n#include <stdlib.h>", 1)
    src = src.replace("int main(void)\n{\n", "int main(int argc, char **argv)\n{\n"
                      f"  int w = argc > 1 ? atoi(argv[1]) : {SIZE};\n", 1)
    return Program(prog.seed, src, prog.kernels, prog.summary + ", flat" + (", pointers" if pointers else ""))


_STATEMENT = re.compile(r"^(\s*)((?:[ABC]\[[^;=]*\]\[[^;=]*\])|s) (=|\+=) ([^;]*);$")


def conditioned(prog: Program) -> Program:
    """The same program with data-dependent conditions: about half of the statements of its regions run
    under a condition on a value they read (`if (A[i][j] > 0.25) A[i][j] += ...;`), half of those with an
    `else` that writes the same element (`else A[i][j] = A[i][j] * 0.5;`), the pattern of thresholds and
    clamps (poly/distribute.py gives such statements innermost loops of their own where isl fused them
    with others). Seeded by the program's seed."""
    r = random.Random(prog.seed * 7919 + 17)
    out, inside, n = [], False, 0
    for line in prog.source.split("\n"):
        if line.startswith("#pragma scop"):
            inside = True
        elif line.startswith("#pragma endscop"):
            inside = False
        m = _STATEMENT.match(line) if inside else None
        if m and r.random() < 0.5:
            indent, lhs, op, rhs = m.groups()
            cond = lhs if r.random() < 0.5 else (_ELEMENT.search(rhs).group(0) if _ELEMENT.search(rhs) else lhs)
            line = f"{indent}if ({cond} > 0.25) {lhs} {op} {rhs};"
            if r.random() < 0.5:
                line += f" else {lhs} = {lhs} * 0.5;"
            n += 1
        out.append(line)
    return Program(prog.seed, "\n".join(out), prog.kernels, prog.summary + f", {n} conditioned")


def conditioned_program(seed: int) -> Program:
    """program(seed) with data-dependent conditions (conditioned)."""
    return conditioned(program(seed))


def _grid_head(declarations: list[str]) -> list[str]:
    """The start of a program over the SIZE x SIZE arrays A, B, C: `kernel0(int n)` up to its `#pragma scop`,
    with *declarations* before the region."""
    return ["#include <stdio.h>", "", f"static double A[{SIZE}][{SIZE}], B[{SIZE}][{SIZE}], C[{SIZE}][{SIZE}];", "",
            "static void kernel0(int n)", "{", "  int i, j, k;", *declarations, "#pragma scop"]


# the end of such a program: the region's end, and `main`, which runs kernel0 for every n of N_VALUES and
# prints every element
_GRID_TAIL = ["#pragma endscop", "}", "", "int main(void)", "{", "  int i, j, n;", f"  for (i = 0; i < {SIZE}; i++)",
              f"    for (j = 0; j < {SIZE}; j++) {{",
              "      A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;",
              "      B[i][j] = (double)((i * 5 + j * 11) % 13) * 0.125 - 0.5;",
              "      C[i][j] = (double)((i + j * 7) % 11) * 0.125;", "    }",
              "  for (n = 0; n < 5; n++) {", f"    static const int ns[] = {{{', '.join(map(str, N_VALUES))}}};",
              "    kernel0(ns[n]);", "  }", f"  for (i = 0; i < {SIZE}; i++)", f"    for (j = 0; j < {SIZE}; j++)",
              '      printf("%.17g %.17g %.17g\\n", A[i][j], B[i][j], C[i][j]);', "  return 0;", "}", ""]


def sibling_program(seed: int) -> Program:
    """Two to four sibling loop nests over one (i, j) domain, which isl fuses, some statements under
    data-dependent conditions (with and without `else`), some nests adding a few taps in a scalar: the shapes
    that poly/distribute.py distributes (unsharp's blur and threshold). Subscripts offset by -1..1 in either
    array, so the nests' dependences run forward, backward and across rows."""
    r = random.Random(seed * 104729 + 3)
    arrays = ["A", "B", "C"]
    lo, hi = r.choice(["0", "1"]), r.choice(["n", "n - 1", "n - 2"])
    features: set[str] = set()
    src = _grid_head(["  double acc;"])

    def element(name: str) -> str:
        return f"{name}[i + {r.randint(0, 2)}][j + {r.randint(0, 2)}]"

    for _ in range(r.randint(2, 4)):
        dst = r.choice(arrays)
        body: list[str]
        if r.random() < 0.3:
            features.add("taps")
            tap = r.choice(arrays)
            body = ["      acc = 0.0;", "      for (k = 0; k <= 2; k++)",
                    f"        acc += {tap}[i + k][j + 1] * 0.25;", f"      {dst}[i + 1][j + 1] = acc;"]
        else:
            rhs = f"{element(r.choice(arrays))} * 0.5 + {element(r.choice(arrays))} * 0.25"
            body = [f"      {dst}[i + 1][j + 1] = {rhs};"]
            if r.random() < 0.6:
                features.add("condition")
                cond = element(r.choice(arrays))
                body = [f"      if ({cond} > 0.25)", "  " + body[0]]
                if r.random() < 0.5:
                    features.add("else")
                    body += ["      else", f"        {dst}[i + 1][j + 1] = {element(r.choice(arrays))} * 0.5;"]
        src += [f"  for (i = {lo}; i < {hi}; i++)", f"    for (j = {lo}; j < {hi}; j++) {{", *body, "    }"]
    src += _GRID_TAIL
    return Program(seed, "\n".join(src), 1, ", ".join(sorted(features)) or "plain")


def local_scalar_program(seed: int) -> Program:
    """Two or three loop nests over rows i (and columns j) with scalars declared inside their bodies, the live
    ranges that poly/deps.LiveRanges lets the scheduler reorder: a few taps summed in a scalar per (i, j)
    (gaussian_clamp's column pass), two live ranges of one scalar in one body, and a value carried along a row
    (an IIR filter's `acc = a * acc + x`, or a row sum stored after its loop). Subscripts offset by 0..2, so
    the nests' dependences run forward, backward and across rows."""
    r = random.Random(seed * 7919 + 11)
    arrays = ["A", "B", "C"]
    lo, hi = r.choice(["0", "1"]), r.choice(["n", "n - 1", "n - 2"])
    features: set[str] = set()
    src = _grid_head([])

    def taps(name: str, dst: str) -> list[str]:
        t, last = r.choice(arrays), r.randint(1, 3)
        tap = r.choice([f"{t}[i + k][j + 1]", f"{t}[i + 1][j + k]", f"{t}[j + k][i + 1]"])
        return [f"      {name} = 0.0;", f"      for (k = 0; k <= {last}; k++)", f"        {name} += {tap} * 0.25;",
                f"      {dst}[i + 1][j + {r.randint(0, 2)}] = {name};"]

    for _nest in range(r.randint(2, 3)):
        kind = r.choice(["taps", "taps", "two", "carried", "rowsum"])
        features.add(kind)
        dst, t = r.choice(arrays), r.choice(arrays)
        if kind in ("taps", "two"):
            body = taps("acc", dst)
            body[0] = "      double acc = 0.0;"
            if kind == "two":
                body += taps("acc", r.choice(arrays))
            src += [f"  for (i = {lo}; i < {hi}; i++)", f"    for (j = {lo}; j < {hi}; j++) {{", *body, "    }"]
        elif kind == "carried":
            src += [f"  for (i = {lo}; i < {hi}; i++) {{", "    double run = 0.0;",
                    f"    for (j = {lo}; j < {hi}; j++) {{",
                    f"      run = 0.5 * run + {t}[i + {r.randint(0, 2)}][j + 1];", f"      {dst}[i + 1][j] = run;",
                    "    }", "  }"]
        else:
            src += [f"  for (i = {lo}; i < {hi}; i++) {{", "    double sum = 0.0;",
                    f"    for (j = {lo}; j < {hi}; j++)",
                    f"      sum += {t}[j + {r.randint(0, 2)}][i + 1] * 0.125;", f"    {dst}[i + 1][0] = sum;", "  }"]
    src += _GRID_TAIL
    return Program(seed, "\n".join(src), 1, ", ".join(sorted(features)))


def clamped_program(seed: int) -> Program:
    """Two or three loop nests over rows i and columns j whose taps clamp a coordinate to the edge (poly/split.py
    splits the loops where the clamps are the same): an index scalar clamped by two ifs (gaussian_clamp's row
    pass), a conditional in the subscript, a clamp on one side only, taps along rows or columns, some in a time
    loop (skewed, tiled) updating an array in place or through a second one; a ternary between values whose
    taps beyond the edge (`A[i - 1][j]` at i = 0) are read only in its branch. Every clamped coordinate stays in
    [0, n - 1] (plus an offset), so the sizes of N_VALUES below the taps' width (0 to 3) are the edges only."""
    r = random.Random(seed * 6151 + 29)
    arrays = ["A", "B", "C"]
    features: set[str] = set()
    src = _grid_head([])

    def clamped(v: str, off: int, form: str) -> tuple[list[str], str]:
        """(declarations, subscript) of coordinate v + off clamped into [0, n - 1]."""
        x = f"{v} + {off}" if off >= 0 else f"{v} - {-off}"
        if form == "scalar":
            return [f"int {v}{v} = {x};", f"if ({v}{v} < 0)", f"  {v}{v} = 0;", f"if ({v}{v} > n - 1)",
                    f"  {v}{v} = n - 1;"], f"{v}{v}"
        if form == "low":
            return [], f"({x} < 0 ? 0 : {x})"
        if form == "high":
            return [], f"({x} > n - 1 ? n - 1 : {x})"
        return [], f"({x} < 0 ? 0 : {x} > n - 1 ? n - 1 : {x})"

    for _nest in range(r.randint(2, 3)):
        kind = r.choice(["taps", "taps", "stencil", "border"])
        form = r.choice(["scalar", "both", "both", "low", "high"])
        features |= {kind, form}
        dst, t = r.choice(arrays), r.choice(arrays)
        if kind == "taps":
            v, width = r.choice(["i", "j"]), r.randint(2, 5)
            decls, sub = clamped(v, 0, form)
            decls = [d.replace(f"{v} + 0", f"{v} + k - {width // 2}") for d in decls]
            sub = sub.replace(f"{v} + 0", f"{v} + k - {width // 2}")
            tap = f"{t}[{sub}][j + 1]" if v == "i" else f"{t}[i + 1][{sub}]"
            src += ["  for (i = 0; i < n; i++)", "    for (j = 0; j < n; j++) {", "      double acc = 0.0;",
                    f"      for (k = 0; k < {width}; k++) {{", *(f"        {d}" for d in decls),
                    f"        acc += {tap} * {r.choice(['0.25', '0.5', '0.125'])};", "      }",
                    f"      {dst}[i + {r.randint(1, 2)}][j + {r.randint(1, 2)}] = acc;", "    }"]
        elif kind == "border":  # the elements beyond the edge read only in the ternary's other branch
            edge = r.choice(["i > 0 && j < n - 1", "i > 0 && i < n - 1 && j > 0 && j < n - 1", "j >= 2"])
            taps = {"i > 0 && j < n - 1": f"{t}[i - 1][j] + {t}[i][j + 1]",
                    "i > 0 && i < n - 1 && j > 0 && j < n - 1": f"{t}[i - 1][j] + {t}[i + 1][j - 1]",
                    "j >= 2": f"{t}[i][j - 2] + {t}[i][j - 1]"}[edge]
            src += ["  for (i = 0; i < n; i++)", "    for (j = 0; j < n; j++)",
                    f"      {dst}[i + 1][j + 1] = ({edge}) ? 0.5 * ({taps}) : {t}[i][j];"]
        else:
            steps = r.randint(1, 3)
            lo_i = clamped("i", -1, form if form != "scalar" else "both")[1]
            hi_j = clamped("j", 1, form if form != "scalar" else "both")[1]
            other = next(a for a in arrays if a != dst)
            src += [f"  for (k = 0; k < {steps}; k++) {{", "    for (i = 0; i < n; i++)",
                    "      for (j = 0; j < n; j++)",
                    f"        {other}[i][j] = 0.5 * {dst}[{lo_i}][j] + 0.25 * {dst}[i][{hi_j}] + 0.25 * {dst}[i][j];"]
            if r.random() < 0.5:
                features.add("in-place")
                src += ["    for (i = 0; i < n; i++)", "      for (j = 0; j < n; j++)",
                        f"        {dst}[i][j] = 0.5 * {dst}[{lo_i}][j] + 0.5 * {other}[i][j];"]
            else:
                src += ["    for (i = 0; i < n; i++)", "      for (j = 0; j < n; j++)",
                        f"        {dst}[i][j] = {other}[i][j];"]
            src += ["  }"]
    src += _GRID_TAIL
    return Program(seed, "\n".join(src), 1, ", ".join(sorted(features)))


# ---------------------------------------------------------------------------------------------- contractions
CMAX = 29  # the largest trip count of a contraction's loops (several blocks of small block sizes)


def _operand_init(ty: str, batch_subscripts: dict[str, str]) -> list[str]:
    """The lines of main's (b, i, j) loop that give A, B and C (each with its batch subscript, "[b]" or "")
    values that differ per element: exact multiples of 1/8 for double, small integers for int."""
    out = []
    for q, (x, bsub) in enumerate(batch_subscripts.items()):
        val = f"(i * {7 + 2 * q} + j * {3 + q} + b + {q}) % 17"
        out.append(f"        {x}{bsub}[i][j] = " + (f"({val}) * 0.125 - 1.0;" if ty == "double" else f"{val} - 8;"))
    return out


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
    # k's triangle (drawn last: the programs without one are those of the generator before it): k bounded
    # by the rows or the columns, below (symm's `k < i`) or above (trmm's `k > i`)
    ktri = r.choice(["", "", "", "k < i", "k >= i + 1", "k <= j", "k >= j"])
    if ktri:
        v = ktri.split()[2]
        lo, hi = {"<": ("0", v), ">=": (ktri.split(maxsplit=2)[2], ext[v]), "<=": ("0", f"{v} + 1")}[ktri.split()[1]]
        ext["k"] = ext[v]
        loops = [x for x in loops if not x.startswith("for (k ")]
        at = next(n for n, x in enumerate(loops) if x.startswith(f"for ({v} ")) + 1
        loops.insert(r.randint(at, len(loops)), f"for (k = {lo}; k < {hi}; k++)")
        # trmm's shape: the operand B[k][j] read from the result's own rows below (k > i: each read before
        # its row is updated: packed before the block's writes in the packed code)
        if ktri == "k >= i + 1" and b[1] == "[k][j]" and c[1] == "[i][j]" and not second and r.random() < 0.6:
            stmt = stmt.replace(f"B{bsub}[k][j]", f"C{bsub}[k][j]")
            ktri += ", C[k][j] read"
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
    src += _operand_init(ty, {x: bsub for x in "ABC"})
    src += ["      }", "  for (n = 0; n <= NMAX; n += 3)", "    kernel(n, 1.5, 0.75);" if ty == "double" else
            "    kernel(n, 3, 2);", f"  for (b = 0; b < {'NB' if batch else 1}; b++)",
            f"    for (i = 0; i < {2 * CMAX + 4}; i++)", f"      for (j = 0; j < {2 * CMAX + 4}; j++)",
            '        printf("' + ("%.17g" if ty == "double" else "%d") + f'\\n", C{bsub}[i][j]);',
            "  return 0;", "}", ""]
    summary = ", ".join(filter(None, [ty, "batch" if batch else "", tri, ktri, "beta" if beta else "",
                                      "two products" if second else "", "".join(order), a[1], b[1], c[1], form]))
    return Program(seed, "\n".join(src), 1, summary)


def scratch_contraction_program(seed: int) -> Program:
    """A random product written through a scratch row (poly/expand.py's array webs: doitgen, a dense layer),
    seeded by one integer: for an optional batch loop and the rows i, `t[j] = init`, then `t[j] += A * B`
    over k and j in either order, then an epilogue storing t into C (a copy, an update, a clamp), the operands
    transposed or not, the scratch row longer than its use or not, extents that depend on n. ``main`` runs
    the kernel for several n and prints every element of C and of t (after the region t holds what the last
    row left there, and its elements past the row keep their values)."""
    r = random.Random(seed)
    ty = r.choice(["double", "double", "int"])
    batch = r.random() < 0.5
    ext = {v: r.choice(["n", "n + 3", "2 * n + 1", "n - 1"]) for v in "ijk"}
    bsub = "[b]" if batch else ""
    a = r.choice(["A{b}[i][k]", "A{b}[k][i]"]).format(b=bsub)
    bb = r.choice(["B[k][j]", "B[j][k]", "B{b}[k][j]"]).format(b=bsub)
    alpha = r.choice(["", "alpha * "]) if ty == "double" else r.choice(["", "3 * "])
    init = r.choice(["0", "0", "bias[j]"])
    epilogue = r.choice([f"C{bsub}[i][j] = t[j];", f"C{bsub}[i][j] += t[j];",
                         f"C{bsub}[i][j] = t[j] > 0 ? t[j] : 0;", f"C{bsub}[i][j] = C{bsub}[i][j] * beta + t[j];"])
    kj = r.random() < 0.5
    body = [f"for (i = 0; i < {ext['i']}; i++) {{"]
    if batch:
        body = ["for (b = 0; b < NB; b++)"] + body
    body += [f"  for (j = 0; j < {ext['j']}; j++)", f"    t[j] = {init};"]
    inner = [f"for (k = 0; k < {ext['k']}; k++)", f"for (j = 0; j < {ext['j']}; j++)"]
    body += ["  " + inner[0 if kj else 1], "    " + inner[1 if kj else 0], f"      t[j] += {alpha}{a} * {bb};"]
    body += [f"  for (j = 0; j < {ext['j']}; j++)", f"    {epilogue}", "}"]
    size = 2 * CMAX + 4
    dims = f"[{size}][{size}]"
    nb = "[NB]" if batch else ""
    bnb = nb if "[b]" in bb else ""
    decl = f"A{nb}{dims}, B{bnb}{dims}, C{nb}{dims}, t[{size + 2}], bias[{size}]"
    src = ["#include <stdio.h>", "", f"#define NMAX {CMAX // 2}", "#define NB 3", f"static {ty} {decl};", "",
           f"static void kernel(int n, {ty} alpha, {ty} beta)", "{", "  int b, i, j, k;", "#pragma scop"]
    src += ["  " + line for line in body]
    src += ["#pragma endscop", "  (void)alpha; (void)beta;", "}", "", "int main(void)", "{",
            "  int b, i, j, n;", f"  for (j = 0; j < {size + 2}; j++)", "    t[j] = j % 5 - 2;",
            f"  for (j = 0; j < {size}; j++)", "    bias[j] = j % 3 - 1;",
            f"  for (b = 0; b < {'NB' if batch else 1}; b++)",
            f"    for (i = 0; i < {size}; i++)", f"      for (j = 0; j < {size}; j++) {{"]
    src += _operand_init(ty, {"A": bsub, "B": bsub if bnb else "", "C": bsub})
    fmt = "%.17g" if ty == "double" else "%d"
    src += ["      }", "  for (n = 0; n <= NMAX; n += 3)", "    kernel(n, 1.5, 0.75);" if ty == "double" else
            "    kernel(n, 3, 2);", f"  for (b = 0; b < {'NB' if batch else 1}; b++)",
            f"    for (i = 0; i < {size}; i++)", f"      for (j = 0; j < {size}; j++)",
            f'        printf("{fmt}\\n", C{bsub}[i][j]);', f"  for (j = 0; j < {size + 2}; j++)",
            f'    printf("t {fmt}\\n", t[j]);', "  return 0;", "}", ""]
    summary = ", ".join(filter(None, [ty, "batch" if batch else "", "kj" if kj else "jk", a, bb, init, epilogue,
                                      str(ext)]))
    return Program(seed, "\n".join(src), 1, summary)


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

    make = int_program if "--ints" in sys.argv else guarded_program if "--guarded" in sys.argv else \
        conditioned_program if "--conditioned" in sys.argv else sibling_program if "--siblings" in sys.argv else program
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    print(make(int(args[0]) if args else 0))
