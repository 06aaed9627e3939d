"""The command line behaves as people expect of one: --version, -v/-q, defaults and help in --help, `polytune:
error:` lines with a suggestion for a typo, values checked (and refused with the real reason) before any work,
and the Python API's defaults are the command line's."""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys

import pytest
from conftest import KERNELS, ROOT

import polytune
from polytune import cli
from polytune.cli import build_parser, main
from polytune.measure.build import Build
from polytune.measure.c import BuildConfig
from polytune.pipeline import OptimizeOptions
from polytune.study import bench
from polytune.tune import TuneOptions

GEMM = os.path.join(KERNELS, "gemm.c")
COMMANDS = ("optimize", "tune", "bench", "inspect")


def _sub(name: str) -> argparse.ArgumentParser:
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]


def _args(*argv: str):
    args = build_parser().parse_args(list(argv))
    args.program_args = []
    return args


@pytest.fixture
def no_work(monkeypatch):
    """Fails the test if the file is analyzed: what is refused must be refused before any work."""
    import polytune.pipeline
    monkeypatch.setattr(polytune.pipeline, "analyze", lambda *a, **k: pytest.fail("analyzed before refusing"))


# ---- --version, -v, -q ------------------------------------------------------------------------------------
def test_version_is_the_package_metadatas_in_one_place(capsys):
    from importlib.metadata import version
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"polytune {polytune.__version__}\n"
    assert polytune.__version__ == version("polytune")
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert re.search(rf'^version = "{re.escape(polytune.__version__)}"$', f.read(), re.M)


