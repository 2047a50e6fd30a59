"""The Curate page in a real browser: query → rendered results, click → stored decision; and screenshots.

Usage::

    python -m bench.app [--data-dir D] [--pairs 20] [--seed 13] [--out bench/results/app.json]
                        [--screenshots docs/screenshots] [--models-dir models]

Builds a store in a temporary folder (CIViC's current export, BioRED and BC5CDR), starts
``streamlit run app.py`` on it, with an empty model registry unless ``--models-dir`` names one
(so the app ranks with BM25 alone), and drives headless Chromium (``bench/_browser.py``, the
code of the browser test).

The gene–variant pairs come from BioRED's variant mentions: the type A records of
:mod:`curation.learning.benchmark` (a variant related to a chemical, given the gene mentioned nearest
to it), one per distinct (gene name, variant name), ``--pairs`` of them drawn with ``--seed``.
No CIViC record has its abstract in this corpus, so CIViC's pairs would time queries whose
relevant abstract is never there. For each pair, in a fresh browser session:

* **query → results**: Gene is typed and its search left to finish, Variant is typed, and the
  clock runs from pressing Enter in the Variant slot until the query line and a result link
  of that query are in the page (polled every animation frame);
* **click → stored**: "Complete evidence" on the first result, until that result's card says
  "bench: Complete evidence". The app stores the decision in the button's callback, before
  the rerun that draws the caption; the rows are checked in DuckDB once the server is gone.

A warm-up session (BRAF, "valine for glutamate"; not counted) pays for the first page load (BM25 index), the
first search (dictionaries and matcher) and the name normaliser's first fuzzy lookup; they are reported
under ``timings_s``. Then every page of the app's navigation is saved as ``<page>.png``
(viewport 1280×900) for the README, Curate showing BRAF V600E. Writes one JSON: date, params,
counts, latency_ms, timings_s, and per_pair_ms.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from bench import _scaffold as scaffold
from bench._browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    chromium,
    decide,
    nav_titles,
    open_app,
    open_page,
    result_pmids,
    screenshot,
    search,
    set_curator,
    slug,
)
from bench._server import app_server, build_store
from curation.grades import Grade
from curation.ingest.problems import Problems
from curation.ingest.pubtator import read_pubtator
from curation.learning.benchmark.records import derive_records
from curation.store.decisions import list_decisions
from curation.store.opening import open_store

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHOTS = ROOT / "docs" / "screenshots"
CURATOR = "bench"
# Free text that only fuzzy matching resolves: the normaliser builds its n-gram index on the first
# such lookup (~1.2 s), which the warm-up pays instead of a measured pair.
WARM_UP = ("BRAF", "valine for glutamate")
SHOWN = ("BRAF", "V600E")  # the Curate screenshot
SCREENSHOT_BUDGET = 300_000  # bytes per PNG, so the README stays light


class Pair(NamedTuple):
    """A gene–variant pair and the BioRED abstracts it was derived from."""

    gene: str
    variant: str
    pmids: frozenset[str]


def biored_pairs(data_dir: Path, n: int, seed: int) -> tuple[list[Pair], int]:
    """``n`` distinct (gene, variant) names of BioRED's type A records, and how many there were."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in sorted((data_dir / "biored").glob("*.PubTator")):
        for document in read_pubtator(path, Problems(path)):
            records, _ = derive_records(document)
            for record in records:
                if record.kind == "A" and record.gene_name.strip() and record.second_name.strip():
                    found.setdefault((record.gene_name.strip(), record.second_name.strip()), set()).add(record.pmid)
    names = sorted(found)
    chosen = random.Random(seed).sample(names, min(n, len(names)))
    return [Pair(gene, variant, frozenset(found[(gene, variant)])) for gene, variant in chosen], len(names)


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000.0
    if not len(ms):
        return {}
    return {
        "p50": round(float(np.percentile(ms, 50)), 1),
        "p95": round(float(np.percentile(ms, 95)), 1),
        "min": round(float(ms.min()), 1),
        "max": round(float(ms.max()), 1),
    }


