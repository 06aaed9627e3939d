"""The probe: C code that writes what a region reads and writes, for the Triton harness."""
from __future__ import annotations

from ...poly.scop import Scop
from ..printer import Printer, fresh_prefix, param_expr, strip

# ---- the data bridge: the original region's inputs and outputs, for verifying Triton variants -------------
PROBE_PRELUDE = r"""/* polytune probe: writes what a scop region reads and writes */
#include <stdio.h>
#include <stdlib.h>
#define polytune_code(x) _Generic((x), float: "f4", double: "f8", int: "i4", unsigned: "u4", long: "i8", \
  unsigned long: "u8", long long: "i8", short: "i2", unsigned short: "u2", signed char: "i1", \
  unsigned char: "u1", char: "i1", default: "??")
static FILE *polytune_probe_meta;
static const char *polytune_probe_phase;
static void polytune_probe_begin(const char *phase)
{
  char path[4096];
  const char *dir = getenv("POLYTUNE_PROBE");
  if (!dir) dir = ".";
  snprintf(path, sizeof path, "%s/%s.meta", dir, phase);
  polytune_probe_meta = fopen(path, "w");
  polytune_probe_phase = phase;
  if (!polytune_probe_meta) { perror("polytune probe"); exit(2); }
}
static void polytune_probe_array(const char *name, const char *code, const void *p, size_t bytes,
                                 int ndim, const size_t *dims)
{
  char path[4096];
  const char *dir = getenv("POLYTUNE_PROBE");
  FILE *f;
  int k;
  if (!dir) dir = ".";
  snprintf(path, sizeof path, "%s/%s.%s.bin", dir, polytune_probe_phase, name);
  f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { perror("polytune probe"); exit(2); }
  fclose(f);
  fprintf(polytune_probe_meta, "array %s %s", name, code);
  for (k = 0; k < ndim; k++) fprintf(polytune_probe_meta, " %zu", dims[k]);
  fprintf(polytune_probe_meta, "\n");
}
static void polytune_probe_value(const char *kind, const char *name, const char *code, double v)
{
  fprintf(polytune_probe_meta, "%s %s %s %.17g\n", kind, name, code, v);
}
static void polytune_probe_end(void) { fclose(polytune_probe_meta); }
"""


def generate_probe(scop: Scop, phase: str, avoid: frozenset[str] = frozenset()) -> str:
    """C code writing, at the start ('in') or the end ('out') of the region, every array it touches
    (its rows 0 .. the largest first index any access reaches; written ones only for 'out'), the
    parameters and the scalars, each with its C type, for the Triton harness."""
    from ..cuda import array_extent
    used = {a.array for st in scop.statements for a in st.accesses}
    lines = [f'polytune_probe_begin("{phase}");']
    printer = Printer(scop, fresh_prefix(scop, avoid))
    for a in scop.arrays:
        if (a.name not in used and (a.ndim > 0 or a.written)) or (phase == "out" and not a.written):
            continue
        if a.ndim == 0:
            kind = "written" if a.written else "scalar"
            if kind == "scalar" and phase == "out":
                continue
            lines.append(f'polytune_probe_value("{kind}", "{a.name}", polytune_code({a.name}), '
                         f'(double)({a.name}));')
            continue
        pa = array_extent(scop, a.name)
        if pa is None:
            continue
        ext = strip(printer.expr(param_expr(scop, pa)))
        elem = a.name + "[0]" * a.ndim
        dims = [f"(size_t)(({ext}) >= 0 ? ({ext}) + 1 : 0)"]  # negative where nothing is accessed
        for k in range(1, a.ndim):
            dims.append(f"sizeof({a.name}{'[0]' * k}) / sizeof({a.name}{'[0]' * (k + 1)})")
        lines.append(f"{{ const size_t pt_dims[] = {{{', '.join(dims)}}}; "
                     f'polytune_probe_array("{a.name}", polytune_code({elem}), (const void *){a.name}, '
                     f"pt_dims[0] * sizeof({a.name}[0]), {a.ndim}, pt_dims); }}")
    if phase == "in":
        for p in scop.params:
            if p in scop.constants:
                continue
            c = p[:-1] if p.endswith("_") and p[:-1] in scop.params else p
            lines.append(f'polytune_probe_value("param", "{c}", polytune_code({c}), (double)({c}));')
    lines.append("polytune_probe_end();")
    return "{\n" + "\n".join(printer.macro_defs() + ["  " + x for x in lines] + printer.macro_undefs()) + "\n}\n"
