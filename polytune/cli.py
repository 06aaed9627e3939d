"""The ``polytune`` command: a thin layer over the pipeline. ``main(argv) -> exit code``."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import sys

from .errors import PolytuneError, UsageError
from .measure.c import BuildConfig
from .pipeline import OptimizeOptions
from .search import STRATEGIES
from .targets import TARGET_NAMES, get_target
from .tune import TuneOptions
from .units import fmt_time
from .version import __version__

# The defaults --help shows are the Python API's own (one source: OptimizeOptions, TuneOptions, BuildConfig)
OPTIMIZE_DEFAULTS = OptimizeOptions()
TUNE_DEFAULTS = TuneOptions(cache=None)
BUILD_DEFAULTS = BuildConfig()


class _Parser(argparse.ArgumentParser):
    """argparse, with every error one line, exit code 2 (a UsageError), and no abbreviated options: an
    abbreviation that works today stops working when an option with the same start is added."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, allow_abbrev=False, **kw)

    def error(self, message: str):
        raise UsageError(message.replace("argument ", "", 1) if message.startswith("argument ") else message)


class _HelpFormatter(argparse.HelpFormatter):
    """--help shows each option's default, where it has one and its text does not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (action.option_strings and default not in (None, False, [], argparse.SUPPRESS)
                and "default" not in text and action.nargs != 0):
            text += f" (default: {default})"
        return text


def _bounded(kind, low=None, high=None, low_open: bool = False, what: str = ""):
    """An argparse type: a *kind* (int or float) in [low, high) (low excluded with *low_open*), refused with the
    real reason: "--max-evals: must be at least 1, got -1"."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs {'an integer' if kind is int else 'a number'}, "
                                             f"got '{text}'") from None
        if low is not None and (value <= low if low_open else value < low):
            raise argparse.ArgumentTypeError(f"must be {'above' if low_open else 'at least'} {low}{what}, "
                                             f"got {text}")
        if high is not None and value >= high:
            raise argparse.ArgumentTypeError(f"must be below {high}{what}, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


POSITIVE = _bounded(int, 1)
COUNT = _bounded(int, 0)  # 0 or more
SECONDS = _bounded(float, 0, low_open=True)
NONNEGATIVE_SECONDS = _bounded(float, 0)  # 0: no limit


def _name_value(text: str) -> str:
    """An argparse type: NAME=VALUE with a C identifier for NAME and a value ("--param N" would define N as 1)."""
    name, eq, value = text.partition("=")
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or not eq or not value:
        raise argparse.ArgumentTypeError(f"needs NAME=VALUE (a macro and its value, e.g. N=4096), got '{text}'")
    return text


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="C file: its #pragma scop / #pragma endscop regions, or where it has none, the "
                                "loop nests found in its functions (see --auto)")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="include directory for the C preprocessor")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="macro definition for the C preprocessor")
    p.add_argument("--pure", action="append", default=[], metavar="NAME",
                   help="a function without side effects (its calls may be moved with the statements)")
    p.add_argument("--auto", action="store_true", default=None,
                   help="also optimize the loop nests found without '#pragma scop' (the default in a file that has "
                        "no pragma): each nest found or missed, with the reason, is listed on stderr and in --report")
    _verbosity(p)


def _verbosity(p: argparse.ArgumentParser) -> None:
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="say more: each failed candidate's reason, a traceback on an internal error")
    _debug(p)
    p.add_argument("-q", "--quiet", action="store_true",
                   help="say less: no progress lines or notes (warnings, errors and results still)")


def _debug(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true",
                   help="print the traceback of an internal error (as POLYTUNE_DEBUG=1 does)")


def _debugging(argv: list[str], environ=os.environ) -> bool:
    """Whether an internal error prints its traceback: -v, --debug, or POLYTUNE_DEBUG set to other than 0/empty
    (read from the words before parsing: the error may come from the parser itself)."""
    words = argv[:argv.index("--")] if "--" in argv else argv  # not the program's own arguments
    return bool({"-v", "--verbose", "--debug"} & set(words)) or environ.get("POLYTUNE_DEBUG", "") not in ("", "0")


def _program(p: argparse.ArgumentParser) -> None:
    """How the program is built and run besides the file with the regions (as a compiler driver takes it)."""
    p.add_argument("-l", dest="libs", action="append", default=[], metavar="LIB",
                   help="link the program with library LIB (as gcc -l)")
    p.add_argument("-L", dest="lib_dirs", action="append", default=[], metavar="DIR",
                   help="library directory (as gcc -L)")
    p.add_argument("--ldflags", help="further linker flags, e.g. '-Wl,-rpath,/opt/lib -pthread'")


def _build(args, sources: list[str]):
    """The Build of the command line: other sources and objects, libraries, and the program's arguments
    (after --), run in the current directory (where relative paths among them point)."""
    import os

    from .measure.build import Build
    from .measure.c import shell_flags
    return Build.from_files(sources, libs=tuple(args.libs), lib_dirs=tuple(args.lib_dirs),
                            ldflags=shell_flags(args.ldflags), args=tuple(args.program_args), cwd=os.getcwd())


