"""Compile every Triton kernel polytune generates for the given files ahead of time for sm_90, as run()
launches it on the original program's data, without a GPU (used by tests/test_triton.py in a subprocess:
a process that imported Triton for its interpreter cannot compile).

    python tests/triton_aot.py 'path.c|N=9,TSTEPS=2' ...

Prints '<file>: ok (<k> kernels compiled)' or '<file>: FAILED ...' per file; exit 1 if any failed, 3 if
this Triton cannot compile for CUDA.
"""
from __future__ import annotations

import os
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import triton  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from polytune.emit.triton import py_names  # noqa: E402
from polytune.measure.c import BuildConfig  # noqa: E402
from polytune.measure.triton import load_module, run_args, run_probe  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze, triton_variants  # noqa: E402

CONFIGS = ({}, {"BLOCK_X": 32, "BLOCK_Y": 32, "BLOCK_Z": 2, "BLOCK_K": 16, "BLOCK_M": 2, "BLOCK_R": 64,
                "num_warps": 4, "num_stages": 3})
POINTERS = {torch.float64: "*fp64", torch.float32: "*fp32", torch.int64: "*i64", torch.int32: "*i32",
            torch.int16: "*i16", torch.int8: "*i8", torch.uint8: "*u8"}


def signature(kernel, tensors, numbers, constexprs) -> tuple[dict, dict]:
    """Triton's signature of a launch: pointer types from the tensors, i32/i64 from the integers, float
    scalars as the kernel declares them (fp32 unless annotated), the constexprs by value."""
    sig, consts = {}, {}
    values, cvalues = iter(list(tensors) + list(numbers)), iter(constexprs)
    for p in kernel.params:
        if p.is_constexpr:
            sig[p.name], consts[p.name] = "constexpr", next(cvalues)
            continue
        v = next(values)
        if isinstance(v, torch.Tensor):
            sig[p.name] = POINTERS[v.dtype]
        elif isinstance(v, float):
            sig[p.name] = "fp64" if "float64" in str(p.annotation) else "fp32"
        else:
            sig[p.name] = "i32" if -2**31 <= int(v) < 2**31 else "i64"
    return sig, consts


def check(src: str, defines: tuple[str, ...], target) -> int:
    """Compile every kernel of src's modules under CONFIGS; the number compiled."""
    program = analyze(src, defines=defines)
    compiled = 0
    with tempfile.TemporaryDirectory() as tmp:
        data = run_probe(program, BuildConfig(cflags=("-O1",), defines=defines), tmp)
        rn = py_names(program.scops[0].scop)
        arrays = {k: torch.from_numpy(v.copy()) for k, v in data.arrays.items()}
        for text in triton_variants(program, OptimizeOptions(target="triton")).values():
            mod = load_module(text, tmp)
            args = run_args(mod, rn, arrays, data.numbers)
            for config in CONFIGS:
                launches = {}
                mod._launch = lambda kernel, grid, *rest: launches.setdefault(kernel, rest)  # noqa: B023
                mod.run(**args, config=config)
                for kernel, (tensors, numbers, constexprs, warps, stages) in launches.items():
                    sig, consts = signature(kernel, tensors, numbers, constexprs)
                    triton.compile(ASTSource(kernel, sig, consts), target=target,
                                   options={"num_warps": warps, "num_stages": stages})
                    compiled += 1
    return compiled


def main(cases: list[str]) -> int:
    try:
        from triton.backends.compiler import GPUTarget
        target = GPUTarget("cuda", 90, 32)
        triton.compiler.make_backend(target)
    except Exception as e:  # noqa: BLE001 - a Triton without its CUDA backend
        print(f"Triton cannot compile for CUDA here: {type(e).__name__}: {e}")
        return 3
    failed = 0
    for case in cases:
        src, _, defs = case.partition("|")
        try:
            n = check(src, tuple(d for d in defs.split(",") if d), target)
            print(f"{src}: ok ({n} kernels compiled)", flush=True)
        except Exception as e:  # noqa: BLE001 - reported per file
            failed += 1
            cause = e.__cause__ or e
            print(f"{src}: FAILED {type(e).__name__}: {e}\n  cause: {type(cause).__name__}: {cause}\n"
                  + "".join(traceback.format_exception(cause)[-3:]), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
