"""False absence notices: a search that says "no abstract mentions X" while X is written in the store's text.

The clean setting of bench/suggest.py's realistic section: the held-out split's abstracts (BioRED and BC5CDR
Dev or Test) and HoC distractors ingested as plain text, annotated by the product's dictionary annotator over a
lexicon without any Dev/Test name; the suggestion queries of that split (:func:`bench._suggestions.make_queries`),
each slot typed as papers write it most often. Every query runs through the served search
(:func:`curation.retrieval.relation_search.search_relation`, BM25 mode); a notice that claims absence counts as
false when the slot's typed name is written in a stored abstract (a phrase, case-insensitive, hyphens and spaces
free: :func:`curation.retrieval.written.phrase_regex`), checked over every abstract's text, not the index.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import bench._suggestions as S
from curation.ingest.problems import Problems
from curation.records import Document
from curation.relations import training_data as data


class CleanStore(NamedTuple):
    """The clean setting's pieces, as the served search takes them."""

    documents: dict[str, Document]
    corpora: dict[str, list[Document]]
    matcher: object
    source: object
    linker: object
    engine: object
    seconds: float


def clean_store(data_dir: Path, split: str, vocabularies: bool = True) -> CleanStore:
    """The split's abstracts and HoC as plain text, annotated by the dictionaries of the training side only."""
    from bench._relation_extraction import read_documents
    from bench._suggestions import realistic_lexicon
    from curation.entities.annotation import Annotator
    from curation.entities.matching import Matcher
    from curation.entities.normalise import Normaliser
    from curation.entities.postings import MemoryPostings
    from curation.entities.query import QueryLinker
    from curation.entities.variants import variant_keys
    from curation.ingest.jsonl import read_jsonl
    from curation.relations.training_data import corpus_training_set
    from index.lexical import LexicalIndex
    from index.search import Retriever

    started = time.perf_counter()
    column = {"dev": 2, "test": 3}[split]
    corpora = {name: read_documents(data_dir / files[column - 1]) for name, *files, _ in data.CORPORA}
    training = corpus_training_set(data_dir)
    lexicon = realistic_lexicon(data_dir, list(training.documents.values()), vocabularies)
    hoc_path = data_dir / "hoc" / "hoc_abstracts.jsonl"
    documents = {d.pmid: d for corpus in corpora.values() for d in corpus}
    for d in read_jsonl(hoc_path, Problems(hoc_path, lenient=True)):
        documents.setdefault(d.pmid, d)
    matcher = Matcher(lexicon, cache_size=len(documents) + 16)
    found = Annotator(matcher).annotate([d.text for d in documents.values()])
    source = MemoryPostings(dict(zip(documents, found, strict=True)))
    keys = {k for text in source.texts("variant") for k in variant_keys(text)}
    linker = QueryLinker(lexicon, Normaliser(lexicon).fit(), None, keys)
    engine = Retriever(lexical=LexicalIndex.build(list(documents.values())), version="bm25")
    return CleanStore(documents, corpora, matcher, source, linker, engine, time.perf_counter() - started)


def queries(store: CleanStore) -> list[tuple[str, object, dict[str, str]]]:
    """(qid, schema, slot → typed name) per suggestion query of the split, as bench/suggest.py types them."""
    from bench.suggest import _schema, _typed_name

    made = {"biored": S.make_queries(store.corpora["biored"], "biored"),
            "bc5cdr": S.make_queries(store.corpora["bc5cdr"], "bc5cdr", cid_only=True)}
    return [(q.qid, _schema(q), {slot: _typed_name(cid, store.corpora[corpus]) for slot, _, cid in q.slots})
            for corpus, qs in made.items() for q in qs]


