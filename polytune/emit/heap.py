"""The C lines that allocate the large scratch memory of the emitted code (expanded scalars, their thread
slices, the snapshot of a contraction's rows) on pages of 2 MiB where the system has them.

A fresh heap block larger than glibc's mmap threshold is mapped anew and faulted in page by page when first
written: 9.6 MB in 4 KiB pages is 2,400 faults, which on the development machine cost 7-10 ms of symm's 95 ms
at LARGE (its `temp2` expanded to 1,000 x 1,200 doubles, zeroed before its product: 0.0080 s for the zeroing,
0.0019 s with the block on 2 MiB pages). Linux maps huge pages into a block where it is aligned to 2 MiB and
the program asks for them (`madvise(MADV_HUGEPAGE)`, which systems whose transparent huge pages are set to
`madvise`, as Ubuntu's are, require); a block of HUGE_BYTES or more is therefore allocated with
`aligned_alloc` at a 2 MiB boundary, its size rounded up to 2 MiB, and advised. Elsewhere (other systems,
smaller blocks) it is `malloc`'s. Either is released with `free`.
"""
from __future__ import annotations

# blocks from this size up go on 2 MiB pages (two of them at least: a smaller block would round up to twice
# its size and more)
HUGE_BYTES = 4 << 20
_PAGE = "(2UL << 20)"
_MADV_HUGEPAGE = 14  # Linux's value on x86-64 and AArch64 (asm-generic/mman-common.h)
_LINUX = "defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))"


def allocation(declarator: str, size: str, name: str) -> list[str]:
    """Lines declaring `declarator` (a pointer of the block's type, e.g. `double (*const s_x0)[n]`) as a new
    block of `size` bytes, `name` its identifier (for the helper variables `name_bytes`), and aborting where the
    allocation fails. The size may name the pointer (`sizeof(*s_x0) * n`: in scope from its declarator on)."""
    n = f"{name}_bytes"
    huge = (f"({{ unsigned long {n} = {size}; void *{name}_p; if ({n} >= {HUGE_BYTES}UL) {{ "
            f"{n} = ({n} + {_PAGE} - 1) & ~({_PAGE} - 1); {name}_p = aligned_alloc({_PAGE}, {n}); "
            f"if ({name}_p) madvise({name}_p, {n}, {_MADV_HUGEPAGE}); }} else {name}_p = __builtin_malloc({n}); "
            f"{name}_p; }})")
    return [f"#if {_LINUX}",
            "extern void *aligned_alloc(unsigned long, unsigned long);",
            "extern int madvise(void *, unsigned long, int);",
            f"{declarator} = {huge};",
            "#else",
            f"{declarator} = __builtin_malloc({size});",
            "#endif",
            f"if (!{name}) __builtin_abort();"]
