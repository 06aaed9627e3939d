#!/usr/bin/env python3
"""Where does a region-level Triton time go besides the kernel? polytune's generated matmul module
(benchmarks/gpu/matmul_vanilla.c) against torch.matmul (TF32 off), on the GPU:

- host cost per call: wall time of 2000 back-to-back calls at a size whose kernel is shorter than the
  launch (n=128), so the host side is what is measured;
- single-call CUDA-event time at --n, as `polytune tune --target triton` times a region: GPU idle before
  each call, the launch inside the timing; once straight after another call (warm), once after 50 ms idle;
- do_bench at --n: calls queued back to back, the kernel's throughput.

    python benchmarks/launch_overhead.py [--n 2048] [--reps 21]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import triton  # noqa: E402
from triton_ceiling import polytune_module  # noqa: E402

CONFIG = {"BLOCK_Y": 128, "BLOCK_X": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}


def host_us(f, calls: int = 2000) -> float:
    f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def single_ms(f, reps: int, idle: float) -> float:
    times = []
    for _ in range(reps):
        f()
        torch.cuda.synchronize()
        if idle:
            time.sleep(idle)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def variants(n: int):
    g = torch.Generator().manual_seed(0)
    a = (torch.rand(n, n, generator=g) - 0.5).cuda()
    b = (torch.rand(n, n, generator=g) - 0.5).cuda()
    c = torch.empty_like(a)
    mod = polytune_module(n)
    kern = mod._kernel0_0
    cfg = dict(mod.CONFIG, **CONFIG)
    grid = (triton.cdiv(n, cfg["BLOCK_X"]), triton.cdiv(n, cfg["BLOCK_Y"]), 1)
    direct_args = (a, b, c, n, 0, 0, n, n)
    direct_kw = dict(BLOCK_X=cfg["BLOCK_X"], BLOCK_Y=cfg["BLOCK_Y"], BLOCK_Z=1, BLOCK_R=cfg["BLOCK_R"],
                     BLOCK_K=cfg["BLOCK_K"], s_A_0=a.stride(0), s_B_0=b.stride(0), s_C_0=c.stride(0),
                     num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    out = {
        "torch.matmul": lambda: torch.matmul(a, b),
        "polytune run()": lambda: mod.run(a, b, c, n, config=CONFIG),
        "jit launch, args ready": lambda: kern[grid](*direct_args, **direct_kw),
    }
    try:
        compiled = kern.warmup(*direct_args, grid=grid, **direct_kw)
        launcher = compiled[grid]
        full = direct_args + (cfg["BLOCK_X"], cfg["BLOCK_Y"], 1, cfg["BLOCK_R"], cfg["BLOCK_K"], a.stride(0),
                              b.stride(0), c.stride(0))  # (the strides are constexprs, after the blocks)
        launcher(*full)
        out["compiled kernel launch"] = lambda: launcher(*full)
    except Exception as e:  # noqa: BLE001 - the API differs between Triton versions; reported, not fatal
        print(f"compiled kernel launch: {type(e).__name__}: {e}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    rows = {}
    for k, f in variants(128).items():
        rows[k] = {"host_us_n128": host_us(f)}
    for k, f in variants(args.n).items():
        rows[k].update(single_warm_ms=single_ms(f, args.reps, 0.0), single_idle_ms=single_ms(f, args.reps, 0.05),
                       do_bench_ms=triton.testing.do_bench(f, return_mode="median"))
    print(f"\n| call | host us/call (n=128) | single call, warm (ms) | single call, after 50 ms idle (ms) "
          f"| do_bench (ms), n={args.n} |\n|---|---|---|---|---|")
    for k, r in rows.items():
        print(f"| {k} | {r['host_us_n128']:.1f} | {r['single_warm_ms']:.4f} | {r['single_idle_ms']:.4f} "
              f"| {r['do_bench_ms']:.4f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
