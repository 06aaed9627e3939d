"""The host side: the launcher run(...) of a region, its kernels' launches, and the module text."""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from ...errors import UnsupportedError
from ...poly.gpu import GpuSchedule, KernelInfo, bound_as_params
from ...poly.marks import KernelMark, mark_of
from ...poly.scop import Scop
from ..c import build_ast
from ..printer import list_, param_expr
from .expr import _T, AXES, _py_expr, py_names
from .forward import _barriers, forward_stores
from .kernel import _KernelPrinter

FLOAT_NAMES = {"fp32": "float32", "fp64": "float64"}
DEFAULT_CONFIG = {"BLOCK_X": 64, "BLOCK_Y": 16, "BLOCK_Z": 1, "BLOCK_M": 4, "BLOCK_R": 1024, "BLOCK_K": 32,
                  "num_warps": 4, "num_stages": 2, "FUSE": 0}
# A module with a contraction (a kernel with tl.dot) starts from a library's tile instead, by the dot's kind
# (measured on the H200, docs/benchmarks-history/gpu.md, 2026-12-05): full float32 ("ieee", an FMA loop),
# 64x64 output tiles, K blocks of 32, 4 warps, 3 stages of software pipelining: the fastest of six tiles on
# matmul N=2048/4096 and PolyBench gemm/2mm/3mm, and the only one that spilled on none (128x128 on 8 warps
# spilled on the PolyBench kernels); TF32 (tensor cores), 128x128x32 on 8 warps, 3 stages: 1.6x the 64x64
# tile on matmul; float64, 64x32x16 on 4 warps (64 double accumulators a thread would spill), the tuner's
# pick for PolyBench gemm in double. The tuner moves them all.
CONTRACTION_CONFIG = {"float": {"BLOCK_X": 64, "BLOCK_Y": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
                      "tf32": {"BLOCK_X": 128, "BLOCK_Y": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3},
                      "double": {"BLOCK_X": 64, "BLOCK_Y": 32, "BLOCK_K": 16, "num_warps": 4, "num_stages": 3}}


@dataclass(frozen=True)
class TritonRegion:
    kernels: str
    launcher: str  # the body of run(...) for this region
    arguments: tuple[str, ...]  # run()'s parameters for this region
    tiles: dict[str, str]  # kernel name -> elements of its largest tiles (an expression over cfg)
    reads: frozenset[str] = frozenset()  # the launch parameters its kernels and launcher read
    dots: tuple[str, ...] = ()  # every tl.dot's kind: "float" (ieee), "tf32", "double" (any other operands)


@dataclass(frozen=True)
class TritonModule:
    """A generated module and the launch parameters it reads (a tuner varies only those)."""

    text: str
    reads: frozenset[str]
    config: tuple[tuple[str, int], ...] = ()  # its default launch configuration (CONFIG), as items


class _HostPrinter:
    """The launcher: host loops in Python, one launch per kernel mark."""

    def __init__(self, scop: Scop, gs: GpuSchedule, prefix: str, scop_index: int, allow_tf32: bool = False):
        self.scop, self.gs, self.prefix, self.scop_index = scop, gs, prefix, scop_index
        self.allow_tf32 = allow_tf32
        self.dots: list[str] = []  # every tl.dot's kind ("float", "tf32", "double")
        self.rn = py_names(scop)
        self.loops: list[str] = []  # iterators of the host loops around the current node
        self.lines: list[str] = []
        self.kernels: list[str] = []
        self.tiles: dict[str, str] = {}  # kernel name -> elements of its largest tiles, over cfg
        self.reads: set[str] = set()  # launch parameters read by the kernels and their launches
        self.scalars_on_device = {a.name for a in scop.arrays if a.ndim == 0 and a.written}

    def emit(self, text: str, indent: int) -> None:
        self.lines.append("    " * indent + text)

    def expr(self, e: isl.AstExpr) -> str:
        return _py_expr(e, self.scop, self.rn, kernel=False)

    def node(self, n: isl.AstNode, indent: int) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in list_(n.block_get_children()):
                self.node(child, indent)
        elif t == isl.ast_node_type.for_:
            it = self.expr(n.for_get_iterator())
            init, inc = self.expr(n.for_get_init()), self.expr(n.for_get_inc())
            cond = n.for_get_cond()
            end = self.expr(cond.op_get_arg(1))
            if cond.op_get_type() == _T.le:
                end = f"({end}) + 1"
            self.emit(f"for {it} in range({init}, {end}{'' if inc == '1' else ', ' + inc}):", indent)
            self.loops.append(it)
            self.node(n.for_get_body(), indent + 1)
            self.loops.pop()
        elif t == isl.ast_node_type.if_:
            self.emit(f"if {self.expr(n.if_get_cond())}:", indent)
            self.node(n.if_get_then_node(), indent + 1)
            if n.if_has_else_node():
                self.emit("else:", indent)
                self.node(n.if_get_else_node(), indent + 1)
        elif isinstance(kernel := mark_of(n), KernelMark):
            self.launch(self.gs.kernel(kernel), n.mark_get_node(), indent)
        else:  # pragma: no cover
            raise UnsupportedError(f"Triton target: isl AST node {t} outside a kernel")

    def bound(self, pa: isl.PwAff) -> str:
        return _py_expr(param_expr(self.scop, pa), self.scop, self.rn, kernel=False)

    def kernel_body(self, info: KernelInfo, body: isl.AstNode, indent: int, persistent: bool) -> _KernelPrinter:
        kp = _KernelPrinter(self.scop, info, self.scalars_on_device, self.prefix, self.rn)
        kp.persistent = persistent
        kp.allow_tf32 = self.allow_tf32
        kp.prologue(indent)
        try:
            kp.node(body, indent)
        except UnsupportedError as e:
            if e.line is None:
                raise UnsupportedError(e.message, self.scop.file, kp.last_line) from None
            raise
        return kp

    def launch(self, info: KernelInfo, body: isl.AstNode, indent: int) -> None:
        kp = self.kernel_body(info, body, 1, persistent=False)
        lines = kp.lines
        width = max((e for e in kp.chunk_extents if e is not None), default=None)
        if width is not None:
            # BLOCK_R covers every constant-extent chunk loop: each runs as one chunk, in straight-line
            # code, so that a row stored by one loop and read by the next stays in registers (softmax's
            # exp(A - max) into B, then B / sum). Triton compiles only the branch the constexpr selects.
            kq = self.kernel_body(info, body, 2, persistent=True)
            lines = [f"    if BLOCK_R >= {width}:"] + kq.lines + ["    else:"] + ["    " + x for x in kp.lines]
            kp.arrays_used |= kq.arrays_used
        self.dots += kp.dots
        text = "\n".join(_barriers(forward_stores(lines)))
        words = set(re.findall(r"[A-Za-z_]\w*", text))
        arrays = [a for a in self.scop.arrays if a.name in kp.arrays_used]
        strides = [f"s_{self.rn[a.name]}_{d}" for a in arrays for d in range(a.ndim - 1)]
        scalars = [p[:-1] if p.endswith("_") and p[:-1] in self.scop.params else p
                   for p in self.scop.params if p not in self.scop.constants]
        scalars += [a.name for a in self.scop.arrays if a.ndim == 0 and not a.written]
        scalars += [f"{self.prefix}{k}" for k in range(info.depth)]
        scalars = [self.rn.get(s, s) for s in dict.fromkeys(scalars)]
        scalars = [s for s in scalars if s in words]
        axes = sorted(set(info.axes))
        extra = [f"lo_{j}" for j in range(info.mapped)] + [f"n_{AXES[ax]}" for ax in axes]
        consts = ["BLOCK_X: tl.constexpr", "BLOCK_Y: tl.constexpr", "BLOCK_Z: tl.constexpr",
                  "BLOCK_R: tl.constexpr", "BLOCK_K: tl.constexpr"]
        # isl can emit a mark more than once (a loop split around a hole): each copy is its own kernel
        name = f"_kernel{self.scop_index}_{info.index}" + (f"_{len(self.kernels)}" if any(
            f"def _kernel{self.scop_index}_{info.index}(" in k for k in self.kernels) else "")
        # a floating scalar keeps its C precision (a Python float is an fp32 argument otherwise)
        back = {v: k for k, v in self.rn.items()}
        typed = [f"{x}: tl.{FLOAT_NAMES[self.scop.float_scalars[back.get(x, x)]]}"
                 if self.scop.float_scalars.get(back.get(x, x)) and back.get(x, x) not in self.scop.params else x
                 for x in scalars]
        # the strides are constexprs: a tap's offset from the lane's element (`(k6 - 4) * s_A_0 + k7` in a
        # tl.static_range) is then a constant that the load instruction holds, not address arithmetic per
        # element (stencil2d: 85 of 504 instructions per output); a compile per array shape
        params = [self.rn[a.name] for a in arrays] + typed + extra
        consts += [f"{s}: tl.constexpr" for s in strides]
        self.kernels.append(f"@triton.jit\ndef {name}({', '.join(params + consts)}):\n{text}\n")
        present = [f"{self.prefix}{k}" in self.loops for k in range(info.depth)]
        host_names = [f"{self.prefix}{k}" for k in range(info.depth) if present[k]]
        for j in range(info.mapped):
            lo_pa, hi_pa = info.bounds(j, present)
            self.emit(f"lo_{j} = {self.bound(bound_as_params(lo_pa, host_names))}", indent)
            hi = self.bound(bound_as_params(hi_pa, host_names))
            self.emit(f"n_{AXES[info.axes[j]]} = ({hi}) - lo_{j} + 1", indent)
        cond = " and ".join(f"n_{AXES[ax]} > 0" for ax in axes) or "True"
        self.emit(f"if {cond}:", indent)
        blocks = _kernel_blocks(info.mapped, "BLOCK_R" in text)
        self.emit(f"bx, by, bz = {blocks}", indent + 1)
        self.tiles[name] = _tile_elements(blocks, "tl.dot(" in text, "BLOCK_R" in text)
        self.reads.update(re.findall(r"cfg\['(\w+)'\]", blocks))
        self.reads.update(n for n in ("BLOCK_R", "BLOCK_K") if f"tl.arange(0, {n})" in text)
        if "tl.dot(" in text:  # its tile size (tile_elements) counts BLOCK_X and BLOCK_Y
            self.reads.update(("BLOCK_X", "BLOCK_Y"))
        # ceiling division in plain integers (triton.cdiv costs ~2 us a call on the host); n_ > 0 here
        grid = [f"(n_{AXES[ax]} + {b} - 1) // {b}" if ax in axes else "1" for ax, b in enumerate(("bx", "by", "bz"))]
        tensors = [self.rn[a.name] for a in arrays]
        numbers = scalars + extra
        constexprs = ["bx", "by", "bz", "cfg['BLOCK_R']", "cfg['BLOCK_K']"]
        constexprs += [f"{self.rn[a.name]}.stride({d})" for a in arrays for d in range(a.ndim - 1)]
        # the kernel's parameters are the arrays, the numbers, then the constexprs, in this order
        self.emit(f"_launch({name}, ({', '.join(grid)}), {_tuple(tensors)}, {_tuple(numbers)}, "
                  f"{_tuple(constexprs)}, cfg['num_warps'], cfg['num_stages'])", indent + 1)


def _tuple(items: list[str]) -> str:
    """A Python tuple display of the expressions."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _kernel_blocks(mapped: int, reduces: bool) -> str:
    """A kernel's block sizes from the configuration: BLOCK_X/Y/Z along its mapped dims, or BLOCK_M rows
    for a one-dimensional kernel whose rows are reduced as vectors of BLOCK_R lanes (its tiles are
    BLOCK_M x BLOCK_R: the row count is its own knob, not the width of an element-wise block)."""
    if mapped <= 0:
        return "1, 1, 1"
    if mapped == 1:
        return "cfg['BLOCK_M'], 1, 1" if reduces else "cfg['BLOCK_X'], 1, 1"
    if mapped == 2:
        return "cfg['BLOCK_X'], cfg['BLOCK_Y'], 1"
    return "cfg['BLOCK_X'], cfg['BLOCK_Y'], cfg['BLOCK_Z']"


def _tile_elements(blocks: str, dot: bool, reduces: bool) -> str:
    """The elements of a kernel's largest tiles, as an expression over cfg (for rejecting a
    configuration whose tiles cannot fit in registers before compiling it)."""
    rows = " * ".join(f"({b})" for b in blocks.split(", "))
    if dot:
        return f"{rows} + cfg['BLOCK_K'] * (cfg['BLOCK_X'] + cfg['BLOCK_Y'])"
    return f"{rows} * cfg['BLOCK_R']" if reduces else rows


def run_arguments(scop: Scop) -> tuple[str, ...]:
    """run()'s parameters: the arrays (and written scalars, as 1-element tensors), then the numbers."""
    used = {a.array for st in scop.statements for a in st.accesses}
    tensors = [a.name for a in scop.arrays if a.name in used and (a.ndim > 0 or a.written)]
    numbers = [p[:-1] if p.endswith("_") and p[:-1] in scop.params else p
               for p in scop.params if p not in scop.constants]
    numbers += [a.name for a in scop.arrays if a.ndim == 0 and not a.written]
    rn = py_names(scop)
    return tuple(rn.get(x, x) for x in dict.fromkeys(tensors + numbers))