def absence_notices(store: CleanStore, searches: Sequence[tuple[str, object, Mapping[str, str]]]) -> dict:
    """Every notice of the searches that claims absence, how many are false (the name is written), the notes that
    say a name is written but not linked, and what the text check costs (``written_in`` per distinct name)."""
    from curation.retrieval.relation_search import SearchOptions, search_relation
    from curation.retrieval.written import phrase_regex, written_in

    def fetch(pmids):
        return {p: store.documents[p] for p in pmids if p in store.documents}

    texts = [d.text for d in store.documents.values()]
    written: dict[str, int] = {}

    def count(name: str) -> int:  # every abstract's text, not the index: the benchmark's truth
        if name not in written:
            regex = phrase_regex(name)
            written[name] = sum(1 for t in texts if regex.search(t)) if regex is not None else 0
        return written[name]

    claims, unlinked, unchecked = Counter(), Counter(), Counter()
    false: dict[str, dict] = {}
    searched, checked = [], {}
    for _, schema, values in searches:
        started = time.perf_counter()
        result = search_relation(store.engine, store.linker, store.matcher, store.source, fetch, schema, values,
                                 SearchOptions(mode="bm25", k=20))
        searched.append(time.perf_counter() - started)
        for concept in result.concepts:
            said = [p for p in result.problems if f"{concept.slot} '{concept.typed}'" in p]
            if concept.typed not in checked:  # what the text check costs, once per name
                started = time.perf_counter()
                written_in(store.engine.lexical, fetch, concept.typed)
                checked[concept.typed] = time.perf_counter() - started
            unlinked[concept.typed] += any(" is written in " in p for p in said)
            unchecked[concept.typed] += any(p.startswith("No abstract is linked to ") for p in said)
            absence = [p for p in said if p.startswith("No abstract mentions ")]
            if not absence:
                continue
            claims[concept.typed] += 1
            if n := count(concept.typed):
                entry = false.setdefault(concept.typed, {"slot": concept.slot, "written_in": n, "queries": 0,
                                                         "notice": absence[0]})
                entry["queries"] += 1
    return {"queries": len(searches), "absence_notices": sum(claims.values()),
            "false_absence_notices": sum(e["queries"] for e in false.values()),
            "false_names": dict(sorted(false.items())),
            "written_not_linked_notes": sum(unlinked.values()), "not_checkable_notes": sum(unchecked.values()),
            "search_ms": _quantiles(searched), "text_check_ms": _quantiles(list(checked.values())),
            "names_checked": len(checked)}


def _quantiles(seconds: Sequence[float]) -> dict[str, float | None]:
    ordered = sorted(seconds)
    if not ordered:
        return {"p50": None, "p95": None, "max": None}
    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": at(0.5), "p95": at(0.95), "max": round(1000 * ordered[-1], 2)}


def measure(data_dir: Path, splits: Sequence[str] = ("dev", "test")) -> dict:
    """:func:`absence_notices` on each split's clean store; ``goal_value``: false notices on the last split."""
    out: dict = {"splits": {}}
    for split in splits:
        store = clean_store(data_dir, split)
        figures = absence_notices(store, queries(store))
        out["splits"][split] = {**figures, "documents": len(store.documents), "setup_s": round(store.seconds, 1)}
        print(f"absence notices on {split}: {figures['false_absence_notices']} false of {figures['absence_notices']}"
              f" over {figures['queries']} queries; text check {figures['text_check_ms']} ms", flush=True)
    out["split"] = splits[-1]
    out["goal_value"] = out["splits"][splits[-1]]["false_absence_notices"]
    out["queries"] = ("the suggestion queries of BioRED and BC5CDR (bench/_suggestions.make_queries) of each split, "
                      "each slot typed as its abstracts write it most often; the store: that split's abstracts and "
                      "HoC as plain text, the dictionaries of the training side (bench/suggest.py's realistic setting)")
    return out


def absence_only(data_dir: Path, out: Path) -> int:
    """``bench/entities.py --absence-only``: :func:`measure` merged into the last full run's JSON (``out``), whose
    other figures are kept; its goal ``false_absence_notices`` set from this run."""
    from bench._scaffold import goal

    figures = measure(data_dir)
    # read after the minutes measure takes: another bench may have written its figures into the same file
    result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"goals": {}}
    result["absence_notices"] = {**figures, "date": datetime.now(UTC).isoformat(timespec="seconds")}
    result["goals"]["false_absence_notices"] = goal(figures["goal_value"], 0, "<=")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"false_absence_notices {figures['goal_value']}; wrote {out}")
    return 0