def _unroll_jam(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unroll-jam", type=COUNT, default=None, metavar="U",
                   help="register tiling: unroll a point loop by U and jam the copies into the innermost loop, "
                        "where some access does not move along that point loop (default 4; 0: off)")


def _analysis_limit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--analysis-time-limit", type=NONNEGATIVE_SECONDS, default=None, metavar="SECONDS",
                   help="a region whose analysis (optimize's, in a worker process) does not end within this many "
                        "seconds is left out, with a note (default 30; 0: no limit)")


def _jam(args) -> dict:
    """--unroll-jam as options, where given (else the options' own default applies)."""
    return {} if args.unroll_jam is None else {"unroll_jam": args.unroll_jam}


def _tf32(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-tf32", action="store_true",
                   help="triton target: float32 contractions (matrix products) on TF32 tensor cores "
                        "(tl.dot's input_precision \"tf32\": operands rounded to 10-bit mantissas, results "
                        "checked to 1e-2 relative); without it every product is computed in full float32. "
                        "The cuda and c targets do not use it (no tensor-core code): their precision is unchanged")


def _reassociate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reassociate", action="store_true",
                   help="c target: a contraction whose statement adds a sum of products (syr2k's "
                        "C += A*B' + B*A') adds them one at a time, one FMA each, instead of in the original's "
                        "order (a product, an FMA and an add); results differ from the original's in rounding, "
                        "as under -ffast-math (tune checks them to --rtol). Without it every element keeps the "
                        "original's floating-point order")


def _precision_notes(args, target: str) -> None:
    """--allow-tf32 and --reassociate where the target does not use them: a note each."""
    if getattr(args, "allow_tf32", False) and target != "triton":
        _note(args, f"polytune: note: --allow-tf32 applies to the triton target only; the {target} target's "
                    "arithmetic stays full precision")
    if getattr(args, "reassociate", False) and target != "c":
        _note(args, f"polytune: note: --reassociate applies to the c target's contraction kernels only; the "
                    f"{target} target keeps its own order")


