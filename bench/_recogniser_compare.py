"""The spaCy CNN and the transformer recogniser side by side, per kind, on BioRED Dev (``--transformer``).

For each recogniser: its spans alone (``recogniser`` combination: recognised spans + notation rules) and, per
kind, the combination policy with the best exact F1; then, per kind, which (recogniser, policy) wins. The
throughput is the transformer's own (first sight of each dev abstract, this machine's CPU or GPU) and the
whole pipeline's with it (recogniser + dictionary matcher + linker, per-kind policies).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from curation.entities.annotation import POLICIES, Annotator
from curation.entities.matching import Matcher
from curation.learning.recogniser.data import CorpusPart


def compare_recognisers(
    recognisers: Mapping[str, object],
    transformer,
    transformer_path: Path,
    matcher: Matcher,
    linker,
    dev: CorpusPart,
    evaluate: Callable[[Annotator, CorpusPart], dict],
    kinds: tuple[str, ...],
) -> dict:
    """Per-kind exact scores of each recogniser on ``dev`` and the winner per kind.

    Args:
        recognisers: name -> recogniser whose answers are kept per text (bench/entities.py's ``_Memo``);
            the transformer's entry is filled here first, timed.
        transformer: the transformer recogniser itself (no memo): the pipeline's throughput.
        evaluate: bench/entities.py's ``evaluate`` (scores per kind, abstracts/s).
    """
    texts = [d.text for d in dev.documents]
    started = time.perf_counter()
    recognisers["transformer"].recognise(texts)
    alone_s = time.perf_counter() - started
    out: dict = {"transformer": str(transformer_path), "manifest": transformer.manifest.__dict__,
                 "recogniser_alone": {}, "policy_f1": {}, "best": {}}
    for name, recogniser in recognisers.items():
        entry = evaluate(Annotator(matcher, recogniser, linker, combine="recogniser"), dev)
        out["recogniser_alone"][name] = {k: entry["scores"][k]["exact"] for k in kinds if k in entry["scores"]}
        out["policy_f1"][name] = {
            kind: {p: evaluate(Annotator(matcher, recogniser, linker, combine={kind: p}), dev)["scores"][kind]["exact"]
                   ["f1"] for p in POLICIES}
            for kind in kinds
        }
    for kind in kinds:
        pairs = [(f1, name, p) for name, table in out["policy_f1"].items() for p, f1 in table[kind].items()]
        f1, name, policy = max(pairs, key=lambda x: (x[0], x[1] == "cnn", x[2] == "recogniser_first"))
        out["best"][kind] = {"recogniser": name, "policy": policy, "f1": f1}
    own = {k: max(out["policy_f1"]["transformer"][k], key=out["policy_f1"]["transformer"][k].get) for k in kinds}
    pipeline = evaluate(Annotator(matcher, transformer, linker, combine=own), dev)
    out["throughput"] = {
        "device": transformer.device,
        "abstracts": len(texts),
        "recogniser_abstracts_per_s": round(len(texts) / alone_s, 1),
        "pipeline_abstracts_per_s": pipeline["abstracts_per_s"],
        "pipeline_policy": own,
    }
    return out
