"""Machine identity: times are compared only between machines that would time a candidate alike.

The fingerprint holds what changes a kernel's time or its compiled code: CPU model and architecture, the
cores this process may use, memory (rounded to GiB: identical machines differ by a few MiB of kernel
reservations), the compiler's version line and the GPU model. The host name is left out on purpose: four
identical machines have four names and one identity.
"""
from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class MachineIdentity:
    arch: str
    cpu: str
    cores: int  # usable by this process (its affinity): a node pinned to 2 cores differs from one with 16
    memory_gib: int
    compiler: str
    gpu: str  # '' without a GPU

    def differences(self, other: MachineIdentity) -> list[str]:
        """``field: other's value != ours`` for each field that differs."""
        return [f"{f.name}: {getattr(other, f.name)!r} != {getattr(self, f.name)!r}"
                for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)]

    def code_differences(self, other: MachineIdentity) -> list[str]:
        """The differences that change compiled code (architecture, CPU model with ``-march=native``,
        compiler): what a node that only compiles must share with the reference."""
        return [d for d in self.differences(other) if d.split(":", 1)[0] in ("arch", "cpu", "compiler")]

    def to_record(self) -> dict:
        return asdict(self)


def cpu_model() -> str:
    """/proc/cpuinfo's model name (benchmarks/polybench/run.py loads this file by path: standard library only)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def usable_cores() -> int:
    """The cores this process may run on (its affinity: 2 under ``taskset -c 0,1`` on a 16-core machine)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def cpu_list(spec: str) -> list[int]:
    """The CPUs of a list in taskset's syntax: ``0,1`` or ``0-7,16-23``."""
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def _memory_gib() -> int:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    except (ValueError, OSError, AttributeError):
        return 0


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.splitlines()[0].strip() if out else ""


def local_identity(cc: str = "gcc") -> MachineIdentity:
    """The identity of the machine this runs on, with ``cc`` as the compiler."""
    gpus = _first_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    return MachineIdentity(platform.machine(), cpu_model(), usable_cores(), _memory_gib(),
                           _first_line([cc, "--version"]) or cc, gpus)


def choose_reference(nodes: list[tuple[str, bool, bool, MachineIdentity]], driver_node: str,
                     expect: MachineIdentity | None) -> MachineIdentity | None:
    """The identity every node must have: ``expect``; else the driver's node's if it times; else the first timing
    node's, head first. ``nodes``: (node id, is head, times candidates, identity) in Ray's order."""
    if expect is not None:
        return expect
    timing = [n for n in nodes if n[2]]
    for node_id, _, _, ident in timing:
        if node_id == driver_node:
            return ident
    timing.sort(key=lambda n: not n[1])
    return timing[0][3] if timing else None


def refusal(name: str, address: str, ident: MachineIdentity, reference: MachineIdentity,
            compiles_only: bool = False) -> str:
    """The one-line message for a refused node (``compiles_only``: one without timer slots, refused for
    compiling other code than the reference would)."""
    if compiles_only:
        return (f"polytune: Ray node {name} ({address}) refused for compiling: its machine would compile other "
                "code than the reference (node != reference): " + "; ".join(reference.code_differences(ident)))
    return (f"polytune: Ray node {name} ({address}) refused: its machine differs from the reference "
            "(node != reference): " + "; ".join(reference.differences(ident)))