def _shape(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tile-sizes", metavar="S,S,...",
                   help="comma-separated tile sizes, one per tiled band dimension, outermost first (missing "
                        "ones default to 32)")
    p.add_argument("--tile-sizes-file", metavar="FILE", help="Pluto's tile.sizes format: one integer per line")
    p.add_argument("--no-tile", action="store_true", help="do not tile")
    p.add_argument("--no-parallel", action="store_true", help="no OpenMP pragmas, no wavefront")
    p.add_argument("--schedule", default=OPTIMIZE_DEFAULTS.schedule, choices=["model", "pluto", "outer", "original"],
                   help="CPU schedule: pluto (tiling hyperplanes with skewing: stencils are time-tiled), outer "
                        "(outer parallel loops first: a stencil's time loop stays outside), original (the loops "
                        "as written, tiled where permutable, parallel where legal), or model (of the three, the "
                        "one a cost model ranks first, per scop, without measuring; ties keep pluto)")
    p.add_argument("--choice", metavar="NAME=VALUE,...",
                   help="a schedule alternative (overrides --schedule and --unroll-jam): "
                        "scheduler=pluto|outer|original, fusion=smart|max|none, omp_schedule=auto|static|dynamic, "
                        "privatize_arrays=1|0, "
                        "point_order=stride|vector, unroll=U, tiling=all|reuse")
    p.add_argument("--blocks", metavar="off|NAME=VALUE,...",
                   help="contraction bands (C[..] += A[..] * B[..]) as packed blocks: off (tiled as other bands), "
                        "or block sizes mr=ROWS,nv=VECTORS,kc=K,mc=M,nc=N,pack_a=1|0 (0 or missing: the "
                        "analytical model's, the default)")
    _unroll_jam(p)
    p.add_argument("--target", default=OPTIMIZE_DEFAULTS.target, choices=TARGET_NAMES,
                   help="code to emit: c (C with OpenMP), cuda (host code and kernels) or "
                        "triton (a Python module with Triton kernels and a launcher run())")
    p.add_argument("--block", metavar="X[,Y[,Z]]",
                   help="GPU thread-block shape (default 1024 for 1-D kernels, 32,32 for 2-D, 32,8,4 for 3-D; a "
                        "1-D kernel takes the product)")
    _tf32(p)
    _reassociate(p)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="polytune", description="Polyhedral tiling/parallelization with an empirical tuner",
                     epilog="polytune COMMAND --help lists that command's options; README.md has the details")
    parser.add_argument("--version", action="version", version=f"polytune {__version__}")
    _debug(parser)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="{optimize,tune,bench,inspect}")
    p = sub.add_parser("optimize", help="write the program with every scop region tiled and parallelized")
    _common(p)
    _shape(p)
    p.add_argument("-o", "--output", help="output file (default: FILE.polytune.c; '-' for stdout)")
    p.add_argument("--force", action="store_true", help="allow -o to name the input file (overwrite it)")
    p.add_argument("--report", metavar="FILE", help="write a JSON report of what was done to each scop")
    p.add_argument("--time-limit", type=NONNEGATIVE_SECONDS, default=None, metavar="SECONDS",
                   help="wall-clock limit (default 30; 0: none): a region not optimized by then keeps its "
                        "original code, with a note naming the stage that ran out")
    p = sub.add_parser("tune", help="tune by measurement: tile sizes (c), GPU mapping (cuda) or launch "
                                            "configuration (triton), by hill climbing from the default",
                       usage="polytune tune FILE.c [MORE.c ...] [-I DIR] [-D NAME] [-l LIB] [-L DIR] "
                             "[--ldflags FLAGS] [options] [-- PROGRAM ARGUMENTS]",
                       description="Tune by measurement: every candidate is built into your program, verified "
                                   "against the original and timed (polytune times the scop regions itself); the "
                                   "summary names the seed, the adopted best and the fastest measured.")
    _common(p)
    p.add_argument("sources", nargs="*", default=[], metavar="MORE.c",
                   help="the program's other sources (compiled once, unchanged) or object files and archives, "
                        "linked into the original and every variant")
    _program(p)
    t = TUNE_DEFAULTS
    p.add_argument("-o", "--output", help="write the best program here")
    p.add_argument("--force", action="store_true", help="allow -o to name the input file (overwrite it)")
    p.add_argument("--report", metavar="FILE", help="JSON report: every evaluation, the trajectory, the summary")
    p.add_argument("--tile-sizes-out", metavar="FILE", help="write the best sizes in Pluto's tile.sizes format")
    p.add_argument("--strategy", default=t.strategy, choices=list(STRATEGIES),
                   help="search strategy: hill climbing, every configuration of the grid, random samples, or "
                        "coordinate descent (doubling and halving one size at a time)")
    p.add_argument("--fit", default=t.fit, choices=["best", "first"],
                   help="hill: move to the best improving neighbour, or to the first one found")
    p.add_argument("--neighbourhood", "--neighborhood", dest="degree", type=int, default=t.degree,
                   choices=[1, 2, 3], help="neighbourhood degree: change up to this many sizes at once, one step each")
    p.add_argument("--shortest-hop", action="store_true",
                   help="after converging, keep climbing in steps of each domain's shortest hop")
    p.add_argument("--sweep", action="store_true",
                   help="after converging, sweep each size through its whole domain (the others fixed), move "
                        "to a faster one, and climb again from there (crosses plateaus of equal neighbours)")
    p.add_argument("--no-again", dest="again", action="store_false",
                   help="stop where no neighbour beats the incumbent's first measurement (by default the "
                        "incumbent is measured once more there, and the neighbourhood judged against both)")
    p.add_argument("--seed", default=t.seed, metavar="pluto|origin|model|S,S,...",
                   help="where the search starts: pluto (all 32), origin (all 1), model (cache-size model), or "
                        "explicit sizes like 32,16,8")
    p.add_argument("--domain", action="append", default=[], metavar="SPEC",
                   help="values of the sizes: 1:512:pow2, 8:256:8 or 8,16,32; once for all, once per "
                        "parameter, or NAME=SPEC, NAME the loop the progress lines name (i=8:64:pow2) or the "
                        "parameter's (default: powers of two up to the loop extent, max 512)")
    p.add_argument("--alpha", type=_bounded(float, 0, 1), default=t.alpha,
                   help="significance of the one-sided Welch t-test a move must pass (0: medians alone)")
    p.add_argument("--max-iterations", type=POSITIVE, default=t.max_iterations, metavar="N",
                   help="stop after this many moves of the search")
    p.add_argument("--max-evals", type=POSITIVE, metavar="N",
                   help="stop after this many evaluations (measured configurations; default: no limit)")
    p.add_argument("--time-limit", type=SECONDS, metavar="S",
                   help="stop after this many seconds of search (default: no limit)")
    _analysis_limit(p)
    p.add_argument("--samples", type=POSITIVE, metavar="N",
                   help="random search: number of samples (default from Prop. 9.3: 60)")
    p.add_argument("--eps", type=_bounded(float, 0, 1), default=t.eps,
                   help="coordesc: relative improvement a move needs")
    p.add_argument("--rng-seed", type=int, default=t.rng_seed, metavar="N",
                   help="seed of the random search's sampler (the same seed draws the same samples)")
    p.add_argument("--runs", type=POSITIVE, default=BUILD_DEFAULTS.runs, metavar="N",
                   help="timed runs per candidate (after one verifying run that doubles as the warm-up)")
    p.add_argument("--threads", type=POSITIVE, metavar="N",
                   help="OMP_NUM_THREADS for the runs (default: the environment's, else every core)")
    p.add_argument("--confirm-runs", type=COUNT, default=t.confirm_runs, metavar="N",
                   help="after the search, run the best's, the seed's and optimize's default program up to N times "
                        "each, in turn, and keep the fastest (0: keep the search's best unchecked); from the third "
                        "round on, stop once every run of the fastest beats every run of the others")
    p.add_argument("--confirm-define", action="append", default=None, metavar="NAME[=VALUE]",
                   help="build those programs with these -D instead of the tuning's (all of them; repeat it): "
                        "tune at a small size, keep what is fastest at the size the program runs")
    _unroll_jam(p)
    p.add_argument("--target", default=t.target, choices=TARGET_NAMES,
                   help="c: tune the tile sizes of the C/OpenMP code; cuda: the GPU mapping (block shape, points "
                        "per thread, shared memory, registers, reduction tile, warp reductions, tiling); "
                        "triton: the launch configuration (block sizes, num_warps, num_stages)")
    _tf32(p)
    _reassociate(p)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", type=_name_value,
                   help="a size of the problem to tune for (a macro of the file, as -D)")
    p.add_argument("--cc", help="compiler of the variants (default gcc; nvcc for --target cuda)")
    p.add_argument("--cflags", help="its flags (default '-O3 -march=native'; '-O3 -arch=native' for nvcc)")
    p.add_argument("--rtol", type=_bounded(float, 0),
                   help="relative tolerance of the result check (default 1e-9 for c, for FMA contraction; "
                        "1e-4 for cuda, for float data and the GPU's FMAs; 0: bit-identical)")
    p.add_argument("--cache", metavar="FILE",
                   help="measurement cache file (default: ~/.cache/polytune/measurements.sqlite)")
    p.add_argument("--no-cache", action="store_true",
                   help="measure every candidate afresh and record nothing (no cache file read or written)")
    p.add_argument("--no-parallel", action="store_true", help="tune code without OpenMP pragmas (one thread)")
    p.add_argument("--schedule", default=t.schedule, choices=["pluto", "outer", "auto"],
                   help="the C target's schedule whose tile sizes are tuned (see optimize --schedule); auto: "
                        "measure both schedules' tile-32 seeds first and tune the faster one")
    p.add_argument("--space", choices=["tiles", "schedule"], default=None,
                   help="what is tuned (c target): tiles (the tile sizes, the default) or schedule (the tile sizes "
                        "and one coordinate per schedule choice: scheduler, fusion, omp_schedule, "
                        "privatize_arrays, point_order, unroll, tiling; the seed is still Pluto's default)")
    p.add_argument("--jobs", "-j", type=POSITIVE, default=None, metavar="N",
                   help="generate and compile N candidates at once while one is timed (default: the cores, for "
                        "--target cuda one fewer; 1: one candidate at a time; the triton target measures one "
                        "at a time)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run candidates on a Ray cluster (HOST:PORT, or auto: the one on this machine, else a "
                        "private local instance); needs pip install 'polytune[ray]' (docs/CLUSTER.md)")
    p.add_argument("--plot", metavar="FILE", help="draw the search (PNG): a heatmap with the path for two "
                                                  "parameters, else time per evaluation with the incumbent")
    p = sub.add_parser("bench", help="gcc -O3, clang -O3, Polly, polytune's seed and tuned kernels side by side",
                       description="Tune each kernel, then run the original under gcc -O3, clang -O3 and Polly and "
                                   "polytune's programs in interleaved rounds. A program's time is the line it "
                                   "prints: 'time: SECONDS' on stdout, or PolyBench's timer (-D POLYBENCH_TIME, "
                                   "--with utilities/polybench.c); a program that prints neither is refused.")
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="kernels (.c with a scop; a directory: its *.c)")
    p.add_argument("--report", metavar="OUT_DIR", help="write results.json, results.csv, summary.md, figures")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="include directory, for polytune and every compiler")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="macro definition, for polytune and every compiler (-D POLYBENCH_TIME: PolyBench's timer "
                        "gives the time)")
    p.add_argument("--threads", type=POSITIVE, metavar="N", help="OMP_NUM_THREADS of every run (default: all cores)")
    p.add_argument("--runs", type=POSITIVE, default=3, metavar="N",
                   help="interleaved rounds (and timed runs per tuning candidate)")
    p.add_argument("--strategies", default="hill", help="comma-separated: hill, exhaustive, random, coordesc, "
                                                        "with modifiers like hill:d2, hill:first, hill:hop, "
                                                        "hill:origin, hill:model, random:n20")
    p.add_argument("--max-evals", type=POSITIVE, metavar="N", help="evaluations per tuning run (default: no limit)")
    p.add_argument("--time-limit", type=SECONDS, metavar="S", help="seconds per tuning run (default: no limit)")
    _analysis_limit(p)
    p.add_argument("--exhaustive-max", type=POSITIVE, default=300, metavar="N",
                   help="exhaustive only on grids this small")
    p.add_argument("--compilers", default="gcc,clang,polly", help="baselines to compare (gcc, clang, polly)")
    p.add_argument("--gcc", default="gcc", help="gcc command (also compiles polytune's output)")
    p.add_argument("--clang", help="clang command (default: the first of clang, clang-19 .. clang-14 found)")
    p.add_argument("--polly-flags", help="flags enabling Polly (default: detected, e.g. '-mllvm -polly')")
    p.add_argument("--cache", metavar="FILE",
                   help="tuning measurement cache (default: none, so search times are real)")
    p.add_argument("--jobs", "-j", type=POSITIVE, default=1, metavar="N",
                   help="tuning: compile N candidates at once while one is timed (1: one at a time, so search "
                        "times compare with earlier runs; the kernels themselves are benched one after another)")
    p.add_argument("--ray", metavar="ADDRESS", help="tuning: candidates on a Ray cluster (as tune --ray)")
    p.add_argument("--tunes-at-once", type=POSITIVE, metavar="N",
                   help="tuning runs (kernel x strategy) at once, sharing the workers of --jobs or --ray, every "
                        "one before the sessions (default: one per timer, at least 2: with --ray, one per timer "
                        "slot of the cluster; with --jobs N, 2 where --threads leaves cores for the compiles; "
                        "else 1)")
    p.add_argument("--with", dest="sources", action="append", default=[], metavar="FILE",
                   help="another source (or object) of every kernel, e.g. PolyBench's utilities/polybench.c")
    _program(p)
    _verbosity(p)
    p = sub.add_parser("inspect", help="print statements, domains, accesses, dependences and the schedule")
    _common(p)
    _shape(p)
    return parser


