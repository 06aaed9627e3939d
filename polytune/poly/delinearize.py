"""Delinearization: the multi-dimensional view of an array whose subscripts are flattened by hand.

`A[i*n + j]` is not affine (a product of an iterator and a parameter), and read as one dimension it would
not tell rows apart; read as `A[i][j]` of `n` columns it is affine and exact, as long as `0 <= j < n`.
Polly's method (Grosser, Ramanujam, Pouchet, Sadayappan, Pop: "On recovering multi-dimensional arrays in
Polly", IMPACT 2015), on polynomials of C names instead of LLVM's SCEVs:
1. *terms*: every monomial of every subscript of the array that holds a loop iterator; its parameter
   factors (the constant factor left out: `2*i*n` counts as `n`) are a *stride*;
2. *sizes*: the strides, with 1, must form a chain under divisibility (1 | hw | c*hw), the same for all
   accesses of the array; the dimension sizes are the quotients of neighbours: [*][c][hw]. Strides that do
   not nest (`A[i*n + j]` beside `A[i*m + j]`) are refused;
3. *subscripts*: each monomial goes to the dimension of the largest stride that divides it, divided by it
   (`x[((b*c + i)*hw) + j]` -> x[b][i][j]; `A[(i + 1)*n + j]` -> A[i + 1][j]); a product of parameters left
   in a dimension becomes a parameter of its own (`products`);
4. *assumptions*: the view is exact (two accesses touch one element iff their multi-dimensional subscripts
   are equal) where every dimension but the outermost stays in [0, size) on the access's whole domain.
   isl projects the points where one does not onto the parameters; the rest is `assumed` (`lda >= K` for
   `w[i*lda + k]`, k < K). Where the domains do not imply it, the output checks it at run time and runs the
   original code when it fails (poly/versioning.py).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import islpy as isl

from .islutil import CTX, isl_name

Monomial = tuple[str, ...]  # C names, sorted, with repeats; () is the constant 1


class DelinearizeError(Exception):
    """The flattened subscripts of an array have no common multi-dimensional view."""


@dataclass(frozen=True)
class Poly:
    """A polynomial with integer coefficients in C names (iterators and parameters)."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def of(coefficients: Mapping[Monomial, int]) -> Poly:
        return Poly(tuple(sorted((m, c) for m, c in coefficients.items() if c)))

    @staticmethod
    def const(c: int) -> Poly:
        return Poly.of({(): c})

    @staticmethod
    def name(n: str) -> Poly:
        return Poly.of({(n,): 1})

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for m, c in other.terms:
            out[m] = out.get(m, 0) + c
        return Poly.of(out)

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly:
        out: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly.of(out)

    def names(self) -> set[str]:
        return {n for m, _ in self.terms for n in m}


@dataclass(frozen=True)
class FlatAccess:
    """One access of the array: its statement's domain (`S[i, j, ...]`, the iterators' C names in
    *iterators*, same order) and its flattened subscript as guarded pieces (isl condition text over the
    iterators and parameters, disjoint; the polynomial where it holds)."""

    domain: isl.Set
    iterators: tuple[str, ...]
    pieces: tuple[tuple[str, Poly], ...]


@dataclass(frozen=True, eq=False)
class View:
    """The multi-dimensional view of an array: its strides (outermost dimension first, the last is 1),
    per access the map `S[i, ...] -> [d0, d1, ...]` (the range unnamed, not restricted to the domain), the
    parameters for which the view is exact, and the parameters that stand for products of parameters."""

    strides: tuple[Monomial, ...]
    maps: tuple[isl.Map, ...]
    assumed: isl.Set
    products: dict  # monomial -> isl parameter name (those given, and those this view added)

    @property
    def sizes(self) -> tuple[Monomial, ...]:
        """The size of every dimension but the outermost (outermost first)."""
        return tuple(_quotient(a, b) for a, b in zip(self.strides, self.strides[1:]))


def _quotient(a: Monomial, b: Monomial) -> Monomial | None:
    """a / b as monomials (None where b does not divide a)."""
    rest = list(a)
    for n in b:
        if n not in rest:
            return None
        rest.remove(n)
    return tuple(rest)


def _text(m: Monomial) -> str:
    return " * ".join(m) or "1"


def delinearize(accesses: Sequence[FlatAccess], products: Mapping[Monomial, str] | None = None) -> View | None:
    """The view of the array that *accesses* are all the accesses of (see the module docstring); None where
    no subscript has a parametric stride (nothing to recover). *products*: parameters already standing for
    products (names `_pt_P<k>`; new ones are numbered on). Raises DelinearizeError where the strides do not
    nest or a monomial multiplies two iterators."""
    summed, sums = _summed_strides(accesses)
    view, error = _tried(accesses, products, {})
    if sums:
        # s*n1 + s + k is a row of n1 + 1 ([s][k]) or the diagonal of rows of n1 ([s][s + k], as i*n + i is
        # cholesky's L[i][i]): the view exact for more parameters is taken, the plain one where neither is
        other, other_error = _tried(summed, products, sums)
        if other is not None and (view is None or _wider(other.assumed, view.assumed)):
            return other
        if view is None and error is None:
            error = other_error
    if error is not None:
        raise error
    return view