def generate_triton_region(scop: Scop, gs: GpuSchedule, prefix: str, scop_index: int,
                           allow_tf32: bool = False) -> TritonRegion:
    """*allow_tf32*: float32 contractions' tl.dot on TF32 tensor cores (else, and for any other type, "ieee")."""
    hp = _HostPrinter(scop, gs, prefix, scop_index, allow_tf32)
    ast = build_ast(scop, gs, prefix, scale_strides=False)
    hp.node(ast, 1)
    return TritonRegion("\n\n".join(hp.kernels), "\n".join(hp.lines), run_arguments(scop), hp.tiles,
                        frozenset(hp.reads), tuple(hp.dots))


MODULE_HEAD = '''"""Triton kernels generated by polytune from {file}.

run{suffix}({args}, config=None) runs scop region {first}: pass the arrays as torch tensors (contiguous, on
the GPU; scalars the region writes as 1-element tensors) and the other values as numbers. config overrides
the launch configuration (block sizes, num_warps, num_stages).
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice

CONFIG = {config}
_LAUNCHED = {{}}


def _device():
    try:
        return triton.runtime.driver.active.get_current_device()
    except RuntimeError:  # no GPU driver: Triton's interpreter
        return None


def _launch(kernel, grid, tensors, numbers, constexprs, num_warps, num_stages):
    """kernel[grid](*tensors, *numbers, *constexprs, num_warps=..., num_stages=...). Triton picks the
    compiled kernel from the arguments' values (dtypes, pointer alignment, integers equal to 1 or divisible
    by 16, integer widths); the one it picked is remembered for these exact values, and a launch with the
    same values calls it directly, without Triton's argument binding (about 8 us of host time a launch)."""
    device = _device()
    key = None
    if device is not None:
        key = (kernel, device, grid, constexprs, num_warps, num_stages, *[t.data_ptr() for t in tensors],
               *[t.dtype for t in tensors], *map(type, numbers), *numbers)
        fast = _LAUNCHED.get(key)
        if fast is not None:
            fast(*tensors, *numbers, *constexprs)
            return
    compiled = kernel[grid](*tensors, *numbers, *constexprs, num_warps=num_warps, num_stages=num_stages)
    if key is not None and hasattr(compiled, "launch_metadata"):  # a compiled kernel (not the interpreter)
        if len(_LAUNCHED) >= 4096:
            _LAUNCHED.clear()
        _LAUNCHED[key] = compiled[grid]
'''