def parse_sizes(text: str | None, file: str | None, what: str = "tile size", option: str = "--tile-sizes") \
        -> tuple[int, ...]:
    sizes: list[str] = []
    if file:
        try:
            with open(file) as f:
                sizes += [tok for line in f for tok in line.split("#")[0].split()]
        except OSError as e:
            raise UsageError(f"cannot read tile sizes: {e.strerror}", file) from None
    if text:
        sizes += [t for t in text.replace(" ", "").split(",") if t]
    out = []
    for t in sizes:
        try:
            v = int(t)
        except ValueError:
            raise UsageError(f"{option}: {what}s must be positive integers, got '{t}'") from None
        if v < 1:
            raise UsageError(f"{option}: {what}s must be positive, got {v}")
        out.append(v)
    return tuple(out)


def default_output(path: str, target: str = "c") -> str:
    return get_target(target).default_output(path)


def _options(args):
    from .poly.choice import parse_choice
    block = parse_sizes(args.block, None, "block size", "--block") if args.block else ()
    if block:
        from .emit.cuda import check_block
        check_block(block)
    limit = getattr(args, "time_limit", None)
    return OptimizeOptions(tile=not args.no_tile, parallel=not args.no_parallel,
                           tile_sizes=parse_sizes(args.tile_sizes, args.tile_sizes_file), target=args.target,
                           block=block, schedule=args.schedule,
                           choice=parse_choice(args.choice) if getattr(args, "choice", None) else None,
                           allow_tf32=getattr(args, "allow_tf32", False),
                           **_jam(args), **_blocks(args), **({} if limit is None else {"time_limit": limit}))


