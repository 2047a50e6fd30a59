"""The suggest benchmark's latency on a fresh store.

Scoring the co-mentioned pairs at annotation, and drawing suggestions through the workflow.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np


def latency(data_dir: Path, scorer, queries: int = 200, seed: int = 13) -> dict:
    """The product path on a real store: load the sample into a fresh store, score every document's pairs at
    annotation (the scorer activated first), then time :func:`curation.workflows.suggest.suggest` (the served
    search and the suggestions; the Curate page draws them from its own search) on PO queries typed from the KB
    (gene + variant, and gene alone), top 50 documents and the product's default."""
    import random
    import tempfile

    from curation.config import Settings
    from curation.relations.scorer_folder import SCORER_FILE
    from curation.schemas import PO
    from curation.store.opening import open_store
    from curation.workflows.quickstart import load_sample
    from curation.workflows.relation_scoring import activate_scorer
    from curation.workflows.search import Searcher
    from curation.workflows.suggest import DEFAULT_TOP_DOCS, suggest

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "scorer"
        folder.mkdir()
        scorer.save(folder / SCORER_FILE)
        settings = Settings(db_path=Path(tmp) / "store.duckdb", data_dir=data_dir, models_dir=Path(tmp) / "models",
                            cache_dir=Path(tmp) / "cache")
        con = open_store(settings.db_path)
        activate_scorer(con, folder)  # active before the load: documents are scored as they are annotated
        t = time.perf_counter()
        from curation.entities.annotation import Annotator
        from curation.workflows.entities import dictionary_matcher

        report = load_sample(con, settings, annotator=lambda: Annotator(dictionary_matcher(con)))
        out["sample_load_s"] = round(time.perf_counter() - t, 1)
        out["annotation_with_scoring"] = report.annotation.summary() if report.annotation else report.annotation_error
        from curation.relations.active import active_scorer as current
        from curation.relations.stored_pairs import score_documents

        pmids = [p for (p,) in con.execute("SELECT pmid FROM documents ORDER BY pmid").fetchall()]
        t = time.perf_counter()
        scored = score_documents(con, current(con), pmids)
        seconds = time.perf_counter() - t
        out["scoring_at_ingest"] = {"documents": scored.documents, "pairs": scored.pairs,
                                    "seconds": round(seconds, 1),
                                    "documents_per_s_cpu": round(scored.documents / seconds, 1)}
        rows = con.execute("SELECT entities FROM kb_records WHERE schema_name = 'PO' ORDER BY record_id").fetchall()
        typed = []
        for (entities,) in rows:
            values = json.loads(entities)
            if values.get("Gene") and values.get("Variant") and len(values["Variant"]) <= 12:
                typed.append({"Gene": values["Gene"], "Variant": values["Variant"]})
                typed.append({"Gene": values["Gene"]})
        unique = list({json.dumps(v, sort_keys=True): v for v in typed}.values())
        random.Random(seed).shuffle(unique)
        sample = unique[:queries]
        from curation.retrieval.result_rows import default_linker
        from curation.workflows.serving import build_matcher, build_normaliser

        searcher = Searcher(con)
        engine, _ = searcher.engine(PO)
        t = time.perf_counter()
        matcher = build_matcher(con)  # the app's: the corpus analysed ahead (pages/parts/common.py builds it so)
        out["matcher_warm_s"] = round(time.perf_counter() - t, 1)
        linker = default_linker(con, matcher, build_normaliser(matcher))
        suggest(con, engine, linker, matcher, PO, {"Gene": "BRAF", "Variant": "V600E"}, mode="bm25")  # first search
        for top_docs in dict.fromkeys((50, DEFAULT_TOP_DOCS)):  # the 50, and the product's default
            times, counts, new = [], [], []
            for values in sample:
                t = time.perf_counter()
                result = suggest(con, engine, linker, matcher, PO, values, top_docs=top_docs, mode="bm25")
                times.append((time.perf_counter() - t) * 1000)
                counts.append(len(result.suggestions))
                new.append(len(result.new_to_kb))
            times_a = np.array(times)
            out[f"suggest_top{top_docs}"] = {
                "queries": len(times), "top_docs": top_docs, "mode": "bm25 (a fresh store has no dense version)",
                "p50_ms": round(float(np.percentile(times_a, 50)), 1),
                "p95_ms": round(float(np.percentile(times_a, 95)), 1), "max_ms": round(float(times_a.max()), 1),
                "queries_with_suggestions": int(sum(1 for c in counts if c)),
                "mean_suggestions": round(float(np.mean(counts)), 2), "mean_new_to_kb": round(float(np.mean(new)), 2)}
        con.close()
    return out
