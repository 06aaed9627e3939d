"""Tables and figures of the paper's research questions, from recorded results.

Inputs (any mix): ``polytune bench`` results.json, ``polytune tune --report`` JSON, and the JSON of
``benchmarks/run_gpu.py --json``. Nothing is measured here. The questions (section 4 of the paper):

1. speedup of the tuned kernel over the Pluto-default seed; 2. search overhead; 3. kernel quality against
gcc -O3, clang -O3, Polly, the seed and the tuned kernel; 4. search cost of hill climbing, exhaustive and
random search; 5. the starting point (seed pluto / origin / model); 6. next-candidate choice (best vs first
fit, degree 1/2/3, shortest hop); 7. GPU thread blocks (default vs hill d1 / d2 vs exhaustive); and the
performance surfaces of two-parameter kernels with the hill-climbing paths drawn on them.

``python -m polytune.study.report SOURCES... --out DIR`` writes DIR/summary.md and the figures.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import UsageError
from ..units import fmt_ratio, fmt_time

BASELINE_ORDER = ("gcc", "clang", "polly", "seed")
SEEDS = ("hill", "hill:origin", "hill:model")
MOVE_THRESHOLD = 0.03  # ratios within 3% of 1 count as "the same" in the findings


# ---- tables -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    key: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)

    def to_text(self) -> str:
        cells = [self.header, *self.rows]
        cells = [tuple(c.replace("**", "") for c in r) for r in cells]
        widths = [max(len(r[i]) if i < len(r) else 0 for r in cells) for i in range(len(self.header))]
        out = [self.title]
        for k, r in enumerate(cells):
            out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
            if k == 0:
                out.append("  ".join("-" * w for w in widths))
        return "\n".join(out)


@dataclass
class Section:
    key: str
    heading: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (path, caption)
    findings: list[str] = field(default_factory=list)


@dataclass
class Report:
    sections: list[Section]

    @property
    def figure_paths(self) -> list[str]:
        return [p for s in self.sections for p, _ in s.figures]

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    def markdown(self, title: str, fig_prefix: str = "", preamble: str = "") -> str:
        out = [f"# {title}", ""]
        if preamble:
            out += [preamble.rstrip(), ""]
        for s in self.sections:
            out += [f"## {s.heading}", ""]
            if s.intro:
                out += [s.intro, ""]
            for t in s.tables:
                out += [t.to_markdown(), ""]
            for path, caption in s.figures:
                out += [f"![{caption}]({fig_prefix}{os.path.basename(path)})", ""]
            if s.findings:
                out += [f"- {f}" for f in s.findings] + [""]
        return "\n".join(out)


# ---- sources ----------------------------------------------------------------------------------------
@dataclass
class Sources:
    benches: list[dict] = field(default_factory=list)  # bench result documents (tune reports converted)
    gpu: list[dict] = field(default_factory=list)  # rows of benchmarks/run_gpu.py --json
    gpu_stamp: object | None = None  # plots.Stamp of the GPU rows (they record no machine or date)


def _mtime(path: str) -> str:
    return datetime.datetime.fromtimestamp(os.path.getmtime(path)).astimezone().isoformat(timespec="seconds")


def bench_from_tune_report(report: dict, path: str = "") -> dict:
    """A `polytune tune --report` JSON as a one-kernel bench document without a session."""
    from .plots import tune_command
    from .records import StrategySpec, tuning_entry
    label = report["strategy"]
    if label == "hill":
        label += (":first" if report.get("fit") == "first" else "") + (
            f":d{report['degree']}" if report.get("degree", 1) != 1 else "") + (
            ":hop" if report.get("shortest_hop") else "")
    spec = StrategySpec(label, report["strategy"], report.get("fit", "best"), report.get("degree", 1),
                        bool(report.get("shortest_hop")))
    space = report["space"]
    return {
        "kind": "polytune-bench", "machine": report.get("machine", "?"), "command": tune_command(report),
        "started": _mtime(path) if path else "", "finished": None, "notes": [], "compilers": {},
        "threads": report.get("threads"),
        "kernels": [{"name": os.path.splitext(os.path.basename(report["file"]))[0], "file": report["file"],
                     "defines": [], "notes": [], "space": space,
                     "grid_size": math.prod(len(p["values"]) for p in space),
                     "tuning": {label: tuning_entry(spec, report, report["search_time"])}, "variants": {}}],
    }


def load_sources(paths: Iterable[str]) -> Sources:
    src = Sources()
    for p in paths:
        try:
            with open(p) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read results: {e}", p) from None
        if isinstance(data, dict) and data.get("kind") == "polytune-bench":
            src.benches.append(data)
        elif isinstance(data, dict) and "evaluations" in data and "trajectory" in data:
            src.benches.append(bench_from_tune_report(data, p))
        elif isinstance(data, list) and all(isinstance(r, dict) and "kernel" in r for r in data):
            src.gpu += data
        else:
            raise UsageError("not a bench results.json, a tune report or a run_gpu.py JSON", p)
    return src


def kernels_with_bench(benches: Sequence[dict]) -> list[tuple[dict, dict]]:
    """Every kernel entry with its bench document; a name seen before gets a '#2', '#3' suffix."""
    out, seen = [], {}
    for b in benches:
        for k in b["kernels"]:
            n = seen[k["name"]] = seen.get(k["name"], 0) + 1
            out.append((k if n == 1 else dict(k, name=f"{k['name']}#{n}"), b))
    return out


def all_kernels(benches: Sequence[dict]) -> list[dict]:
    return [k for k, _ in kernels_with_bench(benches)]


def stamp_of(bench: dict):
    from .plots import Stamp, short_machine
    started, finished = bench.get("started") or "", bench.get("finished") or ""
    date = started[:16].replace("T", " ") + (f" to {finished[11:16]}" if finished[:10] == started[:10] and finished
                                             else "")
    return Stamp(short_machine(str(bench.get("machine", "?"))), date or "not recorded",
                 bench.get("command") or "not recorded")


# ---- helpers ----------------------------------------------------------------------------------------
def geomean(xs: Iterable[float | None]) -> float | None:
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fs(t: float | None) -> str:
    """A time with its unit, three significant figures (``polytune.units``): 7.19 s, 61.2 us."""
    return fmt_time(t)


def fx(r: float | None, bold: bool = False) -> str:
    """A speedup, three significant figures: never 0.00x from rounding."""
    if r is None:
        return "-"
    return f"**{fmt_ratio(r)}**" if bold else fmt_ratio(r)


def fc(config) -> str:
    return "-" if not config else "(" + ", ".join(str(v) for v in config) + ")"


def found(t: dict) -> dict | None:
    from .records import found as delivered
    return delivered(t)


def cfg(t: dict) -> list[int] | None:
    """The configuration a tuning run delivered (see polytune.study.records.found)."""
    f = found(t)
    return f["config"] if f else None


def session(kernel: dict, label: str) -> float | None:
    v = kernel["variants"].get(label)
    return v["median"] if v else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def verdicts(pairs: Sequence[tuple[str, float | None]], better: str, worse: str) -> list[str]:
    """'faster on X of N (a, b), within 3% on ..., slower on ...' for ratios where > 1 means better."""
    known = [(k, r) for k, r in pairs if r is not None]
    if not known:
        return []
    up = [f"{k} {r:.2f}x" for k, r in known if r > 1 + MOVE_THRESHOLD]
    same = [k for k, r in known if abs(r - 1) <= MOVE_THRESHOLD]
    down = [f"{k} {r:.2f}x" for k, r in known if r < 1 - MOVE_THRESHOLD]
    out = [f"{better} on {len(up)} of {len(known)}" + (f": {', '.join(up)}" if up else "")]
    if same:
        out.append(f"within 3% on {len(same)}: {', '.join(same)}")
    if down:
        out.append(f"**{worse} on {len(down)}: {', '.join(down)}**")
    return ["; ".join(out) + "."]


def variant_order(kernels: Sequence[dict]) -> list[str]:
    labels: list[str] = [b for b in BASELINE_ORDER if any(b in k["variants"] for k in kernels)]
    for k in kernels:
        labels += [lb for lb in k["variants"] if lb not in labels]
    return labels


def display(label: str) -> str:
    from .records import LABELS
    return LABELS.get(label, label)


# ---- the research questions -------------------------------------------------------------------------
def times_table(benches: Sequence[dict]) -> Table:
    kernels = all_kernels(benches)
    labels = variant_order(kernels)
    rows = [(k["name"], *(fs(session(k, lb)) for lb in labels)) for k in kernels]
    return Table("times", "Median region time, interleaved session", ("kernel", *map(display, labels)),
                 tuple(rows))


def quality_table(benches: Sequence[dict]) -> Table:
    """RQ3: speedup of every variant over gcc -O3 (same session), and geometric means."""
    kernels = [k for k in all_kernels(benches) if k["variants"]]
    labels = variant_order(kernels)
    rows = [(k["name"], *(fx(k["variants"].get(lb, {}).get("speedup_over_gcc")) for lb in labels)) for k in kernels]
    gm = [geomean(k["variants"].get(lb, {}).get("speedup_over_gcc") for k in kernels) for lb in labels]
    rows.append(("geometric mean", *(fx(g, bold=True) for g in gm)))
    return Table("quality", "Speedup over gcc -O3 (higher is better)", ("kernel", *map(display, labels)), tuple(rows))


def rq1(benches: Sequence[dict], label: str = "hill") -> tuple[Table, dict]:
    """Tuned (hill climbing, default knobs) over the Pluto-default seed."""
    rows, data = [], {}
    for k in all_kernels(benches):
        t = k["tuning"].get(label)
        if not t:
            continue
        seed_s, tuned_s = session(k, "seed"), session(k, label)
        search = t["speedup_over_seed"]
        data[k["name"]] = (ratio(seed_s, tuned_s), search)
        rows.append((k["name"], str(len(k["space"] or [])), fs(seed_s), fs(tuned_s),
                     fc(cfg(t)), fx(ratio(seed_s, tuned_s)), fx(search), str(t["evals"])))
    rows.append(("geometric mean", "", "", "", "", fx(geomean(v[0] for v in data.values()), True),
                 fx(geomean(v[1] for v in data.values()), True), ""))
    return Table("rq1", "Tuned over Pluto-default seed", ("kernel", "params", "seed 32", f"{label}",
                                                              f"{label} config", "speedup (session)",
                                                              "speedup (search's own runs)", "evals"),
                 tuple(rows)), data


def rq2(benches: Sequence[dict], label: str = "hill") -> Table:
    rows, over = [], []
    for k in all_kernels(benches):
        t = k["tuning"].get(label)
        if not t:
            continue
        o = ratio(t["search_time"], t["seed_eval_s"])
        over.append(o)
        rows.append((k["name"], f"{t['search_time']:.1f}", fs(t["seed_eval_s"]), f"{o:.1f}x" if o else "-",
                     str(t["evals"]), str(t["compilations"]), str(t["runs"]), t["stop_reason"]))
    g = geomean(over)
    rows.append(("geometric mean", "", "", f"**{g:.1f}x**" if g else "-", "", "", "", ""))
    return Table("rq2", "Search overhead", ("kernel", "search (s)", "one seed evaluation", "overhead",
                                            "evaluations", "compilations", "program runs", "stopped"), tuple(rows))


def is_search_label(label: str) -> bool:
    return label == "hill" or label.split(":")[0] in ("exhaustive", "random", "coordesc")


def rq4(benches: Sequence[dict]) -> Table:
    rows = []
    for k in all_kernels(benches):
        labels = [lb for lb in k["tuning"] if is_search_label(lb)]
        if len(labels) < 2:
            continue
        ex = k["tuning"].get("exhaustive")
        ex_best = (found(ex) or {}).get("median") if ex else None
        ex_session = session(k, "exhaustive")
        for lb in labels:
            t = k["tuning"][lb]
            best = (found(t) or {}).get("median")
            rows.append((k["name"], lb, fc(cfg(t)), fs(best), fs(session(k, lb)),
                         f"{best / ex_best:.3f}" if best and ex_best else "-",
                         f"{session(k, lb) / ex_session:.3f}" if session(k, lb) and ex_session else "-",
                         str(t["evals"]), f"{t['search_time']:.1f}"))
    return Table("rq4", "Search cost", ("kernel", "strategy", "best config", "best (search)", "best (session)",
                                        "/ exhaustive (search)", "/ exhaustive (session)", "evaluations",
                                        "search (s)"), tuple(rows))


def rq5(benches: Sequence[dict]) -> Table:
    rows = []
    for k in all_kernels(benches):
        labels = [lb for lb in SEEDS if lb in k["tuning"]]
        if len(labels) < 2:
            continue
        ref = session(k, "hill")
        for lb in labels:
            t = k["tuning"][lb]
            s = t["seed"] or {}
            rows.append((k["name"], t["seed_kind"], fc(s.get("config")), fs(s.get("median")) if s.get("median") else
                         (s.get("error") or "-"), str(t["iterations"]), str(t["evals"]), f"{t['search_time']:.1f}",
                         t["stop_reason"], fc(cfg(t)), fs(session(k, lb)),
                         fx(ratio(ref, session(k, lb)))))
    return Table("rq5", "Starting point", ("kernel", "seed", "start", "start time", "moves", "evaluations",
                                           "search (s)", "stopped", "final config", "final (session)",
                                           "vs seed pluto"), tuple(rows))


def is_next_label(label: str) -> bool:
    parts = label.split(":")
    return parts[0] == "hill" and not set(parts[1:]) & {"origin", "model"}


def rq6(benches: Sequence[dict]) -> Table:
    rows = []
    for k in all_kernels(benches):
        labels = [lb for lb in k["tuning"] if is_next_label(lb)]
        if len(labels) < 2 or "hill" not in labels:
            continue
        ref, ref_t = session(k, "hill"), k["tuning"]["hill"]
        for lb in labels:
            t = k["tuning"][lb]
            rows.append((k["name"], lb, fc(cfg(t)), fs(session(k, lb)),
                         fx(ratio(ref, session(k, lb))), str(t["evals"]), f"{t['search_time']:.1f}",
                         f"{t['search_time'] / ref_t['search_time']:.1f}x" if ref_t["search_time"] else "-",
                         t["stop_reason"]))
    return Table("rq6", "Next-candidate strategies", ("kernel", "variant", "final config", "final (session)",
                                                      "speedup vs hill", "evaluations", "search (s)",
                                                      "search time vs hill", "stopped"), tuple(rows))


GPU_LABELS = (("hill-d1", "hill d1"), ("hill-d2", "hill d2"), ("exhaustive", "exhaustive"))


def rq7(rows_in: Sequence[dict]) -> tuple[Table, dict]:
    rows, data = [], {}
    for r in rows_in:
        if "error" in r or not r.get("default_ms"):
            rows.append((r["kernel"], f"error: {r.get('error', 'no default time')}", *[""] * 4))
            continue
        data[r["kernel"]] = {lb: r["default_ms"] / r[key]["best_ms"] for key, lb in GPU_LABELS}
        ex = r["exhaustive"]["best_ms"]
        cells = [f"{fc(r[key]['best'])} {r[key]['best_ms']:.3f} ms, {r[key]['measured']} shapes, "
                 f"{r[key]['search_s']:.1f} s" for key, _ in GPU_LABELS]
        rows.append((r["kernel"], f"{fc(r['default'])} {r['default_ms']:.3f}", *cells,
                     f"{r['hill-d1']['best_ms'] / ex:.3f} / {r['hill-d2']['best_ms'] / ex:.3f}"))
    gm = [geomean(d[lb] for d in data.values()) for _, lb in GPU_LABELS]
    rows.append(("geometric mean speedup over default", "", *(fx(g, True) for g in gm), ""))
    return Table("rq7", "GPU thread blocks", ("kernel", "default (ms)", "hill d1", "hill d2", "exhaustive",
                                              "d1 / exh., d2 / exh."), tuple(rows)), data


# ---- figures ----------------------------------------------------------------------------------------
def surface_figure(kernel: dict, stamp) -> object | None:
    """The kernel's two-parameter surface (exhaustive if measured, else everything its searches measured)
    with every hill-climbing path drawn on it."""
    from .plots import eval_time, make_surface, surface_heatmap
    space = kernel.get("space")
    if not space or len(space) != 2 or not kernel["tuning"]:
        return None
    tun = kernel["tuning"]
    if "exhaustive" in tun:
        measured, source = tun["exhaustive"]["evaluations"], "exhaustive search"
    else:
        measured = [e for t in tun.values() for e in t["evaluations"]]
        source = "every configuration its searches measured"
    paths = {lb: [s["config"] for s in t["trajectory"]] for lb, t in tun.items() if lb.startswith("hill")}
    visited = [c for p in paths.values() for c in p]
    surface = make_surface([p["name"] for p in space], [p["values"] for p in space],
                           [(e["config"], eval_time(e)) for e in measured], extra=visited)
    seed = next((t["seed"]["config"] for lb, t in tun.items() if lb == "hill" and t["seed"]), None)
    best_t = tun.get("exhaustive") or tun.get("hill")
    best = cfg(best_t) if best_t else None
    title = (f"{kernel['name']} {' '.join('-D' + d for d in kernel.get('defines', []))}: surface from {source} "
             f"({surface.measured} of {surface.shape[0] * surface.shape[1]} cells)")
    return surface_heatmap(surface, paths, title=title, stamp=stamp, seed=seed, best=best)


def build_report(sources: Sources, out_dir: str, fig_dir: str | None = None, figures: bool = True,
                 label: str = "hill") -> Report:
    """Every table and figure the sources allow; figures are written into *fig_dir* (PNG)."""
    from .plots import Stamp, bar_chart, cost_panels, cost_quality, save
    fig_dir = fig_dir or out_dir
    benches = sources.benches
    kernels = all_kernels(benches)
    stamp = stamp_of(benches[0]) if benches else None
    sections: list[Section] = []

    def add_fig(section: Section, fig, name: str, caption: str) -> None:
        if figures and fig is not None:
            section.figures.append((save(fig, os.path.join(fig_dir, name)), caption))

    session_kernels = [k for k in kernels if k["variants"]]
    if session_kernels:
        s = Section("rq3", "3. Kernel quality: gcc -O3, clang -O3, Polly, polytune's seed and tuned kernels",
                    "Speedup over `gcc -O3 -march=native` of the original program (above 1: faster), medians of "
                    "the interleaved session. Times in seconds in the second table.")
        q = quality_table(benches)
        s.tables += [q, times_table(benches)]
        labels = [lb for lb in variant_order(session_kernels) if lb in (*BASELINE_ORDER, label)]
        series = {display(lb): [k["variants"].get(lb, {}).get("speedup_over_gcc") for k in session_kernels]
                  for lb in labels}
        add_fig(s, bar_chart([k["name"] for k in session_kernels], series, title="Speedup over gcc -O3",
                             ylabel="speedup over gcc -O3", stamp=stamp, log=True), "rq3_quality.png",
                "speedup over gcc -O3 per kernel")
        for lb in labels[1:]:
            s.findings += verdicts([(k["name"], k["variants"].get(lb, {}).get("speedup_over_gcc"))
                                    for k in session_kernels], f"{display(lb)} is faster than gcc -O3",
                                   f"{display(lb)} is slower than gcc -O3")
        for lb in ("clang", "polly", "seed"):
            if lb in labels and label in labels:
                s.findings += verdicts([(k["name"], ratio(session(k, lb), session(k, label)))
                                        for k in session_kernels], f"{label} (tuned) is faster than {display(lb)}",
                                       f"{label} (tuned) is slower than {display(lb)}")
        sections.append(s)
    t1, d1 = rq1(benches, label)
    if d1:
        s = Section("rq1", f"1. Speedup of the tuned kernel ({label}) over the Pluto-default seed (tile 32)",
                    "Session: both programs in the interleaved session (the fair comparison). Search's own runs: "
                    "the seed and the best as the search measured them, minutes apart.", [t1])
        names = list(d1)
        g = geomean(v[0] for v in d1.values())
        add_fig(s, bar_chart([*names, "geomean"], {"session": [v[0] for v in d1.values()] + [g],
                                                   "search's own runs": [v[1] for v in d1.values()]
                                                   + [geomean(v[1] for v in d1.values())]},
                             title=f"{label} over the Pluto-default seed", ylabel="speedup over seed (tile 32)",
                             stamp=stamp), "rq1_speedup_over_seed.png", "tuned over seed")
        s.findings += verdicts([(n, v[0]) for n, v in d1.items()], "tuning is faster than the seed",
                               "tuning is slower than the seed")
        sections.append(s)
        sections.append(Section("rq2", "2. Search overhead",
                                "Overhead: the whole tuning (reference build and runs, every candidate's code "
                                "generation, compilation, verification run and timed runs) over one evaluation of "
                                "the seed. Compilations and program runs include the reference program's.",
                                [rq2(benches, label)]))
    t4 = rq4(benches)
    if t4.rows:
        s = Section("rq4", "4. Search cost: hill climbing vs exhaustive vs random search",
                    "Best configuration each strategy found (for exhaustive and random search: the lowest median "
                    "they measured), its time as the search measured it and in the "
                    "session, each over the exhaustive search's best (1.000: found it or a configuration as fast; "
                    "above 1: slower; below 1 in the search's runs: noise, the same configuration measured "
                    "faster at another moment), and what the search cost.", [t4])
        ks = sorted({r[0] for r in t4.rows}, key=[k["name"] for k in kernels].index)
        labs = list(dict.fromkeys(r[1] for r in t4.rows))
        kmap = {k["name"]: k for k in kernels}
        ev = {lb: [kmap[n]["tuning"].get(lb, {}).get("evals") for n in ks] for lb in labs}
        wall = {lb: [kmap[n]["tuning"].get(lb, {}).get("search_time") for n in ks] for lb in labs}
        add_fig(s, cost_panels(ks, ev, wall, title="Search cost per strategy", stamp=stamp), "rq4_search_cost.png",
                "evaluations and search time per strategy")
        sections.append(s)
    t5 = rq5(benches)
    if t5.rows:
        sections.append(Section("rq5", "5. Starting point: seed pluto (32) vs origin (1) vs model",
                                "model: the largest power-of-two tile whose footprint fits half the L2 cache. "
                                "'vs seed pluto': the final kernel's session speedup over the one found from 32.",
                                [t5]))
    t6 = rq6(benches)
    if t6.rows:
        s = Section("rq6", "6. Next candidate: best fit vs first fit, degree 1/2/3, shortest hop",
                    "'speedup vs hill': session time of hill (best fit, degree 1) over the variant's (above 1: the "
                    "variant found a faster kernel).", [t6])
        kmap = {k["name"]: k for k in kernels}
        pts: dict[str, list] = {}
        for r in t6.rows:
            k = kmap[r[0]]
            pts.setdefault(r[1], []).append((k["tuning"][r[1]]["evals"], ratio(session(k, "seed"), session(k, r[1])),
                                             r[0]))
        add_fig(s, cost_quality(pts, title="Quality vs cost of next-candidate strategies", xlabel="evaluations",
                                ylabel="speedup over seed (session)", stamp=stamp), "rq6_next_candidate.png",
                "quality vs cost")
        sections.append(s)
    if sources.gpu:
        t7, d7 = rq7(sources.gpu)
        s = Section("rq7", "7. GPU thread blocks: default vs hill climbing d1 / d2 vs exhaustive",
                    "From `benchmarks/run_gpu.py --json` (CUDA target). Cells: best shape, its time, shapes "
                    "measured, search time.", [t7])
        gstamp = sources.gpu_stamp or Stamp("not recorded in the JSON", "not recorded", "benchmarks/run_gpu.py")
        names = list(d7)
        add_fig(s, bar_chart(names, {lb: [d7[n][lb] for n in names] for _, lb in GPU_LABELS},
                             title="GPU block shape: speedup over the default", ylabel="speedup over default block",
                             stamp=gstamp, log=True), "rq7_gpu_blocks.png", "GPU block shapes")
        for _, lb in GPU_LABELS[:2]:
            s.findings += verdicts([(n, d7[n][lb] / d7[n]["exhaustive"]) for n in names],
                                   f"{lb} is faster than exhaustive", f"{lb} is slower than exhaustive's optimum")
        sections.append(s)
    surfaces = Section("surfaces", "Performance surfaces of two-parameter kernels",
                       "Heatmap of median times (blank: never measured; x: failed; a pruned candidate, one run "
                       "over twice the best, shows that run), every hill-climbing path as arrows, the seed "
                       "(circle) and the best (star: the exhaustive optimum where it ran).")
    for k, b in kernels_with_bench(benches):
        add_fig(surfaces, surface_figure(k, stamp_of(b)) if figures else None, f"surface_{k['name']}.png",
                f"{k['name']} surface")
    if surfaces.figures:
        sections.append(surfaces)
    notes = [n for b in benches for n in b.get("notes", [])]
    notes += [f"{k['name']}: {n}" for k in kernels for n in k["notes"]]
    if notes:
        sections.append(Section("notes", "Notes", "\n".join(f"- {n}" for n in notes)))
    return Report(sections)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m polytune.study.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="+", help="bench results.json, tune --report JSON, run_gpu.py --json")
    ap.add_argument("--out", required=True, help="directory for summary.md and the figures")
    ap.add_argument("--title", default="polytune results")
    args = ap.parse_args(argv)
    try:
        rep = build_report(load_sources(args.sources), args.out)
    except UsageError as e:
        print(str(e), file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(rep.markdown(args.title))
    print(f"{len(rep.figure_paths)} figures and summary.md written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
