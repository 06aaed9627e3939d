"""The README's sample outputs: regenerated, or checked against what the tool prints now.

    python3 benchmarks/readme_samples.py            # run every sample's command, write its output into README.md
    python3 benchmarks/readme_samples.py --check    # exit 1 where a sample is stale (tests/test_readme_samples.py)

A sample is the fenced block after a line ``<!-- sample: NAME -->`` in README.md. Regenerating runs the
sample's command from the clone's root and replaces the block's text with what it printed (stdout and stderr,
as a terminal shows them). Timings differ from run to run, so ``--check`` compares what does not depend on
them: the command line (the README shows it, in the block or in the quick start) and the shape of every line
(numbers, units and padding aside, ``shape``): each line of the README's sample must have the shape of a line
that a fresh, smaller run of the same command prints (``Sample.quick``), or of a line that appears only under
some timings or loads (``CONDITIONAL``: notes, warnings, which of the seed and the best was adopted). A sample
whose output depends on no timing (``Sample.exact``: optimize's) must be what its command prints now, line for line.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")


@dataclass(frozen=True)
class Sample:
    name: str  # the marker: <!-- sample: NAME -->
    command: str  # as the README shows it, run from the clone's root
    quick: str  # the same command at a smaller size: lines of the same shapes, in seconds
    prompt: bool = False  # the block starts with "$ COMMAND" (else the command is in the quick start above it)
    exact: bool = False  # its output depends on no timing: the README's lines are the command's, all of them


SAMPLES = (
    Sample("quickstart-bench", "polytune bench benchmarks/pluto/gemm.c --compilers gcc --max-evals 6",
           "polytune bench benchmarks/pluto/gemm.c --compilers gcc --max-evals 1 --runs 1 -D N=32"),
    Sample("tune-jacobi", "polytune tune benchmarks/pluto/jacobi-2d.c -DN=300 -DTSTEPS=10 --threads 1 --max-evals 4 "
                          "--no-cache",
           "polytune tune benchmarks/pluto/jacobi-2d.c -DN=40 -DTSTEPS=2 --threads 1 --max-evals 2 --runs 2 "
           "--no-cache", prompt=True),
    Sample("optimize-smooth", "polytune optimize benchmarks/realc_examples/smooth.c -o /tmp/smooth.opt.c",
           "polytune optimize benchmarks/realc_examples/smooth.c -o /tmp/smooth.opt.c", prompt=True, exact=True),
)

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TIME = re.compile(r"# (?:s|ms|us|ns)\b")

# Lines that some timings or loads print and others do not (masked by shape): each must still have one of
# these forms, so that a sample line in an old format fails
CONDITIONAL = tuple(re.compile(p) for p in (
    r"^polytune: note: load average # on # cores: the programs run with OMP_WAIT_POLICY=passive ",
    r"^polytune: warning: load average # on # cores at the start: ",
    r"^polytune: warning: timings are noisy \(",
    r"^polytune: warning: the best variant is #x slower than the original program \(T against T\): ",
    r"^polytune: warning: the adopted best is slower than the seed ",
    r"^polytune: warning: the tuned configuration is not the fastest when its program is run again ",
    r"^polytune: warning: optimize's default is faster than ",
    r"^\w[\w-]*: warning: [\w ()]+ is (?:#x )?slower than ",
    r"^\[ *#\] \w+ +[\w#+=\- ]+ (?:T|pruned|wrong_answer|timeout|runtime|compile)(?: \((?:cached|again)\))? fastest "
    r"(?:T [\w#+=\- ]+|-) evals # T(?: on \S+)?$",
    r"^now: ",
    r"^seed [\w#+=\- ]+: T \((?:# run|median of # runs)\)$",
    r"^best = the seed [\w#+=\- ]+: T \((?:# run|median of # runs)\)(?: \(measured again before the search "
    r"stopped; its first #: T\))?; no configuration was adopted over it$",
    r"^(?:best|search's best) [\w#+=\- ]+: T \((?:# run|median of # runs)\)(?:, adopted: (?:significantly )?faster "
    r"(?:by ranks )?than the seed \(.*\)|, adopted although .*)?$",
    r"^best = the \w+ [\w#+=\- ]+: kept, the search's best was slower when the programs were run again \(# "
    r"interleaved runs each: .*\)$",
    r"^fastest measured [\w#+=\- ]+: T \((?:# run|median of # runs)\), not adopted: .*faster than (?:the best|the "
    r"search's best) \(.*\)$",
    r"^speedup over (?:seed|optimize's default|original): #x$",
    r"^re-measured in the program \(",
))


def shape(line: str) -> str:
    """A line with its numbers, units and padding taken out: what does not depend on the timings."""
    s = _NUMBER.sub("#", line.strip())
    s = _TIME.sub("T", s)
    s = re.sub(r"-{2,}", "--", s)
    return re.sub(r"\s+", " ", s)


def run(command: str) -> str:
    """What *command* prints from the clone's root (stdout and stderr as a terminal interleaves them)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = [sys.executable, "-m", "polytune", *command.split()[1:]]
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"readme_samples: `{command}` exited {proc.returncode}:\n{proc.stdout}")
    return proc.stdout


_BLOCK = re.compile(r"(<!-- sample: (?P<name>[\w-]+) -->\n```\n)(?P<body>.*?)(```)", re.S)


def blocks(text: str) -> dict[str, str]:
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def regenerate(names: set[str] | None = None) -> None:
    with open(README, encoding="utf-8") as f:
        text = f.read()
    for sample in SAMPLES:
        if names and sample.name not in names:
            continue
        print(f"readme_samples: {sample.command}", file=sys.stderr, flush=True)
        out = run(sample.command)
        body = (f"$ {sample.command}\n" if sample.prompt else "") + out.rstrip("\n") + "\n"
        text, n = _BLOCK.subn(lambda m, s=sample, b=body: m.group(1) + b + m.group(4)
                              if m.group("name") == s.name else m.group(0), text)
    with open(README, "w", encoding="utf-8") as f:
        f.write(text)


def problems(text: str, fresh: dict[str, str]) -> list[str]:
    """What is stale in README *text*, given each sample's *fresh* output (its quick command's)."""
    out = []
    found = blocks(text)
    for sample in SAMPLES:
        body = found.get(sample.name)
        if body is None:
            out.append(f"{sample.name}: no block after <!-- sample: {sample.name} --> in README.md")
            continue
        lines = body.splitlines()
        if sample.prompt:
            if not lines or lines[0] != f"$ {sample.command}":
                out.append(f"{sample.name}: the block does not start with '$ {sample.command}'")
            lines = lines[1:]
        elif sample.command not in text:
            out.append(f"{sample.name}: README.md does not show the command '{sample.command}'")
        if sample.exact:
            if lines != fresh.get(sample.name, "").splitlines():
                out.append(f"{sample.name}: the block is not what `{sample.command}` prints now")
            continue
        known = {shape(ln) for ln in fresh.get(sample.name, "").splitlines()}
        for ln in lines:
            s = shape(ln)
            if s and s not in known and not any(c.search(s) for c in CONDITIONAL):
                out.append(f"{sample.name}: a line the tool no longer prints: {ln.strip()!r}")
    return out


def check() -> list[str]:
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return problems(text, {s.name: run(s.quick) for s in SAMPLES})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="only check the samples (exit 1 where one is stale)")
    p.add_argument("names", nargs="*", help="regenerate only these samples")
    args = p.parse_args(argv)
    if args.check:
        found = check()
        print("\n".join(found) if found else "readme_samples: the README's samples are current")
        return 1 if found else 0
    regenerate(set(args.names) or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
