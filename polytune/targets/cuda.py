"""The CUDA target: how the kernels use the GPU (emit.cuda.mapping_space): the block shape, points per thread,
the reduction tile, shared memory per array, registers, a warp per row, and which kernels are tiled."""
from __future__ import annotations

import os
from dataclasses import asdict

from ..emit.cuda import TILING, default_config, mapping_from_config, mapping_space
from ..errors import UsageError
from ..measure.cuda import CudaBuildConfig, CudaRunner, program_gain, serve_source
from ..measure.measurement import Config, Measurement
from ..measure.runner import Variant
from ..pipeline import generate_cuda
from ..search import Parameter, SearchSpace
from .base import Target

BLOCK_PARAMS = ("block_x", "block_y", "block_z")


class CudaTarget(Target):
    name = "cuda"
    build_class = CudaBuildConfig
    build_options = ()
    gpu = True
    program_runs = 9  # runs of the seed's and the best's program each, interleaved (confirm, Welch interval)

    def __init__(self, program, opts, build=None, domain_cap=512):
        super().__init__(program, opts, build, domain_cap)
        if not isinstance(self.build, CudaBuildConfig):
            raise UsageError("the cuda target needs a CudaBuildConfig")  # pragma: no cover

    @classmethod
    def default_output(cls, path: str) -> str:
        return f"{os.path.splitext(path)[0]}.polytune.cu"

    def _regions(self, fused: bool = False) -> list:
        return [(a.scop, a.gpu_mapping(fused)) for a in self.program.scops]

    def parameters(self) -> list[Parameter]:
        n = max((a.gpu.max_mapped for a in self.program.scops), default=0)
        if n == 0:
            raise UsageError("nothing to tune: no scop has a parallel loop to map to GPU threads", self.program.path)
        return [Parameter.categorical(name, TILING) if name == "tiling" else Parameter(name, values)
                for name, values in mapping_space(self._regions(), self._regions(fused=True))]

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        if how == "pluto":  # the default mapping
            default = default_config(self._regions(), self._regions(fused=True))
            return tuple(default.get(p.name, p.values[0]) for p in space.params)
        if how == "origin":
            return tuple(p.values[0] for p in space.params)
        return None

    def mapping(self, names: tuple[str, ...], config: Config):
        return mapping_from_config(dict(zip(names, config)))

    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        mapping = self.mapping(names, config)
        # the flat mapping reads only its block, the reduction tile matters only where something is staged:
        # configurations that differ elsewhere give the same code (measured once, see measure.runner.Memo)
        reads = frozenset(n for n in names if n in BLOCK_PARAMS or n in ("tiling", "fuse")) if mapping.flat else \
            frozenset(n for n in names if n != "reduction_tile" or mapping.shared)
        return Variant(tuple(config), tuple(names), mapping, reads,
                       lambda: generate_cuda(self.program, self.opts, mapping=mapping))

    def describe_best(self, names: tuple[str, ...], config: Config) -> dict:
        return {"cuda_mapping": asdict(self.mapping(names, config))}

    def runner(self) -> CudaRunner:
        return CudaRunner(self.program, self.build)

    def measured_texts(self) -> list[str]:
        return [serve_source(self.program)]

    def report(self, runner: CudaRunner, launch) -> dict:
        return {"gpu": {"registers": runner.registers, "spill_bytes": runner.spills,
                        "compile_time": runner.compile_time, "compile_error": runner.compile_error or None,
                        "kernels": {k: v for k, v in runner.resources.items()},
                        "mapping_builds": runner.mapping_builds}}

    def confirm_best(self, runner: CudaRunner, seed: Measurement | None, best: Measurement | None,
                     names: tuple[str, ...], starts: dict[str, Measurement], runs: int,
                     defines: tuple[str, ...] | None = None,
                     workers=None) -> tuple[dict | None, list[str], Measurement | None]:
        """``confirm``, and the configuration kept: the best, unless its program is slower than the seed's
        over the whole 95% interval of the program gain (then the seed, with a warning: the user's program
        would lose what the kernels gained and more)."""
        info, warnings = self.confirm(runner, seed, best, names)
        low, high = (info or {}).get("program_gain_interval") or (None, None)
        if info is not None and high is not None and high < 1.0:
            warnings = [*warnings, f"polytune: warning: kept the seed: the best's program is slower than the "
                                   f"seed's ({info['program_gain']:.3f}x, 95% interval {low:.3f}-{high:.3f})"]
            return dict(info, kept="seed"), warnings, seed
        return info, warnings, best

    def confirm(self, runner: CudaRunner, seed: Measurement | None, best: Measurement | None,
                names: tuple[str, ...]) -> tuple[dict | None, list[str]]:
        """The tuned gain re-measured in the program: the seed's and the best's whole programs, run in turn,
        each timing its regions as it runs them (measure.cuda.program_gain): the program gain with its 95%
        interval beside the gain the kernels predict; a warning where the kernels gain more than 3% less in the
        program than in the search, or where the program gain falls short of the predicted one."""
        if seed is None or best is None or not seed.ok or not best.ok or tuple(seed.config) == tuple(best.config):
            return None, []
        runner.stop()  # (its serving process holds device memory)
        return program_gain(self.program, self.build, self.mapping(names, seed.config),
                            self.mapping(names, best.config), seed, best, self.program_runs)
