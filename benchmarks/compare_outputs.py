"""Every output polytune generates, written to a folder, and two such folders compared byte for byte.

A refactor is behaviour-preserving when the outputs before and after are identical:

    python benchmarks/compare_outputs.py --write /tmp/before      # on the old code
    python benchmarks/compare_outputs.py --write /tmp/after       # on the new code
    python benchmarks/compare_outputs.py --compare /tmp/before /tmp/after

Outputs: every benchmarks/pluto and tests/data/polybench kernel as C under both schedules (pluto, outer) at
two tile settings (the default and 7,5,3), with the optimize report; every benchmarks/gpu and benchmarks/pluto
kernel as CUDA and as Triton through the code path `tune` uses for its default configuration (the search
space, the seed, the variant texts measured, and the best text written for the seed). A user error is an
output too (its message). Needs no compiler, GPU or torch. Run from the repository root with PYTHONPATH=$PWD.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C_FILES = ("benchmarks/pluto/*.c", "tests/data/polybench/*.c")
GPU_FILES = ("benchmarks/gpu/*.c", "benchmarks/pluto/*.c")
TILES = {"default": (), "t753": (7, 5, 3)}


def _files(patterns) -> list[str]:
    return sorted(os.path.relpath(f, ROOT) for p in patterns for f in glob.glob(os.path.join(ROOT, p)))


def _guard(out: dict, name: str, fn) -> None:
    """out[name] = fn(), or the one-line message of the polytune error it raised."""
    from polytune.errors import PolytuneError
    try:
        out[name] = fn()
    except PolytuneError as e:
        out[name + ".error"] = f"{type(e).__name__}: {e}\n"


def _space_json(space, seed) -> str:
    return json.dumps({"space": [{"name": p.name, "values": list(p.values)} for p in space.params],
                       "seed": list(seed)}, indent=1) + "\n"


def _tune_outputs(program, target: str) -> dict[str, str]:
    """What `tune --target TARGET` generates for its default configuration (seed 'pluto')."""
    out: dict[str, str] = {}
    try:  # the Target interface (after issue 15)
        from polytune.tune import make_target
    except ImportError:
        make_target = None
    if make_target is not None:
        from polytune.tune import TuneOptions
        tgt = make_target(program, TuneOptions(target=target, cache=None))
        space = tgt.space()
        seed = tgt.seed(space, "pluto")
        out["space.json"] = _space_json(space, seed)
        for k, text in enumerate(tgt.measured_texts()):
            out[f"measured{k}.txt"] = text
        out["best.txt"] = tgt.variant(space.names, seed).text
        return out
    from polytune.pipeline import OptimizeOptions, generate, generate_triton, triton_variants
    from polytune.tune import TuneOptions, build_space, seed_config
    opts = TuneOptions(target=target, cache=None)
    base = OptimizeOptions(parallel=opts.parallel, target=target, schedule=opts.schedule, unroll_jam=opts.unroll_jam)
    space = build_space(program, opts, base)
    seed = seed_config(program, space, opts, base)
    out["space.json"] = _space_json(space, seed)
    if target == "triton":
        for k, text in enumerate(triton_variants(program, OptimizeOptions(target="triton")).values()):
            out[f"measured{k}.txt"] = text
        out["best.txt"] = generate_triton(program, base, dict(zip(space.names, seed)))
    else:
        from polytune.measure_cuda import SERVE_PRELUDE

        from polytune.emit.c import generate_dump
        from polytune.pipeline import generate_cuda
        dumps = [generate_dump(a.scop, indent=3, avoid=program.identifiers) for a in program.scops]
        out["measured0.txt"] = SERVE_PRELUDE + generate_cuda(program, OptimizeOptions(target="cuda"), serve=True,
                                                             dumps=dumps)
        out["best.txt"] = generate(program, OptimizeOptions(target="cuda", block=tuple(seed))).text
    return out


def outputs_of(rel: str, kinds: tuple[str, ...]) -> dict[str, str]:
    """Every output of one file: {relative output name: text}."""
    from polytune.pipeline import OptimizeOptions, analyze, generate
    out: dict[str, str] = {}
    try:
        program = analyze(os.path.join(ROOT, rel))
    except Exception as e:  # noqa: BLE001 - an input polytune rejects is an output too
        return {"analyze.error": f"{type(e).__name__}: {e}\n"}
    if "c" in kinds:
        for sched in ("pluto", "outer"):
            for tname, sizes in TILES.items():
                def c(sched=sched, sizes=sizes):
                    r = generate(program, OptimizeOptions(tile_sizes=sizes, schedule=sched))
                    return r.text + "\n/* report */\n" + json.dumps(r.report, indent=1, sort_keys=True) + "\n"
                _guard(out, f"c-{sched}-{tname}.c", c)
    for target in ("cuda", "triton"):
        if target in kinds:
            sub: dict[str, str] = {}
            _guard(sub, "tune", lambda target=target: _tune_outputs(program, target))
            for k, v in sub.items():
                if isinstance(v, dict):
                    out.update({f"{target}-{n}": t for n, t in v.items()})
                else:
                    out[f"{target}-{k}"] = v
    return out


def _job(args) -> tuple[str, dict[str, str]]:
    rel, kinds = args
    return rel, outputs_of(rel, kinds)


def write(dest: str, jobs: int) -> int:
    work: dict[str, set] = {}
    for f in _files(C_FILES):
        work.setdefault(f, set()).add("c")
    for f in _files(GPU_FILES):
        work.setdefault(f, set()).update(("cuda", "triton"))
    todo = [(rel, tuple(sorted(k))) for rel, k in sorted(work.items())]
    n = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for rel, outs in pool.map(_job, todo):
            d = os.path.join(dest, rel.replace("/", "__"))
            os.makedirs(d, exist_ok=True)
            for name, text in outs.items():
                with open(os.path.join(d, name), "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
                    f.write(text)
                n += 1
    print(f"wrote {n} outputs of {len(todo)} files to {dest}")
    return 0


def _tree(d: str) -> set[str]:
    return {os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs}


def compare(a: str, b: str) -> int:
    ta, tb = _tree(a), _tree(b)
    differ = []
    for rel in sorted(ta & tb):
        with open(os.path.join(a, rel), "rb") as fa, open(os.path.join(b, rel), "rb") as fb:
            if fa.read() != fb.read():
                differ.append(rel)
    for rel in sorted(ta - tb):
        print(f"only in {a}: {rel}")
    for rel in sorted(tb - ta):
        print(f"only in {b}: {rel}")
    for rel in differ:
        print(f"differs: {rel}")
    same = len(ta & tb) - len(differ)
    print(f"compared {len(ta | tb)} files: {same} identical, {len(differ)} differ, "
          f"{len(ta ^ tb)} missing on one side")
    return 0 if same == len(ta | tb) else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="DIR")
    g.add_argument("--compare", nargs=2, metavar=("DIR1", "DIR2"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.write:
        return write(args.write, args.jobs)
    return compare(*args.compare)


if __name__ == "__main__":
    sys.exit(main())
