"""The ``polytune`` command: a thin layer over the pipeline. ``main(argv) -> exit code``."""
from __future__ import annotations

import argparse
import json
import sys

from .errors import PolytuneError, UsageError
from .targets import TARGET_NAMES, get_target


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit code 2, like every other user error
        raise UsageError(message)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="C file with #pragma scop / #pragma endscop regions")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="include directory for the C preprocessor")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="macro definition for the C preprocessor")
    p.add_argument("--pure", action="append", default=[], metavar="NAME", help="a function without side effects")
    p.add_argument("--auto", action="store_true", default=None,
                   help="also optimize the loop nests found without '#pragma scop' (the default in a file that has "
                        "no pragma): each nest found or missed, with the reason, is listed on stderr and in --report")


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
    p.add_argument("--unroll-jam", type=int, default=None, metavar="U",
                   help="register tiling: unroll a point loop by U and jam the copies into the innermost loop, "
                        "where some access does not move along that point loop (default 4; 0: off)")


def _analysis_limit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--analysis-time-limit", type=float, default=None, metavar="SECONDS",
                   help="a region whose analysis (optimize's, in a worker process) does not end within this many "
                        "seconds is left out, with a note (default 30; 0: no limit)")


def _jam(args) -> dict:
    """--unroll-jam as options, where given (else the options' own default applies)."""
    return {} if args.unroll_jam is None else {"unroll_jam": args.unroll_jam}


