"""The one isl context, and every position-juggling helper of the package (everything else uses names)."""
from __future__ import annotations

import islpy as isl

CTX: isl.Context = isl.DEFAULT_CONTEXT

# Words of isl's text format that cannot be used as variable names in it.
ISL_KEYWORDS = frozenset({"and", "or", "not", "exists", "min", "max", "floor", "ceil", "mod", "true",
                          "false", "infty", "NaN", "rat", "implies"})


def isl_name(c_name: str) -> str:
    """A C identifier as a name isl's parser accepts (keywords get a suffix)."""
    return c_name + "_" if c_name in ISL_KEYWORDS or c_name.endswith("_") else c_name


def pad_schedule(umap: isl.UnionMap) -> isl.UnionMap:
    """Give every map of a schedule the same anonymous range [s0..s(n-1)] by appending zero dimensions."""
    maps = _maps(umap)
    width = max((m.dim(isl.dim_type.out) for m in maps), default=0)
    out = isl.UnionMap.empty(umap.get_space())
    for m in maps:
        n = m.dim(isl.dim_type.out)
        m = m.add_dims(isl.dim_type.out, width - n)
        for k in range(n, width):
            m = m.fix_val(isl.dim_type.out, k, isl.Val.zero(CTX))
        m = m.set_tuple_id(isl.dim_type.out, None) if m.has_tuple_id(isl.dim_type.out) else m
        out = out.union(isl.UnionMap.from_map(m.reset_tuple_id(isl.dim_type.out)))
    return out


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def maps_of(umap: isl.UnionMap) -> list[isl.Map]:
    return _maps(umap)


def sets_of(uset: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    uset.foreach_set(out.append)
    return out


def schedule_width(umap: isl.UnionMap) -> int:
    return max((m.dim(isl.dim_type.out) for m in _maps(umap)), default=0)


def lex_lt(width: int, params: isl.Space) -> isl.UnionMap:
    """{ [s] -> [t] : s lexicographically before t } on anonymous width-dimensional vectors."""
    space = isl.Space.set_alloc(CTX, 0, width)
    return isl.UnionMap.from_map(isl.Map.lex_lt(space))


def identity_range_pairs(width: int) -> isl.UnionMap:
    space = isl.Space.set_alloc(CTX, 0, width)
    return isl.UnionMap.from_map(isl.Map.identity(isl.Space.map_from_set(space)))


def bounded(fn, max_operations: int):
    """Run an isl computation with an operation quota; past it isl raises isl.Error (caller falls back).

    isl's dataflow analysis and scheduler can take minutes on some small quasi-affine inputs."""
    old = CTX.get_max_operations()
    CTX.set_max_operations(max_operations)
    CTX.reset_operations()
    try:
        return fn()
    finally:
        CTX.set_max_operations(old)
