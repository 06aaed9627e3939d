"""Figures of measurements: pure functions from recorded data to a matplotlib ``Figure``.

No pyplot and no global backend switch: every figure is a bare ``Figure`` drawn on the Agg canvas, so
this works headless and in tests, which inspect the returned figure (bars, lines, images, labels).
Every figure carries a footer (:class:`Stamp`): the machine, the date and the command that made the data.
"""
from __future__ import annotations

import datetime
import math
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd")


@dataclass(frozen=True)
class Stamp:
    """Where and how the plotted data was measured."""

    machine: str
    date: str
    command: str

    def text(self, width: int = 150) -> str:
        line = f"machine: {self.machine} | date: {self.date} | command: {self.command}"
        return "\n".join(textwrap.wrap(line, width, break_on_hyphens=False)[:3])


def now() -> str:
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


def short_machine(machine_id: str) -> str:
    """'host|x86_64|AMD EPYC 7B13|2' -> 'AMD EPYC 7B13, 2 cores (host)'."""
    parts = machine_id.split("|")
    if len(parts) == 4:
        host, _, cpu, cores = parts
        return f"{cpu}, {cores} cores ({host})"
    return machine_id


def new_figure(width: float, height: float, stamp: Stamp | None) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    if stamp is not None:
        fig.supxlabel(stamp.text(int(width * 17)), fontsize=6.5, color="#555555").set_gid("stamp")
    return fig


