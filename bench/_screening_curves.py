"""The screening benchmark's figure: relevant found against abstracts read, per method, on the test topics with the
largest pools (``docs/screening_curves.png``, shown in docs/BENCHMARKS.md)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

FIGURE = Path(__file__).resolve().parent.parent / "docs" / "screening_curves.png"


def curves(pools: Mapping[str, dict], per_topic: Mapping[str, Mapping], product: str, n: int = 3) -> dict:
    """Per method, the reads at which each relevant candidate was found, for the ``n`` test topics with the largest
    pools (the figure in docs/BENCHMARKS.md)."""
    chosen = sorted((t for t, e in pools.items() if "store" in e), key=lambda t: -len(pools[t]["store"].gains))[:n]
    peer = "asreview_ranked" if product == "learner_ranked" else "asreview"
    return {t: {"name": pools[t]["topic"].name, "candidates": len(pools[t]["store"].gains),
                **{m: per_topic[m][t]["found_at"] for m in ("static", product, peer) if t in per_topic.get(m, {})}}
            for t in chosen}


def figure(curves: Mapping[str, Mapping], path: Path) -> None:
    """Relevant found against read, one panel per topic (matplotlib, written beside docs/BENCHMARKS.md)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4), squeeze=False)
    for ax, (topic_id, curve) in zip(axes[0], curves.items(), strict=True):
        n = curve["candidates"]
        reads = np.arange(1, n + 1)
        for method, style in (("static", ":"), ("asreview", "--"), ("asreview_ranked", "--"), ("learner", "-"),
                              ("learner_ranked", "-")):
            if method in curve:
                found = np.searchsorted(np.asarray(curve[method]), reads, side="right")
                ax.plot(reads, found, style, label=method)
        total = len(curve["static"])
        ax.plot([0, n], [0, total], color="grey", linewidth=0.8, label="random")
        ax.set_title(f"{curve['name']} ({topic_id}): {total} of {n}", fontsize=9)
        ax.set_xlabel("abstracts read")
        ax.set_ylabel("relevant found")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