def _blocks(args) -> dict:
    """--blocks and --reassociate as options, where given."""
    from .poly.contraction import Blocks, parse_blocks
    blocks = parse_blocks(args.blocks) if getattr(args, "blocks", None) else None
    if getattr(args, "reassociate", False):
        blocks = dataclasses.replace(blocks or Blocks(), reassociate=True)
    return {} if blocks is None else {"blocks": blocks}


def require_regions(report: dict, path: str) -> None:
    """A file with no scop region and no loop nest that region detection could report on is refused (optimize,
    inspect): one line, exit code 2. Where detection ran and said what it found or missed (the report's
    ``regions_found``/``missed``), the remarks are the answer and the file is not refused."""
    if not report["scops"] and "regions_found" not in report and "kept" not in report:  # (kept: time limit)
        raise UsageError("no loop nest to optimize: no #pragma scop region, and no loop nest found in the file's "
                         "functions (polytune optimizes loop nests: see --auto)", path)


def unused_sizes_warning(given: tuple[int, ...], used: int) -> str | None:
    """A warning where --tile-sizes gives more sizes than the tiled bands have dimensions."""
    if len(given) <= used:
        return None
    extra = ",".join(map(str, given[used:]))
    return (f"polytune: warning: --tile-sizes gives {len(given)} sizes but the tiled bands have {used} "
            f"dimension{'s' if used != 1 else ''}: {extra} not used")


def _note(args, line: str) -> None:
    """An informational line on stderr, unless -q."""
    if not getattr(args, "quiet", False):
        print(line, file=sys.stderr)