def generate_triton_module(path: str, regions: list[tuple[Scop, GpuSchedule]], prefix: str,
                           config: dict | None = None, allow_tf32: bool = False) -> str:
    return triton_module(path, regions, prefix, config, allow_tf32).text


def triton_module(path: str, regions: list[tuple[Scop, GpuSchedule]], prefix: str,
                  config: dict | None = None, allow_tf32: bool = False) -> TritonModule:
    """The module of every region (kernels, a launcher run_<k>() each) and the launch parameters it reads:
    the block sizes its launches read, BLOCK_R/BLOCK_K where a kernel steps by them, num_warps, num_stages.
    Its default configuration is DEFAULT_CONFIG, with CONTRACTION_CONFIG's tile where a kernel has a tl.dot.
    *allow_tf32*: float32 tl.dots on TF32 tensor cores (input_precision="tf32"); never otherwise."""
    parts = []
    runs = []
    tiles: dict[str, str] = {}
    reads: set[str] = {"num_warps", "num_stages"}
    dots: list[str] = []
    for k, (scop, gs) in enumerate(regions):
        r = generate_triton_region(scop, gs, prefix, k, allow_tf32)
        dots += r.dots
        parts.append(r.kernels)
        tiles.update(r.tiles)
        reads |= r.reads
        runs.append(f"def run_{k}({', '.join(r.arguments)}, config=None):\n"
                    f"    \"\"\"Scop region {k} ({scop.file}:{scop.begin_line}-{scop.end_line}).\"\"\"\n"
                    f"    cfg = dict(CONFIG, **(config or {{}}))\n{r.launcher or '    pass'}\n")
    cfg = {**DEFAULT_CONFIG, **contraction_config(dots), **(config or {})}  # (the tuner's values win)
    first = regions[0][0] if regions else None
    head = MODULE_HEAD.format(file=path, suffix="", args=", ".join(run_arguments(first)) if first else "",
                              first=0, config=repr(cfg))
    tail = "\nrun = run_0\n" if regions else "\n"
    tail += ("\n\ndef tile_elements(config=None):\n"
             "    \"\"\"Elements of each kernel's largest tiles under a configuration.\"\"\"\n"
             "    cfg = dict(CONFIG, **(config or {}))\n"
             "    return {" + ", ".join(f"{k!r}: {v}" for k, v in tiles.items()) + "}\n")
    return TritonModule(head + "\n\n" + "\n\n".join(parts) + "\n\n" + "\n\n".join(runs) + tail, frozenset(reads),
                        tuple(cfg.items()))


def contraction_config(dots: list[str] | tuple[str, ...]) -> dict:
    """The default tile of a module whose kernels have tl.dots of these kinds: float64's where any is double
    (its registers bound the tile), else TF32's where any runs on tensor cores, else full float32's; none
    without a dot."""
    if not dots:
        return {}
    return dict(CONTRACTION_CONFIG["double" if "double" in dots else "tf32" if "tf32" in dots else "float"])
