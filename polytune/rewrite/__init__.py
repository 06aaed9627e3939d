"""Source rewrites of a region's pycparser AST before extraction: each a pure function Region -> Region in
its own module, applied in the order of STEPS. A rewrite either gives the same computation in a form the
polyhedral model reads (an index scalar substituted, a pointer resolved to its array, a struct member read
once into a parameter) or raises UnsupportedError with the line that stops it."""
from __future__ import annotations

from dataclasses import replace

from ..frontend import Region
from ._ast import clone
from .aliases import resolve_aliases

STEPS = (resolve_aliases,)


def prepare(region: Region) -> Region:
    """*region* after every rewrite (its body copied first: the input is left as it was)."""
    region = replace(region, body=clone(region.body))
    for step in STEPS:
        region = step(region)
    return region