def save(fig: Figure, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def _title(ax, text: str, width: int = 80) -> None:
    ax.set_title("\n".join(textwrap.wrap(text, width)), fontsize=9)


def _wide_range(values) -> bool:
    vals = [v for v in values if _finite(v) and v > 0]
    return bool(vals) and max(vals) / min(vals) > 8


def _plain_log(ax) -> None:
    """Log scale with plain numbers: 0.5, 1, 2 rather than 5x10^-1."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.yaxis.set_minor_formatter(NullFormatter())


# ---- bar charts -------------------------------------------------------------------------------------
def bar_chart(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str,
              ylabel: str, stamp: Stamp | None, reference: float | None = 1.0, log: bool = False,
              annotate: bool = True) -> Figure:
    """Grouped bars: one group per category, one bar per series (a missing value draws no bar)."""
    n = max(1, len(series))
    fig = new_figure(min(13.0, max(6.0, 0.28 * len(categories) * n + 2.5)), 4.4, stamp)
    ax = fig.add_subplot()
    width = 0.8 / n
    for k, (label, values) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i, v in enumerate(values) if _finite(v)]
        ys = [v for v in values if _finite(v)]
        bars = ax.bar(xs, ys, width, label=label, color=PALETTE[k % len(PALETTE)])
        if annotate and len(categories) * n <= 40:
            ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(categories)), list(categories), rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    _title(ax, title)
    if log and _wide_range(v for values in series.values() for v in values):
        _plain_log(ax)
    if n > 1:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def cost_panels(categories: Sequence[str], evals: Mapping[str, Sequence[float | None]],
                wall: Mapping[str, Sequence[float | None]], *, title: str, stamp: Stamp | None) -> Figure:
    """Search cost: evaluations (left) and wall time (right), grouped by kernel, one bar per strategy."""
    n = max(1, len(evals))
    fig = new_figure(min(13.0, max(8.0, 0.3 * len(categories) * n + 4)), 4.0, stamp)
    width = 0.8 / n
    for pos, (data, ylabel) in enumerate(((evals, "evaluations"), (wall, "search wall time (s)"))):
        ax = fig.add_subplot(1, 2, pos + 1)
        for k, (label, values) in enumerate(data.items()):
            xs = [i + (k - (n - 1) / 2) * width for i, v in enumerate(values) if _finite(v)]
            drawn = ax.bar(xs, [v for v in values if _finite(v)], width, label=label, color=PALETTE[k % len(PALETTE)])
            if len(categories) * n <= 40:
                ax.bar_label(drawn, fmt="%.3g", fontsize=6, padding=1)
        ax.set_xticks(range(len(categories)), list(categories), rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        if _wide_range(v for values in data.values() for v in values):
            _plain_log(ax)
        if pos == 0:
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return fig


def cost_quality(points: Mapping[str, Sequence[tuple[float, float, str]]], *, title: str, xlabel: str,
                 ylabel: str, stamp: Stamp | None) -> Figure:
    """Scatter of (cost, quality) per variant label; each point is annotated with its kernel."""
    fig = new_figure(7.0, 4.5, stamp)
    ax = fig.add_subplot()
    markers = "osD^v<>ph*"
    for k, (label, pts) in enumerate(points.items()):
        pts = [p for p in pts if _finite(p[0]) and _finite(p[1])]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=label, marker=markers[k % len(markers)],
                   color=PALETTE[k % len(PALETTE)])
        for x, y, kernel in pts:
            ax.annotate(kernel, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    if _wide_range(p[0] for pts in points.values() for p in pts):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _title(ax, title)
    ax.legend(fontsize=7)
    return fig


# ---- search surfaces and trajectories ----------------------------------------------------------------
def eval_time(record: Mapping) -> float | None:
    """An evaluation's time: its median, or the single run of a pruned candidate (> 2x the best); None
    for a failure (compile error, crash, time-out, wrong answer)."""
    if _finite(record.get("median")):
        return record["median"]
    times = record.get("times") or ()
    return times[0] if record.get("error") == "pruned" and times else None


@dataclass(frozen=True)
class Surface:
    """Median times over a two-parameter grid; cells never measured are None."""

    xname: str
    yname: str
    xs: tuple[int, ...]
    ys: tuple[int, ...]
    times: tuple[tuple[float | None, ...], ...]  # times[j][i]: y = ys[j], x = xs[i]
    failed: tuple[tuple[int, int], ...] = ()  # configurations measured without a time

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.ys), len(self.xs)

    @property
    def measured(self) -> int:
        return sum(1 for row in self.times for t in row if t is not None)


def make_surface(names: Sequence[str], domains: Sequence[Sequence[int]],
                 measurements: Sequence[tuple[Sequence[int], float | None]],
                 extra: Sequence[Sequence[int]] = ()) -> Surface:
    """The grid spanned by the two domains plus every value measured or visited (shortest-hop values
    lie between domain points); a configuration measured twice keeps its last time."""
    xs = sorted({*domains[0], *(c[0] for c, _ in measurements), *(c[0] for c in extra)})
    ys = sorted({*domains[1], *(c[1] for c, _ in measurements), *(c[1] for c in extra)})
    cell = {(int(c[0]), int(c[1])): t for c, t in measurements}
    times = tuple(tuple(cell.get((x, y)) if _finite(cell.get((x, y))) else None for x in xs) for y in ys)
    failed = tuple(sorted(c for c, t in cell.items() if not _finite(t)))
    return Surface(names[0], names[1], tuple(xs), tuple(ys), times, failed)


def surface_heatmap(surface: Surface, paths: Mapping[str, Sequence[Sequence[int]]], *, title: str,
                    stamp: Stamp | None, seed: Sequence[int] | None = None,
                    best: Sequence[int] | None = None) -> Figure:
    """The surface as a heatmap (blank where unmeasured, x where failed) with each search path as arrows."""
    import numpy as np

    data = np.array([[np.nan if t is None else t for t in row] for row in surface.times], dtype=float)
    fig = new_figure(max(6.0, 0.45 * len(surface.xs) + 3), max(4.5, 0.38 * len(surface.ys) + 2), stamp)
    ax = fig.add_subplot()
    finite = data[np.isfinite(data)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 2.0)
    norm = LogNorm(lo, hi) if lo > 0 and hi / lo > 5 else Normalize(lo, hi)
    image = ax.imshow(np.ma.masked_invalid(data), origin="lower", cmap="viridis_r", norm=norm, aspect="auto")
    fig.colorbar(image, ax=ax, label="median time (s)")
    ax.set_xticks(range(len(surface.xs)), [str(x) for x in surface.xs], fontsize=7)
    ax.set_yticks(range(len(surface.ys)), [str(y) for y in surface.ys], fontsize=7)
    ax.set_xlabel(surface.xname)
    ax.set_ylabel(surface.yname)
    _title(ax, title, 70)

    def pos(config: Sequence[int]) -> tuple[int, int]:
        return surface.xs.index(int(config[0])), surface.ys.index(int(config[1]))

    if surface.failed:
        ax.plot([pos(c)[0] for c in surface.failed], [pos(c)[1] for c in surface.failed], "x", color="#7f7f7f",
                linestyle="none", label="failed")
    for k, (label, path) in enumerate(paths.items()):
        color = ("#d62728", "#ff7f0e", "#e377c2", "#17becf", "#bcbd22", "#ffffff")[k % 6]
        offset = 0.12 * (k - (len(paths) - 1) / 2)
        if path:
            x0, y0 = pos(path[0])
            ax.plot(x0 + offset, y0 + offset, marker="s", markersize=4, color=color, linestyle="none")
        for a, b in zip(path, path[1:]):
            (x0, y0), (x1, y1) = pos(a), pos(b)
            ax.annotate("", xy=(x1 + offset, y1 + offset), xytext=(x0 + offset, y0 + offset),
                        arrowprops={"arrowstyle": "->", "color": color, "lw": 1.6})
        ax.plot([], [], color=color, label=f"{label} ({max(0, len(path) - 1)} moves)")
    if seed is not None:
        ax.plot(*pos(seed), marker="o", markersize=9, markerfacecolor="none", markeredgecolor="white",
                markeredgewidth=2, linestyle="none", label=f"seed {tuple(seed)}")
    if best is not None:
        ax.plot(*pos(best), marker="*", markersize=14, color="#d62728", markeredgecolor="white",
                linestyle="none", label=f"best {tuple(best)}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.12), ncols=2, frameon=False)
    return fig


def trajectory_figure(points: Sequence[tuple[int, float | None]], incumbent: Sequence[tuple[int, float]],
                      *, title: str, stamp: Stamp | None) -> Figure:
    """Time of every evaluation against its index (failures as x at the top), and the incumbent line
    (pruned candidates are drawn at their single run)."""
    fig = new_figure(7.0, 4.2, stamp)
    ax = fig.add_subplot()
    ok = [(i, t) for i, t in points if _finite(t)]
    failed = [i for i, t in points if not _finite(t)]
    ax.scatter([i for i, _ in ok], [t for _, t in ok], s=14, color=PALETTE[0], label="evaluation")
    if failed:
        top = max((t for _, t in ok), default=1.0) * 1.05
        ax.scatter(failed, [top] * len(failed), marker="x", color=PALETTE[3], label="failed / pruned")
    if incumbent:
        last = max((i for i, _ in points), default=incumbent[-1][0])
        xs = [i for i, _ in incumbent] + [last]
        ys = [t for _, t in incumbent] + [incumbent[-1][1]]
        ax.step(xs, ys, where="post", color=PALETTE[1], linewidth=1.8, label="incumbent")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("median time (s)")
    _title(ax, title)
    ax.legend(fontsize=7)
    return fig


# ---- a tune report ------------------------------------------------------------------------------------
def tune_command(report: Mapping) -> str:
    """An equivalent `polytune tune` command line, rebuilt from the report."""
    parts = ["polytune tune", str(report.get("file", "FILE"))]
    parts += [w for w in str(report.get("compiler", "")).split() if w.startswith(("-D", "-I"))]
    if report.get("target", "c") != "c":
        parts.append(f"--target {report['target']}")
    parts.append(f"--strategy {report.get('strategy', 'hill')}")
    if report.get("strategy") == "hill":
        parts += [f"--fit {report.get('fit', 'best')}", f"--neighbourhood {report.get('degree', 1)}"]
        if report.get("shortest_hop"):
            parts.append("--shortest-hop")
    if report.get("seed"):
        parts.append("--seed " + ",".join(str(v) for v in report["seed"]["config"]))
    if report.get("threads") is not None:
        parts.append(f"--threads {report['threads']}")
    return " ".join(parts)


def tune_figure(report: Mapping, stamp: Stamp | None = None) -> Figure:
    """The search of one `tune` report: a heatmap with the path for two parameters, else time vs evaluation."""
    stamp = stamp or Stamp(short_machine(str(report.get("machine", "?"))), now(), tune_command(report))
    space = report["space"]
    evals = report["evaluations"]
    path = [s["config"] for s in report["trajectory"]]
    name = os.path.basename(str(report.get("file", "kernel")))
    best = report["best"]["config"] if report.get("best") else None
    what = f"{report.get('strategy', 'search')}"
    if report.get("strategy") == "hill":
        what += f", {report.get('fit', 'best')} fit, degree {report.get('degree', 1)}" + (
            ", shortest hop" if report.get("shortest_hop") else "")
    title = f"{name}: {what}; {len(evals)} evaluations"
    if len(space) == 2:
        surface = make_surface([p["name"] for p in space], [p["values"] for p in space],
                               [(e["config"], eval_time(e)) for e in evals], extra=path)
        seed = report["seed"]["config"] if report.get("seed") else None
        return surface_heatmap(surface, {report.get("strategy", "search"): path}, title=title, stamp=stamp,
                               seed=seed, best=best)
    points = [(k + 1, eval_time(e)) for k, e in enumerate(evals)]
    incumbent = [(s["evals"], s["median"]) for s in report["trajectory"] if _finite(s["median"])]
    return trajectory_figure(points, incumbent, title=title + (f", best {tuple(best)}" if best else ""),
                             stamp=stamp)
