"""The persistent measurement cache (sqlite, append-only) and the identity of what a measurement depends on."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field, replace

from ..errors import UsageError
from ..pipeline import OptimizeOptions, Program
from .measurement import ErrorKind, Measurement, from_record, to_record


def machine_id() -> str:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()}|{platform.machine()}|{cpu}|{os.cpu_count()}"


def gpu_id() -> str:
    """The GPU(s) and driver, as nvidia-smi names them ('' where there is none)."""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def compiler_id(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
        return out.splitlines()[0] if out else cc
    except (OSError, subprocess.TimeoutExpired):
        return cc


def workload_key(program: Program, build, opts: OptimizeOptions, space=None) -> str:
    """Everything a measurement depends on except the configuration (*space*: its categorical parameters'
    category lists, which say what a configuration's indices mean)."""
    parts = {
        "polytune": code_fingerprint(),
        "source": hashlib.sha256(program.text.encode("utf-8", "surrogateescape")).hexdigest(),
        "scops": [a.scop.source_hash for a in program.scops],
        "compiler": compiler_id(build.cc),
        "cflags": list(build.cflags), "includes": list(build.includes), "defines": list(build.defines),
        "threads": build.threads if build.threads is not None else os.environ.get("OMP_NUM_THREADS"),
        "runs": build.runs, "rtol": build.rtol,
        "machine": machine_id(),
        "tile": opts.tile, "parallel": opts.parallel,
    }
    rest = getattr(build, "program", None)
    if rest is not None and not rest.empty:  # other sources (by content), libraries, arguments
        parts["program"] = rest.fingerprint()
    if opts.schedule != "pluto":
        parts["schedule"] = opts.schedule
    categories = {p.name: list(p.categories) for p in getattr(space, "params", ()) if p.is_categorical}
    if categories:
        parts["categories"] = categories
    if opts.unroll_jam != OptimizeOptions.unroll_jam:
        parts["unroll_jam"] = opts.unroll_jam
    if opts.target != "c":
        parts["target"] = opts.target
        parts["gpu"] = gpu_id()
    if opts.allow_tf32:  # other kernels (TF32 tensor cores) and another result check
        parts["allow_tf32"] = True
    if opts.blocks.reassociate:  # other contraction kernels (a sum's products added one at a time)
        parts["reassociate"] = True
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The version and a hash of polytune's own source: a measurement made by other code (a changed
    schedule or emitter, even under the same version number) is not reused."""
    from ..version import __version__
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256(__version__.encode())
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(f for f in filenames if f.endswith(".py")):
            with open(os.path.join(dirpath, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return f"{__version__}+{h.hexdigest()[:16]}"


def default_cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "polytune", "measurements.sqlite")


@dataclass
class MeasurementCache:
    """Append-only sqlite store: each finished measurement is committed at once (a killed run loses none)."""

    path: str
    workload: str
    _db: sqlite3.Connection | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS measurements (workload TEXT, config TEXT, "
                             "record TEXT, created REAL, PRIMARY KEY (workload, config))")
            self._db.commit()
        except sqlite3.Error as e:
            raise UsageError(f"cannot open the measurement cache: {e}", self.path) from None

    def get(self, config: tuple) -> Measurement | None:
        row = self._db.execute("SELECT record FROM measurements WHERE workload = ? AND config = ?",
                               (self.workload, json.dumps(list(config)))).fetchone()
        if row is None:
            return None
        return replace(from_record(json.loads(row[0])), cached=True)

    def put(self, m: Measurement) -> None:
        if m.error == ErrorKind.PRUNED:
            return  # depends on the incumbent of that search, not on the configuration alone
        rec = to_record(replace(m, extra={}, same_as=None, cached=False))  # what was measured, nothing else
        self._db.execute("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?)",
                         (self.workload, json.dumps(list(m.config)), json.dumps(rec), time.time()))
        self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
