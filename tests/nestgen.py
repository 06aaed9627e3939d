"""Random affine loop nests as complete C programs: a hypothesis strategy for differential testing.

A program has 1-3 statements in loop nests of depth 1-3 over 1-3 global arrays of size [N + 6][N + 6]
(N is a small ``#define``), sometimes a global scalar. Statements share outer loops with the previous one
or start a sibling nest, so nests are imperfect. Loop bounds are affine: constants, N (or a runtime
parameter ``n``), triangular (``j <= i``, ``j < i + 2``, ``j < N - i``); loops may count down or step by
2 or 3. Subscripts are affine with a +3 padding and small offsets, and every access is checked against the
iterators' ranges, so all of them stay in bounds. Values stay bounded: an assignment's coefficients sum to
at most 1, an accumulation adds a small fraction. ``main`` prints every element with %.17g, so a
difference in any element shows.

``python tests/nestgen.py [COUNT]`` prints a few examples.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

PAD = 3  # subscripts are iterator + PAD + offset, offsets in -2..2
COEF_FIRST = ("0.5", "0.25")
COEF_REST = ("0.25", "0.125")


@dataclass(frozen=True)
class Aff:
    """c0 + cn * N + sum(coef * iterator), with N known to the generator."""

    const: int = 0
    ncoef: int = 0
    terms: tuple[tuple[str, int], ...] = ()

    def __add__(self, k: int) -> Aff:
        return Aff(self.const + k, self.ncoef, self.terms)

    def text(self, nsym: str) -> str:
        parts: list[tuple[int, str]] = []
        if self.ncoef:
            parts.append((self.ncoef, nsym))
        parts += [(c, v) for v, c in self.terms if c]
        out = ""
        for c, name in parts:
            mag = "" if abs(c) == 1 else f"{abs(c)} * "
            if not out:
                out = ("-" if c < 0 else "") + mag + name
            else:
                out += (" - " if c < 0 else " + ") + mag + name
        if self.const or not out:
            if not out:
                return str(self.const)
            out += f" - {-self.const}" if self.const < 0 else f" + {self.const}"
        return out

    def interval(self, n: int, ranges: dict[str, tuple[int, int]]) -> tuple[int, int]:
        lo = hi = self.const + self.ncoef * n
        for v, c in self.terms:
            a, b = ranges[v]
            lo += min(c * a, c * b)
            hi += max(c * a, c * b)
        return lo, hi


@dataclass
class Loop:
    var: str
    header: str  # 'for (...)'
    lo: int  # range of the iterator (over-approximated)
    hi: int
    body: list = field(default_factory=list)


@dataclass
class Stmt:
    text: str


@dataclass
class Program:
    source: str
    n: int
    summary: str

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        return f"Program({self.summary})\n{self.source}"


def _subscript_candidates(n: int, nsym: str, iters: list[str], ranges) -> list[Aff]:
    cands: list[Aff] = []
    for v in iters:
        cands += [Aff(PAD + off, 0, ((v, 1),)) for off in range(-2, 3)]
    for v in iters:
        cands += [Aff(k, 1, ((v, -1),)) for k in range(6)]  # N - i + k
        cands += [Aff(k, 0, ((v, 2),)) for k in range(4)]  # 2 * i + k
    for a in iters:
        for b in iters:
            if a < b:
                cands += [Aff(k, 0, ((a, 1), (b, 1))) for k in range(1, 4)]
            if a != b:
                cands += [Aff(PAD + k, 0, ((a, 1), (b, -1))) for k in range(-2, 3)]
    cands += [Aff(k) for k in (0, 2, 3, 5)] + [Aff(k, 1) for k in (0, 3, 5)]
    ok = []
    for c in cands:
        lo, hi = c.interval(n, ranges)
        if 0 <= lo and hi <= n + 2 * PAD - 1:
            ok.append(c)
    return ok


@st.composite
def _subscript(draw, n, nsym, iters, ranges) -> str:
    plain = [Aff(PAD + off, 0, ((v, 1),)) for v in iters for off in range(-2, 3)]
    if iters and draw(st.integers(0, 9)) < 6:  # mostly 'i + 3 + off'
        return draw(st.sampled_from(plain)).text(nsym)
    return draw(st.sampled_from(_subscript_candidates(n, nsym, iters, ranges))).text(nsym)


@st.composite
def _access(draw, arrays, n, nsym, iters, ranges) -> str:
    a = draw(st.sampled_from(arrays))
    s1 = draw(_subscript(n, nsym, iters, ranges))
    s2 = draw(_subscript(n, nsym, iters, ranges))
    return f"{a}[{s1}][{s2}]"


@st.composite
def _statement(draw, arrays, scalar, n, nsym, iters, ranges) -> Stmt:
    lhs = draw(_access(arrays, n, nsym, iters, ranges))
    if scalar and draw(st.integers(0, 4)) == 0:
        lhs = "s"
    nreads = draw(st.integers(1, 3))
    terms = []
    for r in range(nreads):
        src = draw(_access(arrays, n, nsym, iters, ranges))
        if scalar and draw(st.integers(0, 5)) == 0:
            src = "s"
        coef = draw(st.sampled_from(COEF_FIRST if r == 0 else COEF_REST))
        terms.append(f"{src} * {coef}")
    if iters and draw(st.integers(0, 3)) == 0:
        it = draw(st.sampled_from(iters))
        terms.append(f"(double)({it}) * 0.0625" if len(iters) == 1 or draw(st.booleans())
                     else f"({iters[0]} - {iters[-1]}) * 0.125")
    op = draw(st.sampled_from(["=", "=", "=", "+="]))
    if op == "+=":
        # accumulate a small fraction of a single read: values stay far from overflow
        rhs = f"{terms[0].rsplit(' * ', 1)[0]} * 0.125"
        if len(terms) > 1 and draw(st.booleans()):
            rhs += " - 0.25"
    else:
        rhs = " + ".join(terms) + " + " + draw(st.sampled_from(["1.0", "0.5", "0.25"]))
    text = f"{lhs} {op} {rhs};"
    if iters and draw(st.integers(0, 6)) == 0:  # an affine guard
        v = draw(st.sampled_from(iters))
        w = draw(st.sampled_from(iters))
        cond = draw(st.sampled_from([f"{v} % 2 == 0", f"{v} > 2", f"{v} + {w} < {nsym}",
                                     f"{v} <= {w} + 1", f"{v} != 3"]))
        text = f"if ({cond})\n  {text}"
    return Stmt(text)


@st.composite
def _loop(draw, var, n, nsym, outer: list[str], ranges) -> Loop:
    """A loop over *var* whose range stays within [-1, N]."""
    lows = [Aff(c) for c in (0, 0, 1, 2)]
    highs = [Aff(-c, 1) for c in (1, 1, 2, 3)] + [Aff(0, 1)]  # inclusive: N - 1, ..., N
    for o in outer:
        lows += [Aff(c, 0, ((o, 1),)) for c in (-1, 0, 1)]
        highs += [Aff(c, 0, ((o, 1),)) for c in (-1, 0, 1)]  # j <= i - 1, j <= i, j < i + 2
        highs.append(Aff(-1, 1, ((o, -1),)))  # j < N - i
    lows = [a for a in lows if a.interval(n, ranges)[0] >= -1]
    highs = [a for a in highs if a.interval(n, ranges)[1] <= n]
    lb = draw(st.sampled_from(lows))
    ub = draw(st.sampled_from(highs))
    lo, hi = lb.interval(n, ranges)[0], ub.interval(n, ranges)[1]
    decl = "int " if draw(st.integers(0, 3)) == 0 else ""
    kind = draw(st.sampled_from(["up"] * 6 + ["down", "down", "step"]))
    if kind == "down":
        start, stop = ub.text(nsym), draw(st.sampled_from([f"{var} >= {lb.text(nsym)}",
                                                           f"{var} > {(lb + -1).text(nsym)}"]))
        step = draw(st.sampled_from([f"{var}--", f"{var}--", f"{var} -= 2"]))
    else:
        start = lb.text(nsym)
        stop = draw(st.sampled_from([f"{var} <= {ub.text(nsym)}", f"{var} < {(ub + 1).text(nsym)}",
                                     f"{(ub + 1).text(nsym)} > {var}"]))
        step = draw(st.sampled_from([f"{var} += 2", f"{var} = {var} + 3"])) if kind == "step" else \
            draw(st.sampled_from([f"{var}++", f"{var}++", f"++{var}", f"{var} += 1"]))
    return Loop(var, f"for ({decl}{var} = {start}; {stop}; {step})", lo, hi)


def _render(items: list, indent: int) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    for it in items:
        if isinstance(it, Stmt):
            out += [pad + line for line in it.text.split("\n")]
        else:
            braces = len(it.body) > 1 or any(isinstance(b, Loop) for b in it.body) and indent % 2 == 0
            out.append(pad + it.header + (" {" if braces else ""))
            out += _render(it.body, indent + 1)
            if braces:
                out.append(pad + "}")
    return out


@st.composite
def programs(draw, max_stmts: int = 3, max_depth: int = 3) -> Program:
    n = draw(st.integers(5, 11))
    arrays = ["A", "B", "C"][:draw(st.integers(1, 3))]
    names = list(draw(st.permutations(["i", "j", "k"])))
    scalar = draw(st.integers(0, 5)) == 0
    param = draw(st.sampled_from(["N", "N", "n", "kernel"]))  # bounds use N, a variable n, or a parameter
    nsym = "N" if param == "N" else "n"
    top: list = []
    prev: list[Loop] = []
    n_stmts = draw(st.integers(1, max_stmts))
    for s in range(n_stmts):
        depth = draw(st.integers(1, max_depth))
        share = draw(st.integers(0, min(depth, len(prev)))) if s else 0
        path = prev[:share]
        ranges = {lp.var: (lp.lo, lp.hi) for lp in path}
        for lvl in range(share, depth):
            lp = draw(_loop(names[lvl], n, nsym, [p.var for p in path], ranges))
            (path[-1].body if path else top).append(lp)
            path.append(lp)
            ranges[lp.var] = (lp.lo, lp.hi)
        stmt = draw(_statement(arrays, scalar, n, nsym, [p.var for p in path], ranges))
        path[-1].body.append(stmt)
        prev = path
    scop = ["#pragma scop"] + _render(top, 1) + ["#pragma endscop"]
    src = ["#include <stdio.h>", "", f"#define N {n}"]
    src += [f"double {a}[N + 6][N + 6];" for a in arrays]
    if scalar:
        src.append("double s;")
    src += ["", "static void init(void)", "{", "  int i, j;", "  for (i = 0; i < N + 6; i++)",
            "    for (j = 0; j < N + 6; j++) {"]
    src += [f"      {a}[i][j] = (double)((i * {7 + 2 * q} + j * {3 + q} + {q}) % 17) * 0.125 - 1.0;"
            for q, a in enumerate(arrays)]
    src += ["    }"] + (["  s = 0.75;"] if scalar else []) + ["}", "", "static void print(void)", "{",
                                                             "  int i, j;"]
    src += [f"  for (i = 0; i < N + 6; i++)\n    for (j = 0; j < N + 6; j++)\n"
            f"      printf(\"%.17g\\n\", {a}[i][j]);" for a in arrays]
    if scalar:
        src.append('  printf("%.17g\\n", s);')
    src += ["}", ""]
    if param == "kernel":
        src += ["static void kernel(int n)", "{", "  int i, j, k;"] + scop + ["}", "", "int main(void)", "{",
                                                                           "  init();", "  kernel(N);"]
    else:
        src += ["int main(void)", "{", "  int i, j, k;"] + (["  int n = N;"] if param == "n" else [])
        src += ["  init();"] + scop
    src += ["  print();", "  return 0;", "}", ""]
    summary = f"N={n}, arrays={''.join(arrays)}, {n_stmts} statement(s), bounds via {param}" + \
              (", scalar s" if scalar else "")
    return Program("\n".join(src), n, summary)


if __name__ == "__main__":  # pragma: no cover
    import sys

    from hypothesis import find, settings  # noqa: F401

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for _ in range(count):
        print(programs().example().source)
        print("-" * 60)
