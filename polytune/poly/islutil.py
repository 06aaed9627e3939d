"""The one isl context, and every position-juggling helper of the package (everything else uses names)."""
from __future__ import annotations

import threading

import islpy as isl

CTX: isl.Context = isl.DEFAULT_CONTEXT

# isl's context is one per process, and it carries options and an operation quota that the scheduler
# (poly/schedule.py), the AST builder (emit/c.py) and ``bounded`` set around their calls. islpy holds the GIL
# in every isl call, so single calls never overlap, but one thread's options or quota would apply to another
# thread's calls made in between: a thread that uses isl while others may (several tunes at once in one
# process, `polytune bench --tunes-at-once`) holds this lock around its isl work; those three hold it too.
ISL_LOCK = threading.RLock()

# Words of isl's text format that cannot be used as variable names in it.
ISL_KEYWORDS = frozenset({"and", "or", "not", "exists", "min", "max", "floor", "ceil", "mod", "true",
                          "false", "infty", "NaN", "rat", "implies"})


def isl_name(c_name: str) -> str:
    """A C identifier as a name isl's parser accepts (keywords get a suffix)."""
    return c_name + "_" if c_name in ISL_KEYWORDS or c_name.endswith("_") else c_name


def maps_of(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def sets_of(uset: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    uset.foreach_set(out.append)
    return out


def few_along(points: isl.Set, k: int, few: int) -> bool:
    """Whether each piece of *points* holds fewer than *few* values of its dimension *k* for each value of the
    dimensions before it, whatever the parameters (the dimensions after it projected out)."""
    n = points.dim(isl.dim_type.set)
    upto = points.project_out(isl.dim_type.set, k + 1, n - k - 1)
    spans = []

    def check(b: isl.BasicSet) -> None:
        s = isl.Set.from_basic_set(b)
        pairs = isl.Map.from_domain_and_range(s, s)
        for j in range(k):
            pairs = pairs.equate(isl.dim_type.in_, j, isl.dim_type.out, j)
        diff = pairs.deltas().project_out(isl.dim_type.set, 0, k)
        diff = diff.project_out(isl.dim_type.param, 0, diff.dim(isl.dim_type.param))
        spans.append(diff.is_empty() or diff.is_bounded() and diff.dim_max_val(0).to_python() < few)

    upto.coalesce().foreach_basic_set(check)
    return all(spans)


def bounded(fn, max_operations: int, reset: bool = True):
    """Run an isl computation with an operation quota; past it isl raises isl.Error (caller falls back).
    *reset* False: the count goes on from the previous call's (retries share that call's quota).

    isl's dataflow analysis and scheduler can take minutes on some small quasi-affine inputs. isl counts an
    operation per simplex pivot (``isl_tab_pivot``), and a pivot's cost grows with the tableau and its
    numbers: a quota bounds the work only roughly (issue 33: 0.4 ms a pivot on an 8-statement region with
    172 dependence pieces, microseconds on gemm), so the wall-clock limit is a worker process's deadline
    (polytune/timelimit.py)."""
    with ISL_LOCK:
        old = CTX.get_max_operations()
        CTX.set_max_operations(max_operations)
        if reset:
            CTX.reset_operations()
        try:
            return fn()
        finally:
            CTX.set_max_operations(old)
