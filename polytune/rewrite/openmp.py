"""OpenMP lines inside a region: polytune emits its own. A loop's `#pragma omp parallel for` (`for`, `simd`,
`parallel for simd`, `loop`) is dropped with a note; `omp_set_num_threads(n)` and the other `omp_set_*`
calls move before the region (they are read once, as the original reads them); any other OpenMP construct
(a `parallel` block, `critical`, `atomic`, `barrier`...) refuses the region, since its meaning is not that
of the sequential code."""
from __future__ import annotations

import re
from dataclasses import replace

from pycparser import c_ast

from ..errors import UnsupportedError
from ..frontend import Region
from ._ast import ids, line_of, note, text, variables, walk

_LOOP = re.compile(r"\s*omp\s+(?:parallel\s+for|for|simd|parallel\s+for\s+simd|for\s+simd|parallel\s+loop|loop)\b")
_SETTERS = re.compile(r"omp_set_\w+")


def drop_openmp(region: Region) -> Region:
    """*region* without its OpenMP lines (see the module)."""
    body = region.body
    notes, prelude = [], []
    changing = variables(body)
    for n in list(walk(body)):
        if not isinstance(n, c_ast.Compound) or not n.block_items:
            continue
        kept = []
        for item in n.block_items:
            if isinstance(item, c_ast.Pragma) and re.match(r"\s*omp\b", item.string or ""):
                if not _LOOP.match(item.string):
                    raise UnsupportedError(f"'#pragma {item.string.strip()}' inside the region: its meaning is not "
                                           "that of the sequential code polytune optimizes (polytune emits its "
                                           "own OpenMP code)", region.file, line_of(item, region.begin_line))
                notes.append(note(region, item, f"'#pragma {item.string.strip()}' dropped (polytune emits its own "
                                                "OpenMP code)"))
                continue
            if isinstance(item, c_ast.FuncCall) and isinstance(item.name, c_ast.ID) \
                    and _SETTERS.fullmatch(item.name.name):
                if ids(item.args) & changing or any(isinstance(x, c_ast.FuncCall) for x in walk(item.args)):
                    raise UnsupportedError(f"'{text(item)}' inside the region reads values the region changes",
                                           region.file, line_of(item, region.begin_line))
                prelude.append(text(item) + ";")
                notes.append(note(region, item, f"'{text(item)}' moved before the region"))
                continue
            kept.append(item)
        n.block_items = kept
    if not notes:
        return region
    return replace(region, prelude=region.prelude + tuple(prelude), notes=region.notes + tuple(notes))