def _shape(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tile-sizes", help="comma-separated tile sizes, one per tiled band dimension, "
                                        "outermost first (missing ones default to 32)")
    p.add_argument("--tile-sizes-file", help="Pluto's tile.sizes format: one integer per line")
    p.add_argument("--no-tile", action="store_true", help="do not tile")
    p.add_argument("--no-parallel", action="store_true", help="no OpenMP pragmas, no wavefront")
    p.add_argument("--schedule", default="model", choices=["model", "pluto", "outer"],
                   help="CPU schedule: pluto (tiling hyperplanes with skewing: stencils are time-tiled), outer "
                        "(outer parallel loops first: a stencil's time loop stays outside), or model (the "
                        "default: of the two, the one a cost model ranks first, per scop, without measuring)")
    p.add_argument("--choice", metavar="NAME=VALUE,...",
                   help="a schedule alternative (overrides --schedule and --unroll-jam): scheduler=pluto|outer, "
                        "fusion=smart|max|none, omp_schedule=auto|static|dynamic, privatize_arrays=1|0, "
                        "point_order=stride|vector, unroll=U, tiling=all|reuse")
    p.add_argument("--blocks", metavar="off|NAME=VALUE,...",
                   help="contraction bands (C[..] += A[..] * B[..]) as packed blocks: off (tiled as other bands), "
                        "or block sizes mr=ROWS,nv=VECTORS,kc=K,mc=M,nc=N,pack_a=1|0 (0 or missing: the "
                        "analytical model's, the default)")
    _unroll_jam(p)
    p.add_argument("--target", default="c", choices=TARGET_NAMES,
                   help="code to emit: c (C with OpenMP, the default), cuda (host code and kernels) or "
                        "triton (a Python module with Triton kernels and a launcher run())")
    p.add_argument("--block", help="GPU thread-block shape x[,y[,z]] (default 1024 for 1-D kernels, 32,32 "
                                   "for 2-D, 32,8,4 for 3-D; a 1-D kernel takes the product)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="polytune", description="Polyhedral tiling/parallelization with an empirical tuner")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p = sub.add_parser("optimize", help="write the program with every scop region tiled and parallelized")
    _common(p)
    _shape(p)
    p.add_argument("-o", "--output", help="output file (default: FILE.polytune.c; '-' for stdout)")
    p.add_argument("--force", action="store_true", help="allow -o to name the input file (overwrite it)")
    p.add_argument("--report", help="write a JSON report of what was done to each scop")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="wall-clock limit (default 30; 0: none): a region not optimized by then keeps its "
                        "original code, with a note naming the stage that ran out")
    p = sub.add_parser("tune", help="tune by measurement: tile sizes (c), GPU mapping (cuda) or launch "
                                            "configuration (triton), by hill climbing from the default",
                       usage="polytune tune FILE.c [MORE.c ...] [-I DIR] [-D NAME] [-l LIB] [-L DIR] "
                             "[--ldflags FLAGS] [options] [-- PROGRAM ARGUMENTS]")
    _common(p)
    p.add_argument("sources", nargs="*", default=[], metavar="MORE.c",
                   help="the program's other sources (compiled once, unchanged) or object files and archives, "
                        "linked into the original and every variant")
    _program(p)
    p.add_argument("-o", "--output", help="write the best program here")
    p.add_argument("--force", action="store_true", help="allow -o to name the input file (overwrite it)")
    p.add_argument("--report", help="JSON report: every evaluation, the trajectory, the summary")
    p.add_argument("--tile-sizes-out", help="write the best sizes in Pluto's tile.sizes format")
    p.add_argument("--strategy", default="hill", choices=["hill", "exhaustive", "random", "coordesc"])
    p.add_argument("--fit", default="best", choices=["best", "first"])
    p.add_argument("--neighbourhood", "--neighborhood", dest="degree", type=int, default=1, choices=[1, 2, 3],
                   help="neighbourhood degree: change up to this many sizes at once, one step each")
    p.add_argument("--shortest-hop", action="store_true",
                   help="after converging, keep climbing in steps of each domain's shortest hop")
    p.add_argument("--sweep", action="store_true",
                   help="after converging, sweep each size through its whole domain (the others fixed), move "
                        "to a faster one, and climb again from there (crosses plateaus of equal neighbours)")
    p.add_argument("--no-again", dest="again", action="store_false",
                   help="stop where no neighbour beats the incumbent's first measurement (by default the "
                        "incumbent is measured once more there, and the neighbourhood judged against both)")
    p.add_argument("--seed", default="pluto", help="pluto (all 32), origin (all 1), model (cache-size "
                                                    "model), or explicit sizes like 32,16,8")
    p.add_argument("--domain", action="append", default=[], metavar="SPEC",
                   help="values of the sizes: 1:512:pow2, 8:256:8 or 8,16,32; once for all, once per "
                        "parameter, or NAME=SPEC (default: powers of two up to the loop extent, max 512)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance of the one-sided Welch t-test a move must pass (0 disables it)")
    p.add_argument("--max-iterations", type=int, default=100)
    p.add_argument("--max-evals", type=int)
    p.add_argument("--time-limit", type=float, help="seconds")
    _analysis_limit(p)
    p.add_argument("--samples", type=int, help="random search: number of samples (default from Prop. 9.3)")
    p.add_argument("--eps", type=float, default=1e-3, help="coordesc: relative improvement threshold")
    p.add_argument("--rng-seed", type=int, default=0)
    p.add_argument("--runs", type=int, default=3, help="timed runs per candidate (after one warm-up run)")
    p.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the runs")
    p.add_argument("--confirm-runs", type=int, default=5, metavar="N",
                   help="after the search, run the best's, the seed's and optimize's default program up to N times "
                        "each, in turn, and keep the fastest (0: keep the search's best unchecked); from the third "
                        "round on, stop once every run of the fastest beats every run of the others")
    p.add_argument("--confirm-define", action="append", default=None, metavar="NAME[=VALUE]",
                   help="build those programs with these -D instead of the tuning's (all of them; repeat it): "
                        "tune at a small size, keep what is fastest at the size the program runs")
    _unroll_jam(p)
    p.add_argument("--target", default="c", choices=TARGET_NAMES,
                   help="c: tune the tile sizes of the C/OpenMP code; cuda: the GPU mapping (block shape, points "
                        "per thread, shared memory, registers, reduction tile, warp reductions, tiling); "
                        "triton: the launch configuration (block sizes, num_warps, num_stages)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a size of the problem to tune for (a macro of the file, as -D)")
    p.add_argument("--cc", help="compiler of the variants (default gcc; nvcc for --target cuda)")
    p.add_argument("--cflags", help="its flags (default '-O3 -march=native'; '-O3 -arch=native' for nvcc)")
    p.add_argument("--rtol", type=float,
                   help="relative tolerance of the result check (default 1e-9 for c, for FMA contraction; "
                        "1e-4 for cuda, for float data and the GPU's FMAs; 0: bit-identical)")
    p.add_argument("--cache", help="measurement cache file (default: ~/.cache/polytune/measurements.sqlite)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--no-parallel", action="store_true")
    p.add_argument("--schedule", default="pluto", choices=["pluto", "outer", "auto"],
                   help="the C target's schedule whose tile sizes are tuned (see optimize --schedule); auto: "
                        "measure both schedules' tile-32 seeds first and tune the faster one")
    p.add_argument("--space", choices=["tiles", "schedule"], default=None,
                   help="what is tuned (c target): tiles (the tile sizes, the default) or schedule (the tile sizes "
                        "and one coordinate per schedule choice: scheduler, fusion, omp_schedule, "
                        "privatize_arrays, point_order, unroll, tiling; the seed is still Pluto's default)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="generate and compile N candidates at once while one is timed (default: the cores, for "
                        "--target cuda one fewer; 1: one candidate at a time; the triton target measures one "
                        "at a time)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run candidates on a Ray cluster (HOST:PORT, or auto: the one on this machine, else a "
                        "private local instance); needs pip install 'polytune[ray]' (docs/CLUSTER.md)")
    p.add_argument("--plot", metavar="FILE", help="draw the search (PNG): a heatmap with the path for two "
                                                  "parameters, else time per evaluation with the incumbent")
    p = sub.add_parser("bench", help="gcc -O3, clang -O3, Polly, polytune's seed and tuned kernels side by side")
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="kernels (.c with a scop; a directory: its *.c)")
    p.add_argument("--report", metavar="OUT_DIR", help="write results.json, results.csv, summary.md, figures")
    p.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    p.add_argument("--threads", type=int, help="OMP_NUM_THREADS of every run (default: all cores)")
    p.add_argument("--runs", type=int, default=3, help="interleaved rounds (and timed runs per tuning candidate)")
    p.add_argument("--strategies", default="hill", help="comma-separated: hill, exhaustive, random, coordesc, "
                                                        "with modifiers like hill:d2, hill:first, hill:hop, "
                                                        "hill:origin, hill:model, random:n20")
    p.add_argument("--max-evals", type=int, help="evaluations per tuning run")
    p.add_argument("--time-limit", type=float, help="seconds per tuning run")
    _analysis_limit(p)
    p.add_argument("--exhaustive-max", type=int, default=300, help="exhaustive only on grids this small")
    p.add_argument("--compilers", default="gcc,clang,polly", help="baselines to compare (gcc, clang, polly)")
    p.add_argument("--gcc", default="gcc", help="gcc command (also compiles polytune's output)")
    p.add_argument("--clang", help="clang command (default: the first of clang, clang-19 .. clang-14 found)")
    p.add_argument("--polly-flags", help="flags enabling Polly (default: detected, e.g. '-mllvm -polly')")
    p.add_argument("--cache", help="tuning measurement cache (default: none, so search times are real)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="tuning: compile N candidates at once while one is timed (default 1, so search times "
                        "compare with earlier runs; the kernels themselves are benched one after another)")
    p.add_argument("--ray", metavar="ADDRESS", help="tuning: candidates on a Ray cluster (as tune --ray)")
    p.add_argument("--tunes-at-once", type=int, metavar="N",
                   help="tuning runs (kernel x strategy) at once, sharing the workers of --jobs or --ray, every "
                        "one before the sessions (default: one per timer, at least 2: with --ray, one per timer "
                        "slot of the cluster; with --jobs N, 2 where --threads leaves cores for the compiles; "
                        "else 1)")
    p.add_argument("--with", dest="sources", action="append", default=[], metavar="FILE",
                   help="another source (or object) of every kernel, e.g. PolyBench's utilities/polybench.c")
    _program(p)
    p = sub.add_parser("inspect", help="print statements, domains, accesses, dependences and the schedule")
    _common(p)
    _shape(p)
    return parser


def parse_sizes(text: str | None, file: str | None, what: str = "tile size") -> tuple[int, ...]:
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
            raise UsageError(f"bad {what} '{t}' (need positive integers)") from None
        if v < 1:
            raise UsageError(f"bad {what} '{t}' (need positive integers)")
        out.append(v)
    return tuple(out)


def default_output(path: str, target: str = "c") -> str:
    return get_target(target).default_output(path)


def _options(args):
    from .pipeline import OptimizeOptions
    from .poly.choice import parse_choice
    block = parse_sizes(args.block, None, "block size") if args.block else ()
    if block:
        from .emit.cuda import check_block
        check_block(block)
    limit = getattr(args, "time_limit", None)
    return OptimizeOptions(tile=not args.no_tile, parallel=not args.no_parallel,
                           tile_sizes=parse_sizes(args.tile_sizes, args.tile_sizes_file), target=args.target,
                           block=block, schedule=args.schedule,
                           choice=parse_choice(args.choice) if getattr(args, "choice", None) else None,
                           **_jam(args), **_blocks(args), **({} if limit is None else {"time_limit": limit}))


def _blocks(args) -> dict:
    """--blocks as options, where given."""
    from .poly.contraction import parse_blocks
    return {"blocks": parse_blocks(args.blocks)} if getattr(args, "blocks", None) else {}


def cmd_optimize(args) -> int:
    from .outpath import check_output, write_output
    from .pipeline import optimize
    opts = _options(args)
    out = args.output or default_output(args.file, opts.target)
    for path in (out, args.report):
        check_output(path, (args.file,), args.force)
    result = optimize(args.file, opts, tuple(args.includes), tuple(args.defines), tuple(args.pure),
                      started=_STARTED, auto=args.auto)
    for w in result.warnings:
        print(w, file=sys.stderr)
    print(*result.report.get("notes", ()), sep="\n", end="\n" if result.report.get("notes") else "", file=sys.stderr)
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
        print(f"polytune: {n} scop region{'s' if n != 1 else ''} optimized{found}"
              f"{f', {m} kept as written' if m else ''} -> {out}", file=sys.stderr)
    return 0


def cmd_inspect(args) -> int:
    from .pipeline import analyze
    opts = _options(args)
    program = analyze(args.file, tuple(args.includes), tuple(args.defines), tuple(args.pure), args.auto)
    for r in program.remarks:
        print(r, file=sys.stderr)
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
    return 0


def cmd_tune(args) -> int:
    from .measure.c import shell_flags
    from .outpath import check_output
    from .outpath import write_output as write_atomically
    for path in (args.output, args.report, args.tile_sizes_out):
        check_output(path, (args.file,), args.force)
    from .tune import TuneOptions, default_cache_path, progress_printer, summary, tune, write_report
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    if args.confirm_runs < 0:
        raise UsageError("--confirm-runs must be 0 or more")
    seed = args.seed if args.seed in ("pluto", "origin", "model") else parse_sizes(args.seed, None)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    opts = TuneOptions(strategy=args.strategy, fit=args.fit, degree=args.degree,
                       shortest_hop=args.shortest_hop, sweep=args.sweep, again=args.again, seed=seed,
                       alpha=args.alpha or None,
                       max_iterations=args.max_iterations, max_evals=args.max_evals,
                       time_limit=args.time_limit, domains=tuple(args.domain), samples=args.samples,
                       eps=args.eps, rng_seed=args.rng_seed,
                       cache=None if args.no_cache else (args.cache or default_cache_path()),
                       parallel=not args.no_parallel, target=args.target, schedule=args.schedule,
                       pure=tuple(args.pure), auto=args.auto, space=args.space, jobs=args.jobs, ray=args.ray,
                       confirm_runs=args.confirm_runs,
                       confirm_defines=tuple(args.confirm_define) if args.confirm_define is not None else None,
                       **_jam(args), **({} if args.analysis_time_limit is None else
                                        {"analysis_time_limit": args.analysis_time_limit}))
    target = get_target(args.target)
    cls, extra = target.build_class, {k: getattr(args, k) for k in target.build_options}
    given = {k: v for k, v in (("cc", args.cc), ("cflags", shell_flags(args.cflags) if args.cflags else None),
                               ("rtol", args.rtol)) if v is not None}
    build = cls(includes=tuple(args.includes), defines=tuple(args.defines) + tuple(args.param), runs=args.runs,
                program=_build(args, args.sources), **extra, **given)
    if args.plot:
        from .study.bench import has_matplotlib
        if not has_matplotlib():
            raise UsageError("--plot needs matplotlib: pip install -e '.[plots]'")
    res = tune(args.file, opts, build, progress=progress_printer(sys.stderr))
    print(summary(res))
    if res.best_text is not None:
        if args.output:
            write_atomically(args.output, res.best_text)
        if args.tile_sizes_out:
            sizes = res.report.best_build["tile_sizes"] if res.report.best_build else res.best_config
            write_atomically(args.tile_sizes_out, "".join(f"{v}\n" for v in sizes))  # the schedule's sizes only
    if args.report:
        write_report(args.report, res.report)
    if args.plot:
        from .study.plots import save, tune_figure
        print(f"polytune: search drawn -> {save(tune_figure(res.report.to_json()), args.plot)}", file=sys.stderr)
    return 0 if res.best_text is not None else 1


def cmd_bench(args) -> int:
    from .study.bench import main_from_args
    args.program = _build(args, args.sources)  # every kernel's other sources, libraries, arguments
    return main_from_args(args)


COMMANDS = {"optimize": cmd_optimize, "inspect": cmd_inspect, "tune": cmd_tune, "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        program_args: list[str] = []
        if "--" in argv:  # the program's own arguments: every run of the original and the variants gets them
            k = argv.index("--")
            argv, program_args = argv[:k], argv[k + 1:]
        args, rest = build_parser().parse_known_args(argv)
        if args.command == "tune":  # more sources after options, as a compiler driver takes them
            args.sources += [a for a in rest if not a.startswith("-")]
            rest = [a for a in rest if a.startswith("-")]
        if rest:
            raise UsageError(f"unrecognized arguments: {' '.join(rest)}")
        if args.command is None:
            build_parser().print_help(sys.stderr)
            return 2
        if program_args and args.command not in ("tune", "bench"):
            raise UsageError(f"program arguments (after --) apply to tune and bench, not {args.command}")
        args.program_args = program_args
        return COMMANDS[args.command](args)
    except PolytuneError as e:
        print(str(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("polytune: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # never a traceback for the user; report what broke in one line
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
