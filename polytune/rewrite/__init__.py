"""Source rewrites of a region's pycparser AST before extraction: each a pure function Region -> Region in
its own module, applied in the order of STEPS. A rewrite either gives the same computation in a form the
polyhedral model reads (an index scalar substituted, a pointer resolved to its array, a struct member read
once into a parameter) or raises UnsupportedError with the line that stops it."""
from __future__ import annotations

import re
from dataclasses import replace

from ..errors import PolytuneError
from ..frontend import Region
from ._ast import clone
from .aliases import resolve_aliases
from .continues import guard_continues
from .index_calls import inline_index_calls
from .index_scalars import substitute_index_scalars
from .members import hoist_invariants
from .openmp import drop_openmp
from .pointers import resolve_pointers
from .swaps import resolve_swaps

# OpenMP lines, continues and pointer swaps first (they change the statements), then the values read once (an index
# may read `cfg->n`), the index helpers' calls (an index scalar may be one's value), the index scalars (a pointer's
# offset may read one), the pointers of the region, and last the pointers defined before it
STEPS = (drop_openmp, guard_continues, resolve_swaps, hoist_invariants, inline_index_calls, substitute_index_scalars,
         resolve_pointers, resolve_aliases)


def prepare(region: Region) -> Region:
    """*region* after every rewrite (its body copied first: the input is left as it was); a region already
    prepared is returned as it is (a found region reaches the analysis prepared by detection)."""
    if region.prepared:
        return region
    region = replace(region, body=clone(region.body))
    for step in STEPS:
        region = step(region)
    return replace(region, prepared=True)


def in_user_terms(region: Region, error: PolytuneError) -> PolytuneError:
    """*error* with the names the rewrites introduced (`pt_cfg_n`) replaced by what they stand for (`cfg->n`)."""
    message = user_terms(region, error.message)
    return error if message == error.message else type(error)(message, error.file, error.line)


def user_terms(region: Region, message: str) -> str:
    """*message* with the names the rewrites introduced (`pt_cfg_n`) replaced by what they stand for."""
    names = {m.group(1): m.group(2) for d in region.prelude if (m := re.search(r"(pt_\w+) = (.*);$", d))}
    if not names or not any(n in message for n in names):
        return message
    for _ in range(len(names)):  # a product of read-once values names them (`pt_im_h * k`)
        new = re.sub(r"\bpt_\w+\b", lambda m: names.get(m.group(0), m.group(0)), message)
        if new == message:
            break
        message = new
    return message
