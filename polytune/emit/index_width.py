"""32-bit index arithmetic for the tiled CUDA kernels, where the values at launch allow it.

A tiled kernel's loop counters, tile and point indices and staging offsets are 64-bit `long` by default. In a
register-bound kernel that costs: the 128x128 float matmul tile at 2 blocks per multiprocessor (128 registers
a thread) spilled 192 bytes of 64-bit indices, none with `int`. A tiled kernel is therefore a template over
its index type, and the host launches the `int` instance where every integer the kernel computes is known to
fit, the `long` one otherwise. The statements' own expressions keep 64-bit arithmetic whatever the index
type (their iterators are substituted as `(long)` values), so only the kernel's generated index arithmetic
changes width.

What "known to fit" means: while a kernel is printed, every integer expression it computes gets a bound
|value| <= lin * B + const (`Bound`), B being the largest magnitude among the kernel's integer arguments at
launch (the parameters, the host loops' iterators, the tile ranges `lo`/`n`). The bounds follow the code:
a parameter or argument is bounded by B, a loop counter by its start and its upper bound plus one step, a
defined index by its defining expression; sums add bounds, multiplication by a constant scales them,
divisions, minima and comparisons keep the largest of their operands'. The host checks
lin * B + const <= INT_MAX. A kernel with an expression this cannot bound (a product of two variables, a call)
is always launched with `long`.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

INT_MAX = 2**31 - 1
_T = isl.ast_expr_op_type
_SUMS = (_T.add, _T.sub)
_KEEP = (_T.min, _T.max, _T.cond, _T.select, _T.eq, _T.le, _T.lt, _T.ge, _T.gt, _T.and_, _T.and_then, _T.or_,
         _T.or_else, _T.minus)
_QUOTIENTS = (_T.div, _T.pdiv_q, _T.fdiv_q, _T.pdiv_r, _T.zdiv_r)


@dataclass(frozen=True)
class Bound:
    """|value| <= lin * B + const, for B the largest magnitude of the kernel's integer arguments at launch."""

    lin: int = 0
    const: int = 0

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.lin + other.lin, self.const + other.const)

    def scale(self, c: int) -> Bound:
        return Bound(abs(c) * self.lin, abs(c) * self.const)

    def join(self, other: Bound) -> Bound:
        return Bound(max(self.lin, other.lin), max(self.const, other.const))


ARGUMENT = Bound(1, 0)


def constant(c: int) -> Bound:
    return Bound(0, abs(c))


def expr_bound(e: isl.AstExpr, name_bound) -> Bound | None:
    """A bound of *e* and of every value computed on the way (each node's bound covers its operands'), or
    None where it has none; *name_bound*(isl id name) bounds an identifier (None: unknown)."""
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        return constant(int(e.int_get_val().to_python()))
    if t == isl.ast_expr_type.id:
        return name_bound(e.id_get_id().get_name())
    op = e.op_get_type()
    args = [expr_bound(e.op_get_arg(i), name_bound) for i in range(e.op_get_n_arg())]
    if op == _T.call or any(a is None for a in args):
        return None
    if op in _SUMS:
        return args[0] + args[1]
    if op == _T.mul:
        consts = [e.op_get_arg(i) for i in range(2) if e.op_get_arg(i).get_type() == isl.ast_expr_type.int]
        if not consts:
            return None  # a product of two variables
        c = int(consts[0].int_get_val().to_python())
        other = args[1] if e.op_get_arg(0).get_type() == isl.ast_expr_type.int else args[0]
        return other.scale(c).join(other)
    if op in _QUOTIENTS:  # (floord(n, d) computes -n + d - 1 on the way)
        return args[0] + args[1]
    if op in _KEEP:
        out = args[0]
        for a in args[1:]:
            out = out.join(a)
        return out
    return None


class IndexWidth:
    """The bounds of one kernel's named integers, and the largest bound of any value it computes."""

    def __init__(self, params: dict[str, Bound]):
        self.names: dict[str, Bound] = dict(params)
        self.peak = Bound()
        self.bounded = True  # False once a value has no bound: the kernel keeps 64-bit indices

    def note(self, b: Bound | None) -> Bound | None:
        if b is None:
            self.bounded = False
        else:
            self.peak = self.peak.join(b)
        return b

    def define(self, name: str, b: Bound | None) -> None:
        """*name* holds a value bounded by *b* (None: unknown; any use of *name* then has no bound)."""
        self.note(b)
        if b is None:
            self.names.pop(name, None)
        else:
            self.names[name] = b

    def loop(self, init: Bound | None, upper: Bound | None, step: int) -> Bound | None:
        """A counter from *init* while at most *upper*, by *step* > 0: its last value is below upper + step."""
        if init is None or upper is None:
            return None
        return init.join(upper + constant(step))

    def fits(self, magnitude: int) -> bool:
        """Whether every value fits in 32 bits when the arguments' largest magnitude is *magnitude*."""
        return self.bounded and self.peak.lin * magnitude + self.peak.const <= INT_MAX

    def static(self) -> bool | None:
        """True/False where the arguments do not matter (no bound depends on them), else None."""
        if not self.bounded:
            return False
        return self.fits(0) if self.peak.lin == 0 else None


def loop_upper(cond: isl.AstExpr, iterator: str, name_bound) -> Bound | None:
    """The bound of an isl for loop's upper bound from its condition (`it <= e`, `it < e`, or a conjunction
    with one of them); None where the condition has another form."""
    if cond.get_type() != isl.ast_expr_type.op:
        return None
    op = cond.op_get_type()
    if op in (_T.and_, _T.and_then):
        for i in range(cond.op_get_n_arg()):
            b = loop_upper(cond.op_get_arg(i), iterator, name_bound)
            if b is not None:
                return b
        return None
    if op in (_T.le, _T.lt):
        left = cond.op_get_arg(0)
        if left.get_type() == isl.ast_expr_type.id and left.id_get_id().get_name() == iterator:
            return expr_bound(cond.op_get_arg(1), name_bound)
    return None


HOST_HELPER = r"""#include <initializer_list>
static inline bool {p}_fits32(long lin, long c, std::initializer_list<long> vs)
{
  /* whether lin * |v| + c <= INT_MAX for every integer argument v of a kernel (polytune/emit/index_width.py) */
  const long most = (2147483647L - c) / lin;
  for (long v : vs)
    if (v > most || v < -most) return false;
  return true;
}
"""
