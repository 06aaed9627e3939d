"""The CUDA target: the thread-block shape of the GPU kernels."""
from __future__ import annotations

import os

from ..emit.cuda import default_block
from ..errors import UsageError
from ..measure.cuda import CudaBuildConfig, CudaRunner, serve_source
from ..measure.measurement import Config
from ..measure.runner import Variant
from ..pipeline import OptimizeOptions, generate
from ..search import Parameter, SearchSpace
from .base import Target

BLOCK_PARAMS = ("block_x", "block_y", "block_z")


class CudaTarget(Target):
    name = "cuda"
    build_class = CudaBuildConfig
    build_options = ()

    def __init__(self, program, opts, build=None, domain_cap=512):
        super().__init__(program, opts, build, domain_cap)
        if not isinstance(self.build, CudaBuildConfig):
            raise UsageError("the cuda target needs a CudaBuildConfig")  # pragma: no cover

    @classmethod
    def default_output(cls, path: str) -> str:
        return f"{os.path.splitext(path)[0]}.polytune.cu"

    def parameters(self) -> list[Parameter]:
        n = max((a.gpu.max_mapped for a in self.program.scops), default=0)
        if n == 0:
            raise UsageError("nothing to tune: no scop has a parallel loop to map to GPU threads", self.program.path)
        return [Parameter(BLOCK_PARAMS[d], tuple(2 ** k for k in range(11 if d < 2 else 7))) for d in range(n)]

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        n = len(space.params)
        if how == "pluto":
            return default_block(n)
        if how == "origin":
            return (1,) * n
        return None

    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        opts = OptimizeOptions(target=self.name, block=tuple(config))
        return Variant(tuple(config), tuple(names), opts, frozenset(names),
                       lambda: generate(self.program, opts).text)

    def runner(self) -> CudaRunner:
        return CudaRunner(self.program, self.build)

    def measured_texts(self) -> list[str]:
        return [serve_source(self.program)]

    def report(self, runner: CudaRunner, launch) -> dict:
        return {"gpu": {"registers": runner.registers, "spill_bytes": runner.spills,
                        "compile_time": runner.compile_time, "compile_error": runner.compile_error or None,
                        "kernels": {k: v for k, v in runner.resources.items()}}}
