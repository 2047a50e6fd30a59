"""``python -m curation bench NAME``: run one benchmark module of bench/."""

from __future__ import annotations

import argparse
import sys

from curation.errors import CurationError

# The modules `python -m curation bench NAME` runs (`python -m bench.NAME`; each writes bench/results/NAME.json).
BENCHMARKS = ("app", "backup", "edel", "entities", "feedback", "first_run", "gene_norm", "gpu_loop", "house", "load",
              "matching", "ranker", "ranker_curve", "ranker_session", "ranker_test", "recogniser_corpora",
              "recogniser_device", "report", "reproduce", "retrieval", "scale", "screening", "suggest", "team")


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``python -m bench.<name>`` as its own process with the arguments after the name.

    The package never imports bench/: a benchmark is a module of its own package, started like any other.
    """
    import subprocess

    from curation.config import PROJECT_ROOT

    path = PROJECT_ROOT / "bench" / f"{args.name}.py"
    if not args.name.replace("_", "").isalnum() or args.name.startswith("_") or not path.is_file():
        raise CurationError(f"benchmark script {path} is missing (see bench/ for the names)")
    return subprocess.run([sys.executable, "-m", f"bench.{args.name}", *args.args], cwd=PROJECT_ROOT).returncode


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add bench to ``sub`` (``common`` is unused: a benchmark takes its own options)."""
    p = sub.add_parser("bench", help="run a benchmark and write its JSON under bench/results/")
    p.add_argument("name", choices=BENCHMARKS)
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed on to the benchmark (try: bench retrieval --help)")
    p.set_defaults(func=cmd_bench)
