"""The ASReview LAB 3 peer's side: run by the python of .bench-asreview-venv, never imported by the app.

Reads one JSON request on stdin and writes one JSON answer on stdout (bench/_asreview_peer.py sends both):

* ``{"command": "versions"}`` -> the asreview version, the default model's components and parameters, the
  library versions.
* ``{"command": "simulate", "workers": 1, "topics": [{"texts": [...], "labels": [...], "prior": [...],
  "seed": 0}, ...]}`` -> ``{"orders": [[record index, ...], ...]}``, one full reading order per topic.

Each topic is simulated as ``asreview simulate`` does it (asreview/simulation/cli.py): the prior records labelled
first, in the order given, then records top-down until one relevant and one irrelevant are labelled (ASReview's
warm-up cycle), then the default model (``get_ai_config()``, ELAS u4) one record per step, here until every
record is labelled (``n_stop=-1``). Only asreview, numpy, pandas and the standard library are imported.
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from multiprocessing import get_context

import numpy as np
import pandas as pd
from asreview import __version__ as asreview_version
from asreview.learner import ActiveLearningCycle
from asreview.models import get_ai_config
from asreview.models.queriers import TopDown
from asreview.models.stoppers import IsFittable
from asreview.simulation.simulate import Simulate

#: ``Simulate``'s stopper value for "label every record" (the CLI's ``--n-stop -1``).
EVERY_RECORD = -1


def _cycles() -> list[ActiveLearningCycle]:
    """The CLI's two cycles: top-down until both classes are labelled, then the default model."""
    return [
        ActiveLearningCycle(querier=TopDown(), stopper=IsFittable()),
        ActiveLearningCycle.from_meta(get_ai_config()["value"]),
    ]


def simulate_topic(topic: dict) -> list[int]:
    """One topic's full reading order (record indices, the prior first).

    Args:
        topic: ``texts`` (one string per record), ``labels`` (0/1 per record), ``prior`` (record indices
            labelled first, in this order) and ``seed``.

    Returns:
        Every record index once, in the order ASReview screens them.
    """
    # The CLI's --seed: the global numpy state, which LinearSVC (random_state=None) draws from.
    np.random.seed(int(topic.get("seed", 0)))
    texts = list(topic["texts"])
    # Tfidf merges the "title" and "abstract" columns; the candidate's whole text goes in one of them.
    frame = pd.DataFrame({"title": texts, "abstract": [""] * len(texts)})
    sim = Simulate(frame, list(topic["labels"]), _cycles(), stopper=EVERY_RECORD, print_progress=False)
    if topic["prior"]:
        sim.label(list(topic["prior"]))
    sim.review()
    return [int(record) for record in sim._results["record_id"]]


def _simulate_numbered(numbered: tuple[int, dict]) -> list[int]:
    number, topic = numbered
    try:
        return simulate_topic(topic)
    except Exception as exc:  # the topic's number is what the caller needs to find the bad input
        raise RuntimeError(f"topic {number}: {type(exc).__name__}: {exc}") from exc


def simulate_all(topics: list[dict], workers: int = 1) -> list[list[int]]:
    """Every topic's reading order, in the order given; ``workers`` forked processes share them out."""
    numbered = list(enumerate(topics))
    if workers <= 1 or len(topics) <= 1:
        return [_simulate_numbered(item) for item in numbered]
    # Forked: the children inherit the imported asreview instead of importing it again.
    with ProcessPoolExecutor(max_workers=min(workers, len(topics)), mp_context=get_context("fork")) as pool:
        return list(pool.map(_simulate_numbered, numbered))


def versions() -> dict:
    """What the peer is: asreview's version, its default model's components and parameters, the libraries."""
    import scipy
    import sklearn

    config = get_ai_config()
    parts = asdict(config["value"])
    # The model's own stopper is unset; the run's stop rule is said under "stop".
    for key in ("stopper", "stopper_param"):
        parts.pop(key)
    cycle = ActiveLearningCycle.from_meta(config["value"])
    classes = {part: f"{type(model).__module__}.{type(model).__qualname__}"
               for part, model in (("feature_extractor", cycle.feature_extractor), ("classifier", cycle.classifier),
                                   ("querier", cycle.querier), ("balancer", cycle.balancer))}
    return {
        "asreview": asreview_version,
        "model": config["name"],
        "model_label": config["label"],
        **parts,
        "classes": classes,
        "warm_up": "prior records, then top_down until one relevant and one irrelevant are labelled",
        "stop": "none: every record is labelled",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scikit-learn": sklearn.__version__,
        "scipy": scipy.__version__,
    }


def main() -> int:
    """Answer the request on stdin; anything asreview prints goes to stderr, so stdout holds only the answer."""
    request = json.load(sys.stdin)
    out = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            if request["command"] == "versions":
                answer = versions()
            elif request["command"] == "simulate":
                answer = {"orders": simulate_all(request["topics"], int(request.get("workers", 1)))}
            else:
                raise ValueError(f"unknown command {request['command']!r}: expected 'versions' or 'simulate'")
    except Exception as exc:
        traceback.print_exc()
        print(f"asreview peer failed: {exc}", file=sys.stderr)
        return 1
    json.dump(answer, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
