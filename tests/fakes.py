"""Stand-ins for a target, a runner and a workers pool, shared by the measurer's tests (tests/test_measurer.py,
tests/test_tune_jobs.py): a configuration's time is the sum of its values."""
from __future__ import annotations

from concurrent.futures import Future

from polytune.measure import Measurement, Variant
from polytune.workers import WorkResult


class FakeTarget:
    """The second parameter is read only when the first is 1 (as a schedule choice reads some tile sizes)."""

    def variant(self, names, config):
        reads = frozenset(names) if config[0] == 1 else frozenset(names[:1])
        return Variant(tuple(config), tuple(names), None, reads, lambda: "")


class FakeRunner:
    """Measures a configuration as the sum of its values, in this process or as a pool's two steps; remembers
    what it measured and the bound each measurement read, and what came back to keep."""

    def __init__(self, fail: BaseException | None = None):
        self.measured: list[tuple] = []
        self.bounds: list[float | None] = []
        self.kept: list[tuple] = []
        self.fail = fail

    def measure(self, variant, bound=None):
        if self.fail is not None:
            raise self.fail
        self.measured.append(variant.config)
        self.bounds.append(bound)
        return Measurement(variant.config, (float(sum(variant.config)),))

    def job(self, variant):
        return variant.config

    def reference_data(self):
        return "reference"

    @staticmethod
    def compile_step(config):
        return config

    @staticmethod
    def time_step(reference, bound, config):
        assert reference == "reference"
        return Measurement(config, (float(sum(config)),))

    def keep(self, variant, measurement, built):
        self.kept.append((variant.config, measurement.value, built))


class FakeBuilt:
    def __init__(self, config):
        self.config = config
        self.generate_time = 0.25


class FakeWorkers:
    """A stand-in for polytune.workers' pools: runs both steps at once, names a worker and (``hand_back``)
    hands the build back with the result, as the pools do with a timed one."""

    timers = 1

    def __init__(self, hand_back: bool = True):
        self.submitted: list = []
        self.hand_back = hand_back

    def submit(self, compile_fn, time_fn, payload, label=""):
        self.submitted.append(payload)
        built = compile_fn(payload)
        f: Future = Future()
        f.set_result(WorkResult(len(self.submitted), label, time_fn(built), "box/timer", "box/c0", True, 1,
                                (0.0, 0.0), (0.0, 0.0), artifact=FakeBuilt(built) if self.hand_back else None))
        return f