def cmd_optimize(args) -> int:
    from .outpath import check_output, write_output
    from .pipeline import optimize
    opts = _options(args)
    _precision_notes(args, opts.target)
    out = args.output or default_output(args.file, opts.target)
    for path in (out, args.report):
        check_output(path, (args.file,), args.force)
    result = optimize(args.file, opts, tuple(args.includes), tuple(args.defines), tuple(args.pure),
                      started=_STARTED, auto=args.auto)
    require_regions(result.report, args.file)
    for w in result.warnings:
        print(w, file=sys.stderr)
    for line in result.report.get("notes", ()):
        _note(args, line)
    if opts.target == "c" and opts.tile and opts.choice is None:
        used = sum(len(b.get("tile_sizes") or ()) for sc in result.report["scops"] for b in sc.get("bands", ()))
        warning = unused_sizes_warning(opts.tile_sizes, used)
        if warning:
            print(warning, file=sys.stderr)
    report = json.dumps(result.report, indent=2) + "\n"
    if out == "-":
        sys.stdout.write(result.text)
    else:
        write_output(out, result.text)
    if args.report:
        write_output(args.report, report)
    if out != "-":
        m = sum(1 for s in result.report["scops"] if "kept" in s)
        n = len(result.report["scops"]) - m
        found = result.report.get("regions_found")
        found = f" ({len(found)} found without pragmas)" if found is not None else ""
        _note(args, f"polytune: {n} scop region{'s' if n != 1 else ''} optimized{found}"
                    f"{f', {m} kept as written' if m else ''} -> {out}")
    return 0


def cmd_inspect(args) -> int:
    from .pipeline import analyze
    opts = _options(args)
    program = analyze(args.file, tuple(args.includes), tuple(args.defines), tuple(args.pure), args.auto)
    for r in program.remarks:
        print(r, file=sys.stderr)
    require_regions({"scops": program.scops, **({"regions_found": []} if program.remarks else {})}, args.file)
    sizes = list(opts.tile_sizes)
    w = sys.stdout.write
    for k, a in enumerate(program.scops):
        s = a.scop
        w(f"scop {k}: {s.file}:{s.begin_line}-{s.end_line}\n")
        w(f"  parameters: {', '.join(s.params) or '(none)'}\n")
        for st in s.statements:
            w(f"  {st.name} (line {st.line}): {st.domain}\n")
            for acc in st.accesses:
                w(f"    {'write' if acc.is_write else 'read '} {acc.relation}\n")
        w(f"  original schedule: {s.schedule}\n")
        w(f"  flow dependences:   {a.deps.flow}\n")
        w(f"  anti dependences:   {a.deps.anti}\n")
        w(f"  output dependences: {a.deps.output}\n")
        ts = a.tiled(tuple(sizes), tile=opts.tile, parallel=opts.parallel, schedule=opts.schedule,
                     unroll_jam=opts.unroll_jam)
        del sizes[:len(ts.tile_sizes)]
        for b in ts.bands:
            what = f"tiled {list(b.tile_sizes)}" if b.tiled else "not tiled"
            w(f"  band {b.index} (depth {b.depth}, {b.members} member(s), {what}"
              f"{', permutable' if b.permutable else ''}"
              f"{', wavefront (on one thread: its tiles in order)' if b.wavefront else ''}"
              f"{' (concurrent start)' if b.concurrent_start else ''}"
              f"{f', point loop {b.unroll_jam[0]} unrolled and jammed by {b.unroll_jam[1]}' if b.unroll_jam else ''}"
              f"{f', one band per statement from member {b.sequence_at}' if b.sequence_at is not None else ''}"
              f"{f', point loop {b.sunk} moved below the bands inside' if b.sunk is not None else ''}"
              f", parallel: {b.parallel_loop or 'none'}): {b.schedule}\n")
        w(f"  final schedule: {ts.schedule.get_map().intersect_domain(s.domain)}\n")
    if sizes and opts.tile:
        print(unused_sizes_warning(opts.tile_sizes, len(opts.tile_sizes) - len(sizes)), file=sys.stderr)
    return 0


def check_ray(address: str | None) -> None:
    """--ray needs Ray installed: said before anything is built."""
    import importlib.util
    if address is not None and importlib.util.find_spec("ray") is None:
        raise UsageError("--ray needs Ray, which is not installed: pip install 'polytune[ray]'")


def check_compiler(cc: str | None, option: str) -> None:
    import shutil
    if cc is not None and shutil.which(cc.split()[0]) is None:
        raise UsageError(f"{option}: compiler not found: {cc}")


def check_cache(path: str | None) -> None:
    """The measurement cache (*path*, or the default where None) can be created: said before any work, not as an
    internal error once the first measurement is stored."""
    from .outpath import check_creatable
    from .tune import default_cache_path
    check_creatable(path or default_cache_path(),
                    "--cache" if path else "--cache (the default; give another, or --no-cache)")