def _tried(accesses: Sequence[FlatAccess], products: Mapping[Monomial, str] | None,
           sums: Mapping[str, tuple[str, tuple]]) -> tuple[View | None, DelinearizeError | None]:
    try:
        return _view(accesses, products, sums), None
    except DelinearizeError as e:
        return None, e


def _wider(a: isl.Set, b: isl.Set) -> bool:
    """Whether parameter set *a* strictly contains *b*."""
    a, b = a.align_params(b.get_space()), b.align_params(a.get_space())
    return b.is_strict_subset(a)


def _view(accesses: Sequence[FlatAccess], products: Mapping[Monomial, str] | None,
          sums: Mapping[str, tuple[str, tuple]]) -> View | None:
    """delinearize's view of *accesses*, whose *sums* (_summed_strides) are names of their own."""
    strides: set[Monomial] = {()}
    for acc in accesses:
        for _guard, poly in acc.pieces:
            for m, _c in poly.terms:
                its = [n for n in m if n in acc.iterators]
                if len(its) > 1:
                    raise DelinearizeError(f"a product of loop iterators ({' * '.join(its)})")
                if its:
                    strides.add(_quotient(m, (its[0],)))
    if strides == {()}:
        return None
    chain = sorted(strides, key=len, reverse=True)  # outermost first
    for outer, inner in zip(chain, chain[1:]):
        if len(outer) == len(inner) or _quotient(outer, inner) is None:
            raise DelinearizeError(f"its flattened subscripts have strides {_text(inner)} and {_text(outer)}, "
                                   "neither a multiple of the other")
    products = dict(products or {})

    def term(m: Monomial) -> str:
        if len(m) <= 1:
            return (sums[m[0]][0] if m[0] in sums else isl_name(m[0])) if m else "1"
        if m not in products:
            products[m] = f"_pt_P{len(products)}"
        return products[m]

    for acc in accesses:  # the products each term needs where it goes first (the outermost dimension)
        for _guard, poly in acc.pieces:
            for m, _c in poly.terms:
                its = tuple(n for n in m if n in acc.iterators)
                params = _quotient(m, its)
                k = next(k for k, s in enumerate(chain) if _quotient(params, s) is not None)
                term(its + _quotient(params, chain[k]))
    sizes = [term(_quotient(a, b)) for a, b in zip(chain, chain[1:])]
    ds = [f"d{k}" for k in range(len(chain))]
    out_of_rows = " or ".join(f"{d} < 0 or {d} >= {s}" for d, s in zip(ds[1:], sizes))
    maps, assumed = [], None
    for acc in accesses:
        params = _params(acc, products, sums)
        names = ", ".join(isl_name(i) for i in acc.iterators)
        head = f"[{', '.join(params)}] -> {{ {acc.domain.get_tuple_name()}[{names}] -> "
        bad_elements = isl.Set(f"[{', '.join(params)}] -> {{ [{', '.join(ds)}] : {out_of_rows} }}", context=CTX)
        rel, bad = None, None
        for guard, poly in acc.pieces:
            piece, piece_bad = _placed(guard, poly, acc, chain, term, products, head, bad_elements)
            rel = piece if rel is None else rel.union(piece)
            bad = piece_bad if bad is None else bad.union(piece_bad)
        maps.append(rel)
        ok = isl.Set.universe(bad.get_space()).subtract(bad)
        assumed = ok if assumed is None else assumed.align_params(ok.get_space()).intersect(
            ok.align_params(assumed.get_space()))
    return View(tuple(chain), tuple(maps), assumed.coalesce(), products)


