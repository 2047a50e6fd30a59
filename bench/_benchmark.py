"""The benchmark every bench/ script runs on: built from the shared data, following the saved split.

The split is decided once and saved in ``bench/splits/benchmark_v2.json`` (concept keys and PMIDs
only); a build without that file makes it. Delete the file only to start a new benchmark version.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from bench._scaffold import goal  # noqa: F401 - benches import goal from here too
from curation.learning.benchmark import (
    FORM_NAMES,
    SPLITS,
    Benchmark,
    BenchmarkError,
    QuerySet,
    build_benchmark,
    normalised,
)
from curation.learning.statistics import per_query, summarise
from index.hits import Run
from index.search import FusionConfig, Mode, Retriever

SPLIT_FILE = Path(__file__).resolve().parent / "splits" / "benchmark_v2.json"


def load_benchmark(data_dir: Path, seed: int = 13, split_file: Path = SPLIT_FILE) -> Benchmark:
    """Build the benchmark; save its split when no saved split exists yet.

    Raises:
        SystemExit: the data cannot give a benchmark (the message says what is missing, not a traceback).
    """
    try:
        benchmark = build_benchmark(data_dir, seed=seed, split_file=split_file)
    except BenchmarkError as exc:
        raise SystemExit(f"cannot build the benchmark: {exc}") from None
    if not split_file.exists():
        split_file.parent.mkdir(parents=True, exist_ok=True)
        benchmark.assignment.save(split_file)
        print(f"saved the benchmark split in {split_file}", file=sys.stderr)
    return benchmark


# --- scoring: per-query figures, means, intervals and paired tests -----------------------

METRICS = ("ndcg@10", "map@50", "recall@50", "entity_recall@10")
EVAL_K = 50
PerQuery = dict[str, dict[str, float]]  # metric -> query id -> value


def system(
    retriever: Retriever, mode: Mode | str, fusion: FusionConfig | None = None
) -> Callable[[Mapping[str, str]], Run]:
    """One system as a {qid: text} → run function (hits cut at EVAL_K); ``fusion`` replaces the retriever's own
    on a copy, so the retriever passed in is never changed."""
    if fusion is not None:
        retriever = replace(retriever, fusion=fusion)
    return lambda queries: retriever.run(queries, mode, EVAL_K)


def score(run: Run, query_set: QuerySet) -> PerQuery:
    """Every metric of one run on one query set, per query (entity recall: queries with answers only)."""
    return {metric: per_query(run, query_set.qrels, metric, query_set.answer_key) for metric in METRICS}


def evaluate_system(
    retrieve: Callable[[Mapping[str, str]], Run], benchmark: Benchmark, split: str,
    forms: Sequence[str] = FORM_NAMES,
) -> dict[str, dict[str, PerQuery]]:
    """form → kind → per-query figures of one system; ``retrieve`` maps {qid: text} to a run."""
    out: dict[str, dict[str, PerQuery]] = {}
    for form in forms:
        queries: dict[str, str] = {}
        for kind in benchmark.kinds():
            queries.update(benchmark.query_set(split, kind, form).queries)
        run = retrieve(queries)  # one call per form: query ids are unique across kinds
        out[form] = {kind: score(run, benchmark.query_set(split, kind, form)) for kind in benchmark.kinds()}
    return out


def pooled(per_kind: Mapping[str, PerQuery]) -> PerQuery:
    """All kinds' queries together (query ids are unique across kinds)."""
    out: PerQuery = {metric: {} for metric in METRICS}
    for figures in per_kind.values():
        for metric, values in figures.items():
            out[metric].update(values)
    return out


def mean_of(figures: PerQuery) -> dict[str, float]:
    return {m: round(sum(v.values()) / len(v), 4) if v else 0.0 for m, v in figures.items()}


def renamed_queries(benchmark: Benchmark, split: str) -> frozenset[str]:
    """The split's query ids whose reworded form renames every entity (no fallback to the canonical name)."""
    return frozenset().union(*(benchmark.query_set(split, kind, "reworded").fresh for kind in benchmark.kinds()))


def report_forms(systems: Mapping[str, Mapping[str, Mapping[str, PerQuery]]], baseline: str = "bm25",
                 seed: int = 13, renamed: frozenset[str] | None = None) -> dict[str, dict[str, dict]]:
    """form → kind (and "all") → {"queries": n, metric: mean, 95% interval and paired tests vs baseline}.

    With ``renamed`` (query ids), each form also gets "all_renamed": every kind pooled over those queries only,
    the same queries in every form, so the forms compare where rewording really changed a name.
    """
    names = list(systems)
    forms = list(next(iter(systems.values())))
    out: dict[str, dict[str, dict]] = {}
    for form in forms:
        kinds = list(systems[names[0]][form])
        out[form] = {}
        for kind in [*kinds, "all", *(["all_renamed"] if renamed is not None else [])]:
            if kind == "all_renamed":
                figures = {s: {m: {q: v for q, v in values.items() if q in renamed}
                               for m, values in pooled(systems[s][form]).items()} for s in names}
            else:
                figures = {s: (pooled(systems[s][form]) if kind == "all" else systems[s][form][kind]) for s in names}
            entry: dict[str, object] = {"queries": len(figures[baseline]["ndcg@10"])}
            for metric in METRICS:
                per_system = {s: figures[s][metric] for s in names}
                if not per_system[baseline]:
                    continue
                entry[metric] = summarise(per_system, baseline, seed=seed)
            out[form][kind] = entry
    return out


# --- leaks and goals ----------------------------------------------------------------------


def leaks(benchmark: Benchmark) -> dict[str, dict[str, dict[str, float]]]:
    """Per evaluated split and form: the share of its positive documents that are training positives, and the
    share of its query texts identical (case and spacing aside) to a training query text of any kind."""
    def texts(split: str, form: str) -> set[str]:
        return {normalised(t) for kind in benchmark.kinds()
                for t in benchmark.query_set(split, kind, form).queries.values()}

    train_docs = {pmid for kind in benchmark.kinds() for qrels in
                  benchmark.query_set("train", kind, "canonical").qrels.values() for pmid in qrels}
    train = set().union(*(texts("train", form) for form in FORM_NAMES))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for split in SPLITS[1:]:
        docs = {pmid for kind in benchmark.kinds() for qrels in
                benchmark.query_set(split, kind, "canonical").qrels.values() for pmid in qrels}
        out[split] = {}
        for form in FORM_NAMES:
            mine = texts(split, form)
            out[split][form] = {
                "positive_docs_in_train": round(len(docs & train_docs) / max(len(docs), 1), 4),
                "identical_query_texts": round(len(mine & train) / max(len(mine), 1), 4),
                "positive_docs": len(docs),
                "query_texts": len(mine),
            }
    return out


def goals_of(benchmark: Benchmark, leak: Mapping) -> dict[str, dict[str, object]]:
    test = leak["test"]
    kinds_with_test = [k for k in benchmark.kinds() if benchmark.query_set("test", k, "canonical").queries]
    return {
        "leak_test_positive_docs_in_train": goal(max(f["positive_docs_in_train"] for f in test.values()), 0, "<="),
        "identical_query_texts_test_train": goal(max(f["identical_query_texts"] for f in test.values()), 0, "<="),
        "gene_variant_test_queries": goal(len(benchmark.query_set("test", "gene_variant", "canonical").queries),
                                          100, ">="),
        "relation_kinds": goal(len(kinds_with_test), 4, ">="),
    }