def tune_options(args, seed=None) -> TuneOptions:
    """The TuneOptions of a tune command line (*seed*: --seed parsed), group by group."""
    from .search import Budget, SearchOptions
    from .tune import ConfirmOptions, WorkerOptions, default_cache_path
    search = SearchOptions(degree=args.degree, fit=args.fit, alpha=args.alpha or None, shortest_hop=args.shortest_hop,
                           sweep=args.sweep, again=args.again, eps=args.eps, samples=args.samples,
                           rng_seed=args.rng_seed)
    budget = Budget(max_evals=args.max_evals, time_limit=args.time_limit, max_iterations=args.max_iterations)
    confirm = ConfirmOptions(args.confirm_runs,
                             tuple(args.confirm_define) if args.confirm_define is not None else None)
    return TuneOptions(strategy=args.strategy, seed=args.seed if seed is None else seed, domains=tuple(args.domain),
                       cache=None if args.no_cache else (args.cache or default_cache_path()),
                       parallel=not args.no_parallel, target=args.target, schedule=args.schedule,
                       pure=tuple(args.pure), auto=args.auto, space=args.space, allow_tf32=args.allow_tf32,
                       reassociate=args.reassociate, search=search, budget=budget,
                       workers=WorkerOptions(args.jobs, args.ray), confirm=confirm,
                       **_jam(args), **({} if args.analysis_time_limit is None else
                                        {"analysis_time_limit": args.analysis_time_limit}))


def build_config(args):
    """How a tune command line builds and runs the program (its target's BuildConfig)."""
    from .measure.c import shell_flags
    target = get_target(args.target)
    cls, extra = target.build_class, {k: getattr(args, k) for k in target.build_options}
    given = {k: v for k, v in (("cc", args.cc), ("cflags", shell_flags(args.cflags) if args.cflags else None),
                               ("rtol", args.rtol)) if v is not None}
    return cls(includes=tuple(args.includes), defines=tuple(args.defines) + tuple(args.param), runs=args.runs,
               program=_build(args, args.sources), **extra, **given)


def cmd_tune(args) -> int:
    from .outpath import check_creatable, check_output
    from .outpath import write_output as write_atomically
    from .search import parse_domain
    from .tune import (
        TuneInterrupted,
        describe,
        progress_printer,
        summary,
        tune,
        untimed_reason,
        write_report,
    )
    for path in (args.output, args.report, args.tile_sizes_out):
        check_output(path, (args.file,), args.force)
    check_creatable(args.plot, "--plot")
    if not args.no_cache:
        check_cache(args.cache)
    seed = args.seed if args.seed in ("pluto", "origin", "model") else parse_sizes(args.seed, None, "seed size",
                                                                                     "--seed")
    for spec in args.domain:  # the syntax now; the names once the parameters are known
        parse_domain(spec.split("=", 1)[1] if "=" in spec else spec)
    check_ray(args.ray)
    check_compiler(args.cc, "--cc")
    if args.plot:
        from .study.bench import has_matplotlib
        if not has_matplotlib():
            raise UsageError("--plot needs matplotlib: pip install -e '.[plots]'")
    opts = tune_options(args, seed)
    _precision_notes(args, args.target)
    target = get_target(args.target)
    build = build_config(args)
    progress = progress_printer(sys.stderr)
    progress.level = 0 if args.quiet else 1 + args.verbose
    try:
        with _wait_policy(args, not target.gpu) as note:
            if note and not args.quiet:
                progress.pending.append(note)  # said once the program is analyzed and its original measured
            res = tune(args.file, opts, build, progress=progress)
    except TuneInterrupted as stop:
        res = stop.result
        if args.report:
            write_report(args.report, res.report)
        best = res.report.best
        print(f"polytune: interrupted after {res.report.evals} evaluations"
              + (f" (best so far {describe(best.config, res.report.loops, res.report.space)}: "
                 f"{fmt_time(best.value)})" if best is not None else "")
              + (f"; their report -> {args.report}" if args.report else ""), file=sys.stderr)
        return 130
    print(summary(res))
    if res.best_text is not None:
        if args.output:
            write_atomically(args.output, res.best_text)
            _note(args, f"polytune: the best program -> {args.output}")
        if args.tile_sizes_out:
            sizes = res.report.best_build["tile_sizes"] if res.report.best_build else res.best_config
            write_atomically(args.tile_sizes_out, "".join(f"{v}\n" for v in sizes))  # the schedule's sizes only
    if args.report:
        write_report(args.report, res.report)
    if args.plot:
        from .study.plots import save, tune_figure
        _note(args, f"polytune: search drawn -> {save(tune_figure(res.report.to_json()), args.plot)}")
    if res.best_text is None:
        print(f"polytune: error: {untimed_reason(res.report)}", file=sys.stderr)
        return 1
    return 0