def _placed(guard: str, poly: Poly, acc: FlatAccess, chain: list, term, products: Mapping, head: str,
            bad_elements: isl.Set):
    """One piece of an access as a map to the view's dimensions, and the parameters for which one of its
    elements leaves its row. A term with an iterator goes to the dimension of the largest stride that divides
    it; a term of parameters alone may go to any dimension whose stride divides it (`w*y + w - 1`, the
    last column of row y, is [y][w - 1] as well as [y + 1][-1]; a placement needing a product parameter
    no other term needs is not tried): each placement is the same address, and the one whose elements stay
    in their rows for the most parameters is taken (the outermost on a tie)."""
    fixed: list[list[str]] = [[] for _ in chain]
    free: list[tuple[Monomial, int, list[int]]] = []
    for m, c in poly.terms:
        its = [n for n in m if n in acc.iterators]
        params = _quotient(m, tuple(its))
        places = [k for k, s in enumerate(chain) if _quotient(params, s) is not None]
        places = places[:1] + [k for k in places[1:] if len(q := _quotient(params, chain[k])) <= 1 or q in products]
        if its or len(places) == 1:
            fixed[places[0]].append(f"{c} * {term(tuple(its) + _quotient(params, chain[places[0]]))}")
        else:
            free.append((m, c, places))
    best = None
    for choice in itertools.islice(itertools.product(*(places for _m, _c, places in free)), _PLACEMENTS):
        dims = [list(d) for d in fixed]
        for (m, c, _places), k in zip(free, choice):
            dims[k].append(f"{c} * {term(_quotient(m, chain[k]))}")
        piece = isl.Map(f"{head}[{', '.join(' + '.join(d) or '0' for d in dims)}] : {guard} }}", context=CTX)
        elements = piece.intersect_domain(acc.domain.align_params(piece.get_space().domain())).range()
        bad = elements.align_params(bad_elements.get_space()).intersect(
            bad_elements.align_params(elements.get_space())).params()
        if best is None or (bad.is_strict_subset(best[1]) if not best[1].is_empty() else False):
            best = (piece, bad)
        if bad.is_empty():
            break
    return best


_PLACEMENTS = 64  # placements of a piece's parameter terms tried at most


def _params(acc: FlatAccess, products: Mapping[Monomial, str], sums: Mapping[str, tuple[str, tuple]]) -> list[str]:
    """The isl parameters an access's map may name: its domain's, its polynomial's other names (a sum's
    names), products."""
    out = [acc.domain.get_dim_name(isl.dim_type.param, k) for k in range(acc.domain.dim(isl.dim_type.param))]
    for _guard, poly in acc.pieces:
        for n in sorted(poly.names()):
            if n in sums:
                out += [isl_name(x) for x in sums[n][1]]
            elif n not in acc.iterators:
                out.append(isl_name(n))
    out += list(products.values())
    return list(dict.fromkeys(out))


def _summed_strides(accesses: Sequence[FlatAccess]) -> tuple[list[FlatAccess], dict[str, tuple[str, tuple]]]:
    """The accesses with each iterator's coefficient that is a sum of parameters and constants (times a
    monomial) as one name: `in + s*(n1 + 1) + k` reaches delinearization as `s*n1 + s + k`, whose strides n1
    and 1 put s beside k ([s][s + k] of n1 columns, exact only where s + k < n1: never), where its rows are
    n1 + 1 long ([s][k] of `(n1 + 1)` columns). The name is the sum's C text (`(n1 + 1)`, the integer factor
    common to its terms left out, as for a monomial stride); with it, the sum's isl text and its names."""
    sums: dict[str, tuple[str, tuple]] = {}
    out = []
    for acc in accesses:
        pieces = []
        for guard, poly in acc.pieces:
            for it in acc.iterators:
                mine = [(m, c) for m, c in poly.terms if it in m]
                coef = [(_quotient(m, (it,)), c) for m, c in mine]
                if len(coef) < 2 or any(n in acc.iterators for m, _c in coef for n in m):
                    continue
                common = _common(coef)
                rest = [(_quotient(m, common), c) for m, c in coef]
                if any(len(m) > 1 for m, _c in rest) or all(not m for m, _c in rest):
                    continue  # (not a sum of single parameters and constants)
                g = math.gcd(*(c for _m, c in rest))
                g = -g if sorted(rest)[-1][1] < 0 else g
                rest = sorted((m, c // g) for m, c in rest)
                c_text = "(" + " + ".join(_scaled(c, m[0] if m else "") for m, c in reversed(rest)) + ")"
                i_text = "(" + " + ".join(_scaled(c, isl_name(m[0]) if m else "") for m, c in reversed(rest)) + ")"
                sums[c_text] = (i_text.replace("+ -", "- "), tuple(m[0] for m, _c in rest if m))
                kept = Poly(tuple(t for t in poly.terms if it not in t[0]))
                poly = kept + Poly.of({tuple(sorted((it, *common, c_text))): g})
            pieces.append((guard, poly))
        out.append(FlatAccess(acc.domain, acc.iterators, tuple(pieces)))
    return out, sums


def _common(coef: list[tuple[Monomial, int]]) -> Monomial:
    """The monomial that divides every one of *coef*'s."""
    rest = list(coef[0][0])
    for m, _c in coef[1:]:
        left, kept = list(m), []
        for n in rest:
            if n in left:
                left.remove(n)
                kept.append(n)
        rest = kept
    return tuple(rest)


def _scaled(c: int, name: str) -> str:
    if not name:
        return str(c)
    return name if c == 1 else f"-{name}" if c == -1 else f"{c} * {name}"
