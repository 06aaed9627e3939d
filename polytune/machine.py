"""What the machine polytune runs on offers the generated code: vector width, vector registers, caches,
cores (read from /proc/cpuinfo and sysfs; the C target compiles with -march=native for this machine)."""
from __future__ import annotations

import functools
import glob
import os


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The first processor's flags in /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def vector_bytes() -> int:
    """The widest SIMD register the compiler may use with -march=native: 64 (AVX-512), 32 (AVX), 16."""
    flags = cpu_flags()
    if "avx512f" in flags:
        return 64
    if "avx" in flags or "avx2" in flags:
        return 32
    return 16


def vector_registers() -> int:
    """Architectural SIMD registers: 32 with AVX-512 (or AArch64), 16 with SSE/AVX on x86-64."""
    flags = cpu_flags()
    return 32 if "avx512f" in flags or not flags else 16


def fma_units() -> int:
    """Vector FMA instructions of the full width issued per cycle, as the micro-kernel model counts them:
    2 on Intel cores since Haswell and AMD Zen 2+, 1 on Zen 1 (its two 128-bit pipes split each 256-bit
    FMA). A guess from the flags: Zen 1 is told apart by lacking the flags its successors added."""
    flags = cpu_flags()
    if "fma" not in flags:
        return 1
    if "svm" in flags and "clwb" not in flags and "avx512f" not in flags:  # AMD before Zen 2
        return 1
    return 2


def cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level (bytes) from sysfs; conservative defaults where unknown."""
    sizes: dict[int, int] = {}
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            level = int(open(os.path.join(d, "level")).read())
            kind = open(os.path.join(d, "type")).read().strip()
            text = open(os.path.join(d, "size")).read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KM")) * mult
    sizes.setdefault(1, 32 * 1024)
    sizes.setdefault(2, 512 * 1024)
    sizes.setdefault(3, max(sizes[2], 4 * 1024 * 1024))
    return sizes
