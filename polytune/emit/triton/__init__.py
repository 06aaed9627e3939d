"""Triton for a GPU-mapped schedule: a Python module with one ``@triton.jit`` kernel per kernel mark and a
launcher ``run(...)`` that takes the arrays as torch tensors and the scalars as numbers.

The mapping is the CUDA target's (``polytune.poly.gpu``); what differs is that a Triton program owns a
*block* of the mapped iterations: the mapped loops become program ids, and each program works on tensors
of ``BLOCK_X`` (x innermost, so loads along x are contiguous) by ``BLOCK_Y`` (by ``BLOCK_Z``) iterations.
Every guard on the way to a statement (the mapped loops' exact bounds, ``if``s, inner loops whose bounds
differ between the lanes) becomes a mask. Inner loops stay loops, run by the whole block; where their
bounds depend on the lane they run over the union of the lanes' ranges under a mask.

Two rewrites make the inner loops cheap:

- *accumulation in registers*: an inner loop whose body is one statement ``W op= e`` with ``W`` the same
  element on every iteration (and ``e`` not reading ``W``'s array) loads ``W`` once, accumulates in
  registers and stores once;
- *reductions over a block*: if, moreover, the loop is the only one left under a single mapped dimension
  and ``op`` is ``+=`` (or a max/min update), the loop is vectorized too: a program reduces ``BLOCK_R``
  iterations at once with ``tl.sum`` / ``tl.max`` (all of them when the extent fits: a persistent
  reduction, section 9.4 of the Triton chapter) and loops over the rest. This reassociates the sum; the
  results then match the sequential ones within a tolerance, not bit for bit.

Modules: `expr.py` (expressions), `kernel.py` (the kernel printer), `reduce.py` (reduction and dot
recognition), `forward.py` (store forwarding over the generated text), `host.py` (launcher and module),
`probe.py` (the probe for the harness).
"""
from __future__ import annotations

from .expr import _canonical, py_names
from .forward import forward_stores
from .host import (
    DEFAULT_CONFIG,
    FLOAT_NAMES,
    TritonModule,
    TritonRegion,
    generate_triton_module,
    generate_triton_region,
    run_arguments,
    triton_module,
)
from .probe import PROBE_PRELUDE, generate_probe

__all__ = ["DEFAULT_CONFIG", "FLOAT_NAMES", "PROBE_PRELUDE", "TritonModule", "TritonRegion", "_canonical",
           "forward_stores", "generate_probe", "generate_triton_module", "generate_triton_region", "py_names",
           "run_arguments", "triton_module"]
