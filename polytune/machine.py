"""What the machine polytune runs on offers the generated code: vector width, vector registers, caches,
cores (read from /proc/cpuinfo and sysfs; the C target compiles with -march=native for this machine)."""
from __future__ import annotations

import functools
import glob
import os
import subprocess


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The first processor's flags in /proc/cpuinfo (empty where there is none), or those of the machine the
    code is for: `POLYTUNE_CPU_FLAGS` (its /proc/cpuinfo flags, space-separated: `avx512f avx2 fma` optimizes
    for an AVX-512 machine from a login node without it; its family is then unknown: `fma_units`)."""
    given = os.environ.get("POLYTUNE_CPU_FLAGS")
    if given is not None:
        return frozenset(given.split())
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


def _cpuinfo(key: str) -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":")[0].strip() == key:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def fma_units() -> int:
    """Full-width vector FMA instructions issued per cycle, as the micro-kernel model counts them: 2 on Intel
    cores since Haswell and AMD's since Zen 2, 1 on AMD family 23 models below 0x30 (Zen 1 and Zen+, whose two
    128-bit pipes split each 256-bit FMA), 1 without FMA."""
    if "fma" not in cpu_flags():
        return 1
    if os.environ.get("POLYTUNE_CPU_FLAGS") is not None:
        return 2  # (another machine's flags: not this one's family)
    family, model = _cpuinfo("cpu family"), _cpuinfo("model")
    if _cpuinfo("vendor_id") == "AuthenticAMD" and family.isdigit() and model.isdigit():
        if int(family) < 23 or (int(family) == 23 and int(model) < 0x30):
            return 1
    return 2


def _size(text: str) -> int:
    """'48K', '2M', '32768' -> bytes."""
    text = text.strip().upper().rstrip("B")
    mult = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * mult


def _sysfs_caches() -> dict[int, int]:
    sizes: dict[int, int] = {}
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            level = int(open(os.path.join(d, "level")).read())
            kind = open(os.path.join(d, "type")).read().strip()
            text = open(os.path.join(d, "size")).read().strip()
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and text:
            sizes[level] = _size(text)
    return sizes


def _getconf_caches() -> dict[int, int]:
    """glibc's view (it reads CPUID on x86), for where sysfs has no cache directory (gVisor, some containers)."""
    try:
        out = subprocess.run(["getconf", "-a"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    names = {"LEVEL1_DCACHE_SIZE": 1, "LEVEL2_CACHE_SIZE": 2, "LEVEL3_CACHE_SIZE": 3}
    sizes: dict[int, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in names and parts[1].isdigit() and int(parts[1]) > 0:
            sizes[names[parts[0]]] = int(parts[1])
    return sizes


@functools.lru_cache(maxsize=1)
def cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level (bytes): `POLYTUNE_CACHE_SIZES` (the L1 data, L2 and L3 sizes of the
    machine the code is for, e.g. `48K,2M,300M`, beside POLYTUNE_CPU_FLAGS when optimizing from another
    machine), else sysfs, else glibc's `getconf` (CPUID), else conservative defaults."""
    given = os.environ.get("POLYTUNE_CACHE_SIZES")
    if given is not None:
        try:
            sizes = {n + 1: _size(t) for n, t in enumerate(given.split(",")[:3]) if t.strip()}
        except ValueError:
            from .errors import UsageError
            raise UsageError(f"POLYTUNE_CACHE_SIZES={given!r}: expected the L1 data, L2 and L3 sizes in bytes "
                             f"or with K or M, e.g. 48K,2M,300M") from None
    else:
        sizes = _sysfs_caches()
        if not all(level in sizes for level in (1, 2, 3)):
            sizes = {**_getconf_caches(), **sizes}
    sizes.setdefault(1, 32 * 1024)
    sizes.setdefault(2, 512 * 1024)
    sizes.setdefault(3, max(sizes[2], 4 * 1024 * 1024))
    return sizes
