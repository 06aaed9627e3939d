"""The Triton target: the launch configuration (block sizes, num_warps, num_stages, the FUSE schedule)."""
from __future__ import annotations

import os

from ..emit.triton import DEFAULT_CONFIG
from ..measure.measurement import Config, to_record
from ..measure.measurer import Measurer
from ..measure.runner import Variant
from ..measure.triton import TritonRunner, cached_choice, candidates, remember_choice
from ..pipeline import generate_triton, triton_modules
from ..search import Parameter, SearchSpace, parse_domain
from .base import Target

DOMAINS = {"BLOCK_X": (1, 1024), "BLOCK_Y": (1, 256), "BLOCK_Z": (1, 64), "BLOCK_M": (1, 256),
           "BLOCK_R": (16, 4096), "BLOCK_K": (16, 256), "num_warps": (1, 16), "num_stages": (1, 4), "FUSE": (0, 1)}
LINEAR = ("num_stages", "FUSE")  # domains of consecutive integers (the others are powers of two)
CONFIRM_ROUNDS = 3  # (each round: the seed's and the best's median of --runs timed calls)
ORDER = ("BLOCK_X", "BLOCK_Y", "BLOCK_Z", "BLOCK_M", "BLOCK_R", "BLOCK_K", "num_warps", "num_stages")


class TritonTarget(Target):
    name = "triton"
    gpu = True

    @classmethod
    def default_output(cls, path: str) -> str:
        root = os.path.splitext(path)[0]
        return f"{root.replace('.', '_').replace('-', '_')}_triton.py"

    @property
    def modules(self) -> dict:
        """The modules worth measuring, by FUSE value (with the parameters each reads)."""
        return triton_modules(self.program, self.opts)

    def parameter_names(self) -> list[str]:
        """The launch parameters the modules read, in ORDER, and FUSE where the fused schedule differs."""
        mods = self.modules
        reads = set().union(*(m.reads for m in mods.values()))
        return [n for n in ORDER if n in reads] + (["FUSE"] if len(mods) > 1 else [])

    def parameters(self) -> list[Parameter]:
        params = []
        for name in self.parameter_names():
            lo, hi = DOMAINS[name]
            values = tuple(range(lo, hi + 1)) if name in LINEAR else parse_domain(f"{lo}:{hi}:pow2")
            params.append(Parameter(name, values))
        return params

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        if how == "pluto":  # the module's own default (a contraction's library tile where it has one)
            default = dict(DEFAULT_CONFIG, **dict(self.modules[0].config))
            return tuple(default[p.name] for p in space.params)
        if how == "origin":
            return (1,) * len(space.params)
        return None

    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        cfg = dict(zip(names, config))
        mod = self.modules.get(cfg.get("FUSE", 0))
        reads = (mod.reads if mod is not None else frozenset()) | ({"FUSE"} & set(names))
        return Variant(tuple(config), tuple(names), cfg, frozenset(reads),
                       lambda: generate_triton(self.program, self.opts, cfg))

    def runner(self) -> TritonRunner:
        return TritonRunner(self.program, self.build, runs=self.build.runs,
                            texts={f: m.text for f, m in self.modules.items()}, allow_tf32=self.opts.allow_tf32)

    def measured_texts(self) -> list[str]:
        return [m.text for m in self.modules.values()]

    def launch_seed(self, runner: TritonRunner, space: SearchSpace, measurer: Measurer, seed: Config):
        return triton_seed(runner.key, space, measurer, seed)

    def report(self, runner: TritonRunner, launch: dict | None) -> dict:
        return {"triton": {"launch_choice": launch, "kernels": runner.resources, "device": runner.device}}

    def confirm(self, runner: TritonRunner, seed, best, names) -> tuple[dict | None, list[str]]:
        """The seed and the best timed again, in turn, CONFIRM_ROUNDS times each: a Triton program's region is
        its module's run() on its tensors, which is what the search timed (its kernels on the GPU, the
        launcher's host time hidden: measure.triton.spaced_time), so the gain the report states is the one
        these fresh, interleaved rounds reproduce (with a warning where it is over 3% lower). ``call_gain``:
        the gain a program that calls run() once and waits for it sees (the launcher's host time counted)."""
        if seed is None or best is None or not seed.ok or not best.ok or tuple(seed.config) == tuple(best.config):
            return None, []
        times: dict[str, list[float]] = {"seed": [], "best": []}
        calls: dict[str, list[float]] = {"seed": [], "best": []}
        for _ in range(CONFIRM_ROUNDS):
            for label, m in (("seed", seed), ("best", best)):
                r = runner.measure_fresh(tuple(m.config), tuple(names))
                if not r.ok:
                    why = f"the {label} failed when measured again: {r.error.value} {r.detail}"
                    return {"error": why}, [f"polytune: warning: the tuned gain could not be re-measured ({why})"]
                times[label].append(r.value)
                if "call_ms" in r.extra:
                    calls[label].append(r.extra["call_ms"])
        kernel_gain = seed.value / best.value
        s, b = sorted(times["seed"])[CONFIRM_ROUNDS // 2], sorted(times["best"])[CONFIRM_ROUNDS // 2]
        out = {"runs": CONFIRM_ROUNDS, "kernel_gain": kernel_gain, "program_gain": s / b,
               "seed_region_ms": [1e3 * t for t in times["seed"]], "best_region_ms": [1e3 * t for t in times["best"]]}
        if calls["seed"] and calls["best"]:  # a single call waited for: the launcher's host time counts too
            cs, cb = sorted(calls["seed"])[CONFIRM_ROUNDS // 2], sorted(calls["best"])[CONFIRM_ROUNDS // 2]
            out.update(call_gain=cs / cb, seed_call_ms=calls["seed"], best_call_ms=calls["best"])
        out["holds"] = s / b >= kernel_gain * 0.97
        warn = [] if out["holds"] else [
            f"polytune: warning: the tuned gain does not hold when measured again: {kernel_gain:.2f}x in the "
            f"search, {s / b:.2f}x in {CONFIRM_ROUNDS} interleaved rounds of run()"]
        return out, warn

    def finish(self, runner: TritonRunner, best, names) -> None:
        if best is not None:
            remember_choice(runner.key, dict(zip(names, best.config)))


def triton_seed(key: str, space: SearchSpace, measurer: Measurer, default: Config):
    """Algorithm 9.1: the remembered choice for this kernel source (*key*), else the best of a small
    candidate set derived from the kernel's shape (measured: compiled, spills rejected, warmed up, repeated).
    The candidates are all submitted to *measurer* at once (on workers: compiled in parallel; in this process:
    measured one after the other as they are submitted), then read in order."""
    names = space.names
    hit = cached_choice(key)
    if hit and set(hit) == set(names):
        return tuple(hit[n] for n in names), {"source": "cache", "config": hit}
    best, best_m, tried = default, None, []
    configs = [tuple(cand.get(n, default[i]) for i, n in enumerate(names)) for cand in candidates(names)]
    futures = [measurer.submit(config) for config in configs]
    for config, future in zip(configs, futures):
        m = future.result()
        tried.append(to_record(m))
        if m.ok and (best_m is None or m.value < best_m.value):
            best, best_m = config, m
    if best_m is not None:
        remember_choice(key, dict(zip(names, best)))
    return best, {"source": "candidates", "config": dict(zip(names, best)), "candidates": tried}