def take_screenshots(page: Page, url: str, out_dir: Path) -> dict[str, int]:
    """Curate with BRAF V600E's results, then every other page of the navigation: file name → bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    open_app(page, url)
    set_curator(page, "ana")
    search(page, *SHOWN)
    sizes: dict[str, int] = {}
    shot = screenshot(page, out_dir / "curate.png")
    sizes[shot.name] = shot.stat().st_size
    for title in nav_titles(page):
        if slug(title) == "curate":
            continue
        try:
            open_page(page, title)
        except PlaywrightError as exc:  # a page still busy: picture it anyway, and say so
            print(f"note: {title} not settled ({str(exc).splitlines()[0]}); screenshot taken anyway", file=sys.stderr)
        shot = screenshot(page, out_dir / f"{slug(title)}.png")
        sizes[shot.name] = shot.stat().st_size
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = scaffold.parser(__doc__, "app", data_dir=True, seed=13)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--screenshots", type=Path, default=DEFAULT_SHOTS, help="folder for the pages' PNGs")
    parser.add_argument(
        "--models-dir", type=Path, default=None, help="a model registry for the app (default: none, BM25 alone)"
    )
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"no Chromium at {CHROMIUM}: apt-get install chromium", file=sys.stderr)
        return 2
    if not (args.data_dir / "biored" / "Train.PubTator").exists():
        print(f"no BioRED under {args.data_dir}; pass --data-dir", file=sys.stderr)
        return 2

    started = time.perf_counter()
    timings: dict[str, float] = {}
    pairs, candidates = biored_pairs(args.data_dir, args.pairs, args.seed)
    query_s: list[float] = []
    click_s: list[float] = []
    clicked: dict[tuple[str, str], str] = {}  # (gene, variant) → PMID judged
    per_pair: list[list] = []  # gene, variant, query ms, click ms
    source_in_results = 0
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-app-") as tmp:
        work = Path(tmp)
        db, models = work / "store.duckdb", args.models_dir or work / "models"
        models.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        store_counts = build_store(db, args.data_dir)
        timings["store_build"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        with app_server(db, models, work / "server.log") as url:
            timings["server_start"] = round(time.perf_counter() - t0, 3)
            with chromium(work / "profile") as context:
                page = context.new_page()
                t0 = time.perf_counter()
                open_app(page, url)
                timings["first_page_load"] = round(time.perf_counter() - t0, 3)
                set_curator(page, CURATOR)
                t0 = time.perf_counter()
                search(page, *SHOWN)
                timings["warm_up_search"] = round(time.perf_counter() - t0, 3)
                load_before = os.getloadavg()[0]
                t0 = time.perf_counter()
                for pair in pairs:
                    try:
                        open_app(page, url)  # a fresh session: slots empty, nothing cached in the page
                        set_curator(page, CURATOR)
                        query_s.append(search(page, pair.gene, pair.variant))
                        pmids = result_pmids(page)
                        source_in_results += bool(pair.pmids & set(pmids))
                        click_s.append(decide(page, pmids[0], CURATOR))
                        clicked[(pair.gene, pair.variant)] = pmids[0]
                        per_pair.append([pair.gene, pair.variant, round(query_s[-1] * 1000), round(click_s[-1] * 1000)])
                    except PlaywrightError as exc:
                        failures.append(f"{pair.gene} {pair.variant}: {str(exc).splitlines()[0]}")
                timings["measured_pairs"] = round(time.perf_counter() - t0, 3)
                load_after = os.getloadavg()[0]
                t0 = time.perf_counter()
                sizes = take_screenshots(context.new_page(), url, args.screenshots)
                timings["screenshots"] = round(time.perf_counter() - t0, 3)
        # The server is gone: the store is free again (DuckDB allows one process per file).
        con = open_store(db, read_only=True)
        try:
            decisions = list_decisions(con, curator=CURATOR)
        finally:
            con.close()
    stored = {
        (dict(d.query_entities).get("Gene", ""), dict(d.query_entities).get("Variant", "")): d.pmid
        for d in decisions
        if d.grade == Grade.COMPLETE
    }
    confirmed = sum(stored.get(key) == pmid for key, pmid in clicked.items())
    timings["total"] = round(time.perf_counter() - started, 3)

    too_big = {name: size for name, size in sizes.items() if size > SCREENSHOT_BUDGET}
    report = {
        "date": scaffold.now(),
        "params": {
            "data_dir": str(args.data_dir),
            "store": "CIViC civic_evidence_2026-05.tsv + BioRED (Train, Dev, Test) + BC5CDR (3 files)",
            "models_dir": str(args.models_dir) if args.models_dir else "none: the Curate page ranks with BM25 alone",
            "pairs_source": "BioRED variant mentions: the type A records of curation.learning.benchmark "
            "(variant related to a "
            "chemical, gene = nearest gene mention), distinct (gene name, variant name), sampled with the seed; "
            "no CIViC record has its abstract in this corpus",
            "pairs": [[p.gene, p.variant] for p in pairs],
            "seed": args.seed,
            "results_per_query": 20,
            "query_to_results": "Enter in the Variant slot (Gene already searched) → query line and first result "
            "link of the new run in the page (requestAnimationFrame polling through Playwright)",
            "click_to_stored": "click on 'Complete evidence' of the first result → its caption "
            "'bench: Complete evidence' in the page (the decision is written before that rerun); rows "
            "confirmed in DuckDB after the server stopped",
            "warm_up": f"{WARM_UP[0]} {WARM_UP[1]} in a first session, not counted (pays the matcher's build and "
            "the normaliser's first fuzzy lookup; timings_s.warm_up_search is from typing the gene to its results)",
            "browser": f"{CHROMIUM} (headless), viewport {VIEWPORT['width']}x{VIEWPORT['height']}, "
            + " ".join(CHROMIUM_ARGS),
            "server": "streamlit run app.py on 127.0.0.1, file watcher off, same machine as the browser",
            **scaffold.machine("cpus"),
            "load_average_1min_before_and_after": [round(load_before, 2), round(load_after, 2)],
            **scaffold.machine("python"),
        },
        "counts": {
            "store_documents": store_counts["documents"],
            "store_kb_records": store_counts["kb_records"],
            "candidate_pairs": candidates,
            "pairs": len(pairs),
            "queries_timed": len(query_s),
            "clicks_timed": len(click_s),
            "decisions_confirmed_in_store": confirmed,
            "source_pmid_in_results": source_in_results,
            "failures": failures,
            "screenshots": sizes,
            "screenshots_over_budget": too_big,
        },
        "latency_ms": {"query_to_results": percentiles(query_s), "click_to_stored": percentiles(click_s)},
        "timings_s": timings,
        "per_pair_ms": per_pair,
    }
    scaffold.write(args.out, report, echo={"latency_ms": report["latency_ms"], "counts": report["counts"]})
    if confirmed != len(clicked) or failures:
        print(f"{len(clicked) - confirmed} decisions not found in the store; {len(failures)} pairs failed",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
