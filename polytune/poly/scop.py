"""The polyhedral model of one scop region: statements, domains, accesses, original schedule."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import islpy as isl
from pycparser import c_ast

from .islutil import CTX


@dataclass(frozen=True)
class Access:
    """One array (or scalar, 0-d) reference of a statement: ``S[i,j] -> A[i, j+1]``."""

    array: str
    relation: isl.Map
    is_write: bool
    may: bool = False  # a write that may not happen (under a data-dependent condition): it kills nothing


@dataclass(frozen=True)
class Statement:
    name: str  # isl tuple name, S0, S1, ...
    iterators: tuple[str, ...]  # original C loop iterators, outermost first
    domain: isl.Set
    schedule: isl.Map  # original (2d+1) schedule
    body: c_ast.Node  # the C expression executed (Assignment, UnaryOp, FuncCall)
    line: int
    accesses: tuple[Access, ...]
    # for each ternary and min/max call of the body (extract.choice_nodes' order), the instances where it takes its
    # first operand (an isl Set over the statement's space), None where not known; () where none is known
    choices: tuple = ()

    def beta(self, m: int) -> int | None:
        """The original 2d+1 schedule's constant before the statement's loop *m* (m = its number of loops:
        after the innermost): two statements with the same ones up to m sit in the same loop m of the
        program. None where not a constant."""
        v = self.schedule.plain_get_val_if_fixed(isl.dim_type.out, 2 * m)
        return v.to_python() if v.is_int() else None

    @property
    def reads(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if not a.is_write)

    @property
    def writes(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.is_write)

    @property
    def must_writes(self) -> tuple[Access, ...]:
        """The writes that happen whenever the statement runs (not those under a data-dependent condition)."""
        return tuple(a for a in self.accesses if a.is_write and not a.may)


@dataclass(frozen=True)
class Layout:
    """How the model's dimensions of a delinearized array (poly/delinearize.py) sit in its C subscripts: the
    first *outer* model dimensions are the C subscripts before the last one; the others are folded into the
    last C subscript with *strides* (C expressions, outermost first, the last "1")."""

    outer: int
    strides: tuple[str, ...]

    def c_subscripts(self, dims: list[str]) -> list[str]:
        """The C subscripts of the element whose model subscripts (C expressions) are *dims*."""
        terms = [_summand(d) if s == "1" else f"({d}) * ({s})" for d, s in zip(dims[self.outer:], self.strides)
                 if d != "0"]
        return dims[:self.outer] + [" + ".join(terms) or "0"]


def _summand(expr: str) -> str:
    """*expr* as a term of a sum: parenthesized where it holds, outside parentheses, an operator that binds
    less tightly than `+` (isl prints a bound as `(n >= 1) ? n : 0`, and `x + c ? n : 0` is `(x + c) ? n : 0`:
    the address of the wrong element in an overlap check)."""
    depth = 0
    for ch in expr:
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and ch in "?:<>=!&|^,":
            return f"({expr})"
    return expr


@dataclass(frozen=True)
class Array:
    name: str
    ndim: int  # 0 for a scalar; the model's dimensions (a delinearized array has more than its C subscripts)
    written: bool
    layout: Layout | None = None  # delinearized: how its model dimensions fold into its C subscripts


@dataclass(frozen=True, eq=False)
class ScratchArray:
    """An array that scalar expansion (poly/expand.py) put in place of scalar (or array) *scalar* for some
    statements: element ``name[x0 - lower0][x1 - lower1]...`` (an array's own subscripts last), allocated on
    the heap for the region (emit/c.py)."""

    name: str
    scalar: str
    lower: tuple  # per dimension: isl.PwAff of the parameters (the least index), or an int when constant
    extent: tuple  # per dimension: isl.PwAff of the parameters (number of indices), at least 1
    last: object = None  # isl.Set: the element holding the scalar's final value, copied back to it after
    # the region (empty where the last write of the scalar is not expanded here); None: dead after the region
    ndim: int = 0  # an expanded array's dimensions (its subscripts, after the expansion's index); 0: a scalar

    @property
    def element(self) -> str:
        """An element of what was expanded, for its type: `s`, or `X[0][0]` of a 2-d array X."""
        return self.scalar + "[0]" * self.ndim

    def copied_back(self, context: isl.Set) -> bool:
        """Whether some element holds the final value of what was expanded under *context*'s parameters
        (the region copies it back after its loops)."""
        return self.last is not None and not self.last.intersect_params(
            context.align_params(self.last.get_space())).is_empty()


@dataclass(frozen=True, eq=False)
class Scop:
    """A region as sets and maps. Parameters are the C names of loop-invariant integers in bounds."""

    file: str
    begin_line: int
    end_line: int
    params: tuple[str, ...]
    constants: dict  # isl parameter name -> the integer constant it stands for
    context: isl.Set  # fixes the constant parameters
    statements: tuple[Statement, ...]
    arrays: tuple[Array, ...]
    hoisted_decls: tuple[str, ...]  # C declarations of variables declared inside the region
    names_in_use: frozenset[str]  # every identifier of the region (to pick fresh names)
    source_hash: str
    float_scalars: dict = field(default_factory=dict)  # name -> "fp32"/"fp64": floating scalars in scope
    local_names: frozenset[str] = frozenset()  # variables declared inside the region (dead after it)
    scratch: tuple[ScratchArray, ...] = ()  # arrays the region allocates itself (scalar expansion)
    unsigned: frozenset[str] = frozenset()  # parameters of unsigned type (the C output prints them as long)
    c_types: dict = field(default_factory=dict)  # name -> C type (frontend.c_spelling) of the scalars in
    # scope at the region and of the elements of its arrays: a target that computes in its own types (Triton)
    # converts values to these
    prelude: tuple[str, ...] = ()  # declarations before everything the region's code holds (values read once,
    # rewrite/members.py): its run-time checks and each of its versions read them
    epilogue: tuple[str, ...] = ()  # statements after the optimized code only (frontend.Region.epilogue)
    derived: dict = field(default_factory=dict)  # isl parameter -> the C expression it stands for (a product
    # of parameters that a delinearized subscript needs: `(long)c * hw`)
    assumed: isl.Set | None = None  # parameters for which the model is exact (delinearization's assumptions);
    # None: all. The context includes it; the output checks it at run time (poly/versioning.py)
    may_alias: tuple[str, ...] = ()  # arrays (pointer parameters without restrict) that a caller may pass
    # overlapping: the output checks at run time that the ranges the region touches do not overlap
    dead_after: frozenset[str] = frozenset()  # scalars declared outside the region that no code reads after it
    # (frontend.dead_after): like local_names, private where a parallel loop writes them
    pointer_rows: tuple[str, ...] = ()  # two-dimensional arrays whose rows are pointers (`double **A`): the
    # output checks at run time that the rows it touches follow each other in memory without overlapping

    @cached_property
    def domain(self) -> isl.UnionSet:
        return _union_set(st.domain for st in self.statements)

    @cached_property
    def reads(self) -> isl.UnionMap:
        return _union_map(a.relation.intersect_domain(st.domain)
                          for st in self.statements for a in st.reads)

    @cached_property
    def writes(self) -> isl.UnionMap:
        return _union_map(a.relation.intersect_domain(st.domain)
                          for st in self.statements for a in st.writes)

    @cached_property
    def may_writes(self) -> isl.UnionMap:
        """The writes under data-dependent conditions (they may not happen: they kill nothing)."""
        return _union_map(a.relation.intersect_domain(st.domain)
                          for st in self.statements for a in st.writes if a.may)

    @cached_property
    def must_writes(self) -> isl.UnionMap:
        return _union_map(a.relation.intersect_domain(st.domain)
                          for st in self.statements for a in st.must_writes)

    @cached_property
    def schedule(self) -> isl.UnionMap:
        return _union_map(st.schedule.intersect_domain(st.domain) for st in self.statements)

    def statement(self, name: str) -> Statement:
        return next(s for s in self.statements if s.name == name)

    @property
    def written_arrays(self) -> tuple[Array, ...]:
        return tuple(a for a in self.arrays if a.written)


def constant_work(scop: Scop) -> int | None:
    """An upper bound of the region's statement instances where the bounds are constants (the box around
    each statement's domain, summed); None where a bound depends on a parameter's value."""
    total = 0
    for st in scop.statements:
        dom = st.domain.intersect_params(scop.context.align_params(st.domain.get_space()))
        if dom.is_empty():
            continue
        size = 1
        for k in range(dom.dim(isl.dim_type.set)):
            hi, lo = dom.dim_max_val(k), dom.dim_min_val(k)
            if not (hi.is_int() and lo.is_int()):
                return None
            size *= max(0, hi.to_python() - lo.to_python() + 1)
        total += size
    return total


def _union_set(items) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Space.params_alloc(CTX, 0))
    for s in items:
        out = out.union(isl.UnionSet.from_set(s))
    return out


def _union_map(items) -> isl.UnionMap:
    out = isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
    for m in items:
        out = out.union(isl.UnionMap.from_map(m))
    return out


def common_loops(statements) -> int:
    """How many loops enclose all *statements* (their 2d+1 schedules agree on the constants before)."""
    depth = min(len(st.iterators) for st in statements)
    for m in range(depth):
        betas = {st.beta(m) for st in statements}
        if len(betas) != 1 or None in betas:
            return m
    return depth