def test_quiet_leaves_out_notes_and_verbose_is_accepted_everywhere(tmp_path, capsys):
    out = tmp_path / "g.c"
    assert main(["optimize", GEMM, "-DN=40", "-o", str(out), "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["optimize", GEMM, "-DN=40", "-o", str(out)]) == 0
    assert "1 scop region optimized" in capsys.readouterr().err
    for command in COMMANDS:
        options = {o for a in _sub(command)._actions for o in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= options, command


def test_quiet_tune_prints_warnings_and_the_summary_but_no_progress_nor_its_legend(tmp_path, capsys):
    assert main(["tune", GEMM, "-DN=40", "--cflags=-O1", "--runs", "2", "--threads", "1", "--no-cache",
                 "--max-evals", "2", "-q"]) == 0
    cap = capsys.readouterr()
    assert all(ln.startswith("polytune: warning: ") for ln in cap.err.splitlines()), cap.err
    assert "original: " in cap.out and "evaluations: 2" in cap.out


def test_python_dash_m_polytune_cli_runs_the_command():
    proc = subprocess.run([sys.executable, "-m", "polytune.cli", "--version"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0 and proc.stdout.startswith("polytune ")


# ---- --param -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["N", "=3", "N=", "2N=3"])
def test_param_without_a_name_and_a_value_is_refused_before_any_work(value, capsys, no_work):
    """(--param N alone would define N as 1: a tune of another size than meant)"""
    assert main(["tune", GEMM, "--param", value]) == 2
    assert capsys.readouterr().err == (f"polytune: error: --param: needs NAME=VALUE (a macro and its value, e.g. "
                                       f"N=4096), got '{value}'\n")


# ---- --help -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_help_and_help_shows_the_defaults(command):
    p = _sub(command)
    for a in p._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        assert a.help and len(a.help) > 8, (command, a.option_strings or a.dest)
    text = " ".join(p.format_help().split())
    for a in p._actions:
        if a.option_strings and a.default not in (None, False, [], argparse.SUPPRESS) and a.nargs != 0:
            shown = p._get_formatter()._get_help_string(a)
            assert "default" in shown, (command, a.option_strings)
    if command == "tune":
        assert "(default: hill)" in text and "(default: 0.05)" in text and "(default: 3)" in text


# options that name something to write or to use: without them nothing is written or used, there is no default
NOTHING_WITHOUT = {"-o", "--report", "--tile-sizes-out", "--plot", "--ldflags", "--tile-sizes", "--tile-sizes-file",
                   "--choice", "--ray", "--confirm-define"}


@pytest.mark.parametrize("command", COMMANDS)
def test_an_option_without_a_default_value_says_what_happens_without_it(command):
    """(--time-limit: "default: no limit"; --threads: "default: all cores"; --cc: "default gcc")"""
    for a in _sub(command)._actions:
        if a.option_strings and a.nargs != 0 and a.default is None and not NOTHING_WITHOUT & set(a.option_strings):
            assert "default" in a.help, (command, a.option_strings)


# ---- errors -----------------------------------------------------------------------------------------------
def test_an_option_typo_is_an_error_line_with_a_suggestion(capsys, no_work):
    assert main(["optimize", GEMM, "--tilesizes", "8,8"]) == 2
    assert capsys.readouterr().err == ("polytune: error: unrecognized arguments for polytune optimize: --tilesizes "
                                       "8,8 (did you mean --tile-sizes?)\n")
    assert main(["tune", GEMM, "--max-eval", "3"]) == 2
    assert "(did you mean --max-evals?)" in capsys.readouterr().err


def test_abbreviated_options_are_not_taken_for_the_whole_name(capsys, no_work):
    assert main(["tune", GEMM, "--max-e", "3"]) == 2
    assert "did you mean --max-evals?" in capsys.readouterr().err


def test_a_command_typo_suggests_the_command(capsys):
    assert main(["optimise", GEMM]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polytune: error: unknown command 'optimise'") and "did you mean optimize?" in err


def test_negative_tile_sizes_are_parsed_and_refused_for_what_they_are(capsys, no_work):
    assert main(["optimize", GEMM, "--tile-sizes", "-8,32,32"]) == 2
    assert capsys.readouterr().err == "polytune: error: --tile-sizes: tile sizes must be positive, got -8\n"
    assert main(["tune", GEMM, "--seed", "-8,32,32"]) == 2
    assert "--seed: seed sizes must be positive, got -8" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--max-evals", "-1"], "--max-evals: must be at least 1, got -1"),
    (["--max-evals", "x"], "--max-evals: needs an integer, got 'x'"),
    (["--runs", "0"], "--runs: must be at least 1, got 0"),
    (["--threads", "0"], "--threads: must be at least 1, got 0"),
    (["--jobs", "0"], "--jobs/-j: must be at least 1, got 0"),
    (["--time-limit", "0"], "--time-limit: must be above 0, got 0"),
    (["--alpha", "1.5"], "--alpha: must be below 1, got 1.5"),
    (["--confirm-runs", "-2"], "--confirm-runs: must be at least 0, got -2"),
    (["--unroll-jam", "-4"], "--unroll-jam: must be at least 0, got -4"),
    (["--domain", "8:4"], "bad domain '8:4': lo 8 > hi 4"),
    (["--cc", "no-such-cc-1"], "--cc: compiler not found: no-such-cc-1"),
])
def test_tune_arguments_are_checked_before_any_work_with_the_options_names(argv, message, capsys, no_work):
    assert main(["tune", GEMM, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "_" not in err.split(":")[1], err


def test_ray_without_ray_installed_is_refused_before_any_work(monkeypatch, capsys, no_work):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    for command in (["tune", GEMM], ["bench", GEMM]):
        assert main([*command, "--ray", "auto"]) == 2
        assert capsys.readouterr().err == ("polytune: error: --ray needs Ray, which is not installed: "
                                           "pip install 'polytune[ray]'\n")


@pytest.mark.parametrize("argv, message", [
    (["tune", GEMM, "--cache", "/proc/no-such-dir/m.sqlite"],
     "/proc/no-such-dir/m.sqlite: --cache: cannot create /proc/no-such-dir: "),
    (["tune", GEMM, "--plot", "/proc/no-such-dir/p.png"], "/proc/no-such-dir/p.png: --plot: cannot create "),
    (["tune", GEMM, "--plot", "/tmp"], "/tmp: --plot: is a directory (give a file name)"),
    (["bench", GEMM, "--report", "/proc/no-such-dir"], "/proc/no-such-dir: --report: cannot create /proc/no-such-dir"),
    (["bench", GEMM, "--report", GEMM], f"{GEMM}: --report: not a directory"),
    (["bench", GEMM, "--cache", "/proc/no-such-dir/m.sqlite"], "/proc/no-such-dir/m.sqlite: --cache: cannot create"),
])
def test_paths_written_at_the_end_are_checked_before_any_work(argv, message, capsys, no_work):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(message), err


def test_the_default_cache_that_cannot_be_made_is_refused_with_the_way_out(monkeypatch, capsys, no_work):
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-such-dir")
    assert main(["tune", GEMM]) == 2
    assert "--cache (the default; give another, or --no-cache): cannot create" in capsys.readouterr().err


def test_extra_tile_sizes_are_warned_about(tmp_path, capsys):
    # (blocks off: gemm's product tiled as a band of 3 dimensions, not packed)
    assert main(["optimize", GEMM, "-DN=40", "--blocks", "off", "--tile-sizes", "16,16,16,8,4", "-o",
                 str(tmp_path / "g.c")]) == 0
    assert ("polytune: warning: --tile-sizes gives 5 sizes but the tiled bands have 3 dimensions: 8,4 not used"
            in capsys.readouterr().err)
    assert main(["optimize", GEMM, "-DN=40", "--blocks", "off", "--tile-sizes", "16,16", "-o",
                 str(tmp_path / "g.c")]) == 0
    assert "warning" not in capsys.readouterr().err


NO_SCOP = "double A[10];\nint main(void) { A[3] = 2; return 0; }\n"  # no pragma and no loop nest to find


@pytest.mark.parametrize("command", ["optimize", "inspect"])
def test_a_file_without_a_scop_region_or_a_loop_nest_is_one_line_and_exit_2(command, tmp_path, capsys):
    src = tmp_path / "plain.c"
    src.write_text(NO_SCOP)
    assert main([command, str(src)]) == 2
    assert capsys.readouterr().err == (f"{src}: no loop nest to optimize: no #pragma scop region, and no loop nest "
                                       "found in the file's functions (polytune optimizes loop nests: see --auto)\n")
    assert not (tmp_path / "plain.polytune.c").exists()


def test_an_internal_error_is_one_line_and_a_traceback_only_with_verbose(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")
    monkeypatch.setitem(cli.COMMANDS, "inspect", broken)
    assert main(["inspect", GEMM]) == 3
    assert capsys.readouterr().err == "polytune: internal error: RuntimeError: boom\n"
    assert main(["inspect", GEMM, "-v"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and err.endswith("polytune: internal error: RuntimeError: boom\n")


@pytest.mark.parametrize("where", ["--debug before the command", "--debug after it", "POLYTUNE_DEBUG=1"])
def test_debug_prints_the_traceback_of_an_internal_error(where, monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")
    monkeypatch.setitem(cli.COMMANDS, "inspect", broken)
    monkeypatch.delenv("POLYTUNE_DEBUG", raising=False)
    argv = {"--debug before the command": ["--debug", "inspect", GEMM],
            "--debug after it": ["inspect", GEMM, "--debug"], "POLYTUNE_DEBUG=1": ["inspect", GEMM]}[where]
    if where == "POLYTUNE_DEBUG=1":
        monkeypatch.setenv("POLYTUNE_DEBUG", "1")
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and 'raise RuntimeError("boom")' in err
    assert err.endswith("polytune: internal error: RuntimeError: boom\n")


def test_polytune_debug_0_and_a_program_argument_named_debug_print_no_traceback(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")
    monkeypatch.setitem(cli.COMMANDS, "tune", broken)
    monkeypatch.setenv("POLYTUNE_DEBUG", "0")
    assert main(["tune", GEMM, "--", "--debug"]) == 3
    assert capsys.readouterr().err == "polytune: internal error: RuntimeError: boom\n"


def test_debug_is_listed_in_every_commands_help(capsys):
    assert "--debug" in cli.build_parser().format_help()
    for command in ("optimize", "tune", "bench", "inspect"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--debug" in capsys.readouterr().out, command


# ---- one set of defaults ------------------------------------------------------------------------------------
def test_optimize_defaults_are_the_apis():
    assert cli._options(_args("optimize", GEMM)) == OptimizeOptions()
    assert cli._options(_args("inspect", GEMM)) == OptimizeOptions()


def test_tune_defaults_are_the_apis():
    args = _args("tune", GEMM)
    assert cli.tune_options(args) == TuneOptions()
    built = cli.build_config(args)
    assert built == BuildConfig(program=Build(cwd=os.getcwd()))


def test_bench_defaults_are_the_apis():
    args = _args("bench", GEMM)
    args.program = Build()
    assert dataclasses.replace(bench.bench_options(args), command="") == bench.BenchOptions()


def test_every_field_of_the_options_is_compared():
    """(The equalities above compare whole dataclasses: a field added to the API without a command-line
    counterpart keeps its default in both; one added to the command line with another default fails them.)"""
    assert {f.name for f in dataclasses.fields(TuneOptions)} >= {"strategy", "workers", "schedule", "cache", "search"}
    assert {f.name for f in dataclasses.fields(TuneOptions().workers)} >= {"jobs"}  # (groups compare field by field)
    assert {f.name for f in dataclasses.fields(TuneOptions().search)} >= {"alpha"}
    assert OptimizeOptions().schedule == _sub("optimize").get_default("schedule") == "model"


# ---- the clone's parent directory ---------------------------------------------------------------------------
def test_importing_from_the_clones_parent_directory_gets_the_package_not_a_namespace(tmp_path):
    os.symlink(ROOT, tmp_path / "polytune")
    proc = subprocess.run([sys.executable, "-c", "import polytune; print(polytune.__version__, "
                                                 "polytune.optimize.__module__)"],
                          capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=""))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [polytune.__version__, "polytune.pipeline"]
