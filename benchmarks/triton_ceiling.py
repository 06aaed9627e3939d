#!/usr/bin/env python3
"""How close can Triton get to torch.matmul in float32 on this GPU? polytune's generated matmul kernel
against Triton's own tutorial kernel (grouped launch order, no masks on K when the block divides it), at
the same launch configurations, and both against torch.matmul (TF32 off), side by side.

Every variant's result is compared with torch.matmul's (relative 1e-4, the float32 tolerance of
`polytune tune --target triton`) before it is timed. Times: triton.testing.do_bench medians; each round
times every variant once, in turn; ratios are per round, then the median over rounds.

    python benchmarks/triton_ceiling.py [--n 2048] [--rounds 5] [--json out.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

CONFIGS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
    (128, 128, 32, 8, 3), (128, 128, 32, 4, 3), (128, 256, 32, 8, 3), (256, 128, 32, 8, 3),
    (128, 128, 16, 8, 4), (64, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 256, 32, 8, 3),
    (128, 128, 64, 8, 2), (256, 64, 32, 8, 3), (256, 128, 16, 8, 4), (64, 64, 32, 4, 4),
]


@triton.jit
def tutorial_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, PREC: tl.constexpr = "ieee"):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def polytune_module(n: int, tf32: bool = False, full_only: bool = False):
    """polytune's Triton module for benchmarks/gpu/matmul_vanilla.c at N=n, imported (*full_only*: its
    whole-tile test made True, so Triton drops the masked K loop: an experiment, right only where every
    tile is whole)."""
    import re

    from polytune.pipeline import OptimizeOptions, analyze, generate
    program = analyze(os.path.join(HERE, "gpu", "matmul_vanilla.c"), defines=(f"N={n}",))
    text = generate(program, OptimizeOptions(target="triton", allow_tf32=tf32)).text
    if full_only:
        text = re.sub(r"^(\s*full\d+) = .*$", r"\1 = True", text, flags=re.M)
    path = os.path.join(tempfile.mkdtemp(), f"pt_matmul{int(tf32)}{int(full_only)}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("pt_matmul", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--tf32", action="store_true", help="TF32 everywhere: tl.dot input_precision tf32 (polytune "
                    "--allow-tf32), torch with TF32 on; checked to 1e-2")
    ap.add_argument("--configs", help="M,N,K,W,S;... (default: the twelve above)")
    ap.add_argument("--dump", help="write the TTGIR of some of polytune's compiled kernels into this folder")
    ap.add_argument("--full-only", action="store_true", help="also polytune's module without its masked K loop")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.set_float32_matmul_precision("high" if args.tf32 else "highest")
    prec, tol = ("tf32", 1e-2) if args.tf32 else ("ieee", 1e-4)
    configs = [tuple(int(x) for x in c.split(",")) for c in args.configs.split(";")] if args.configs else CONFIGS
    n = args.n
    g = torch.Generator().manual_seed(0)
    a = torch.rand(n, n, generator=g).cuda() - 0.5
    b = torch.rand(n, n, generator=g).cuda() - 0.5
    ref = torch.matmul(a, b)
    mod = polytune_module(n, args.tf32)
    mods = {"polytune": mod}
    if args.full_only:
        mods["polytune whole-tile loop only"] = polytune_module(n, args.tf32, True)
    variants = {"torch.matmul": lambda: torch.matmul(a, b)}
    wgmma = {}
    for bm, bn, bk, w, s in configs:
        c1 = torch.empty_like(a)
        c2 = torch.empty_like(a)

        def tut(c=c1, bm=bm, bn=bn, bk=bk, w=w, s=s):
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
            k = tutorial_matmul[grid](a, b, c, n, n, n, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=bm,
                                      BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, EVEN_K=n % bk == 0, PREC=prec,
                                      num_warps=w, num_stages=s)
            wgmma.setdefault(f"tutorial {bm}x{bn}x{bk} w{w} s{s}", "wgmma" in k.asm.get("ptx", ""))
            return c

        fs = [(f"tutorial {bm}x{bn}x{bk} w{w} s{s}", tut)]
        for label, m in mods.items():
            def ours(c=c2 if label == "polytune" else torch.empty_like(a), m=m, bm=bm, bn=bn, bk=bk, w=w, s=s):
                m.run(a, b, c, n, config={"BLOCK_Y": bm, "BLOCK_X": bn, "BLOCK_K": bk, "num_warps": w,
                                          "num_stages": s})
                return c
            fs.append((f"{label} {bm}x{bn}x{bk} w{w} s{s}", ours))

        for name, f in fs:
            try:
                out = f()
                torch.cuda.synchronize()
                err = ((out - ref).abs().max() / ref.abs().max()).item()
                if err > tol:
                    print(f"{name}: wrong (relative error {err:.2e}), skipped", flush=True)
                    continue
            except Exception as e:  # out of resources (shared memory), compile errors: skipped, reported
                print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
                continue
            variants[name] = f
    for label, m in mods.items():  # which of our compiled kernels use Hopper's wgmma
        try:
            for entry in (getattr(m._kernel0_0, "device_caches", None) or {}).values():
                for compiled in (entry[0] if isinstance(entry, tuple) else entry).values():
                    md = compiled.metadata
                    key = (f"{label} w{getattr(md, 'num_warps', '?')} s{getattr(md, 'num_stages', '?')} "
                           f"smem {getattr(md, 'shared', '?')} regs {getattr(compiled, 'n_regs', '?')}")
                    wgmma[key] = "wgmma" in compiled.asm.get("ptx", "")
                    if args.dump and len(os.listdir(args.dump)) < 6:
                        with open(os.path.join(args.dump, f"{len(os.listdir(args.dump))}.ttgir"), "w") as fh:
                            fh.write(f"// {key}\n" + str(compiled.asm.get("ttgir", "")))
        except Exception as e:  # noqa: BLE001 - a look inside Triton's caches, best effort
            wgmma[label] = f"{type(e).__name__}: {e}"
    print("wgmma in PTX:", json.dumps(wgmma), flush=True)
    times = {k: [] for k in variants}
    for _ in range(args.rounds):
        for k, f in variants.items():
            times[k].append(triton.testing.do_bench(f, return_mode="median"))
    ratios = {k: statistics.median(t0 / t for t0, t in zip(times["torch.matmul"], v)) for k, v in times.items()}
    rows = sorted(variants, key=lambda k: -ratios[k])
    print(f"N={n}, float32 ({prec}), {args.rounds} rounds; ratio = torch time / variant time (median over rounds)")
    for k in rows:
        print(f"{k:36s} {statistics.median(times[k]):.4f} ms  {ratios[k]:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": n, "rounds": args.rounds, "precision": prec, "wgmma": wgmma, "times_ms": times,
                       "ratio_to_torch": ratios,
                       "gpu": torch.cuda.get_device_name()}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