def cmd_bench(args) -> int:
    from .outpath import check_creatable
    from .study.bench import main_from_args
    check_creatable(args.report, "--report", directory=True)
    if args.cache is not None:
        check_cache(args.cache)
    check_ray(args.ray)
    check_compiler(args.gcc, "--gcc")
    args.program = _build(args, args.sources)  # every kernel's other sources, libraries, arguments
    with _wait_policy(args) as note:
        args.notes = [note] if note else []  # said after the kernels' timers are checked
        return main_from_args(args)


@contextlib.contextmanager
def _wait_policy(args, applies: bool = True):
    """OMP_WAIT_POLICY=passive for the command's runs where the machine is loaded (tune.wait_passively_when_loaded;
    yields its note), the environment as it was afterwards (main() may be called in a process that goes on)."""
    from .tune import wait_passively_when_loaded
    saved = os.environ.get("OMP_WAIT_POLICY")
    note = wait_passively_when_loaded(args.threads) if applies else None
    try:
        yield note
    finally:
        if note:
            if saved is None:
                os.environ.pop("OMP_WAIT_POLICY", None)
            else:
                os.environ["OMP_WAIT_POLICY"] = saved


COMMANDS = {"optimize": cmd_optimize, "inspect": cmd_inspect, "tune": cmd_tune, "bench": cmd_bench}


def _value_options(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Per command, the options that take a value (for negative values and suggestions)."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = {o for a in sub._actions if a.option_strings for o in a.option_strings
                             if a.nargs != 0}
    return out


def _all_options(parser: argparse.ArgumentParser, command: str | None) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return [o for a in action.choices[command]._actions for o in a.option_strings]
    return [o for a in parser._actions for o in a.option_strings]


def _join_negative_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``--tile-sizes -8,32,32`` as ``--tile-sizes=-8,32,32``: argparse takes a value that starts with '-' for
    an option unless it is a plain negative number; joined, the value reaches the check that says what is
    wrong with it ("tile sizes must be positive")."""
    command = next((a for a in argv if not a.startswith("-")), None)
    takes = _value_options(parser).get(command, set())
    out: list[str] = []
    k = 0
    while k < len(argv):
        a = argv[k]
        if a in takes and k + 1 < len(argv) and re.match(r"-[0-9.]", argv[k + 1]):
            out.append(f"{a}={argv[k + 1]}")
            k += 2
            continue
        out.append(a)
        k += 1
    return out


def _unknown(rest: list[str], parser: argparse.ArgumentParser, command: str | None) -> UsageError:
    """An unknown option, with the option it most likely meant."""
    import difflib
    first = rest[0].split("=", 1)[0]
    near = difflib.get_close_matches(first, _all_options(parser, command), n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]}?)" if near else ""
    where = f"polytune {command}" if command else "polytune"
    return UsageError(f"unrecognized argument{'s' if len(rest) > 1 else ''} for {where}: {' '.join(rest)}{hint}")


def _check_command(argv: list[str]) -> None:
    """An unknown command, with the command it most likely meant."""
    import difflib
    command = argv[0] if argv and not argv[0].startswith("-") else None
    if command is None or command in COMMANDS:
        return
    near = difflib.get_close_matches(command, list(COMMANDS), n=1, cutoff=0.6)
    raise UsageError(f"unknown command '{command}' (choose from {', '.join(COMMANDS)})"
                     + (f"; did you mean {near[0]}?" if near else ""))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debugging(argv)
    try:
        program_args: list[str] = []
        if "--" in argv:  # the program's own arguments: every run of the original and the variants gets them
            k = argv.index("--")
            argv, program_args = argv[:k], argv[k + 1:]
        parser = build_parser()
        _check_command(argv)
        args, rest = parser.parse_known_args(_join_negative_values(argv, parser))
        if args.command == "tune":  # more sources after options, as a compiler driver takes them
            args.sources += [a for a in rest if not a.startswith("-")]
            rest = [a for a in rest if a.startswith("-")]
        if rest:
            raise _unknown(rest, parser, args.command)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        if program_args and args.command not in ("tune", "bench"):
            raise UsageError(f"program arguments (after --) apply to tune and bench, not {args.command}")
        args.program_args = program_args
        return COMMANDS[args.command](args)
    except PolytuneError as e:
        print(str(e) if e.file is not None else f"polytune: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("polytune: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # never a traceback for the user (unless -v, --debug, POLYTUNE_DEBUG=1): one line
        if debug:
            import traceback
            traceback.print_exc()
        print(f"polytune: internal error: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return 3


# When the `polytune` command started (run() sets it): optimize's limit counts Python's start-up and
# imports too. None (main() called from Python): from optimize's own start.
_STARTED: float | None = None


def run() -> None:
    global _STARTED
    from .timelimit import process_started
    _STARTED = process_started()
    sys.exit(main())


if __name__ == "__main__":  # python3 -m polytune.cli, as python3 -m polytune
    run()
