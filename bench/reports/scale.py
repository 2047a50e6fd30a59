"""bench/results/scale.json -> the scale section of docs/BENCHMARKS.md and the tables of docs/SCALING.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.reports.readers import Goals, reader
from bench.reports.text import fmt, goals_line
from curation.versions.typed_json import OPTIONAL

#: a system's figures: its settings, recall@50 (a key at a cutoff, so a mapping) and what else its kind measures
SystemFigures = Mapping[str, object]
Latency = Mapping[str, float]  # p50, p95, mean, n


@dataclass(frozen=True)
class Counts:
    vectors: int
    dimension: int
    queries: int
    documents: int
    lexical_queries: int


@dataclass(frozen=True)
class Run:
    """When and where one of scale.py's real-corpus sections was run (each section records its own)."""

    date: str
    cpu_count: int
    load_average_start: tuple[float, ...]
    platform: str


@dataclass(frozen=True)
class EngineBm25:
    """Milvus's own BM25 function against bm25s on the same query texts."""

    top10_overlap_with_bm25s: float
    latency_ms: Latency


@dataclass(frozen=True)
class Milvus(Run):
    """Milvus Lite against FAISS flat on the real corpus."""

    documents: int
    queries: int
    k: int
    systems: Mapping[str, SystemFigures]
    milvus_lite_is_used_for_top10_overlap: str
    engine_bm25: EngineBm25 | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class MilvusSynthetic(Run):
    """Milvus Lite per index kind on synthetic vectors."""

    vectors: int
    queries: int
    k: int
    dimension: int
    systems: Mapping[str, SystemFigures]
    sealing: Mapping[str, object]


@dataclass(frozen=True)
class MilvusServer(Run):
    """A Milvus server process (the milvus package's 2.3.5 standalone) on loopback: the real corpus, and HNSW per
    synthetic size (its figures keyed by the number of vectors)."""

    server: str
    start_s: float
    limits: Mapping[str, str]
    real: Mapping[str, object]  # documents, queries, k, systems (FLAT, HNSW against FAISS flat), used_for_top10_overlap
    synthetic: Mapping[str, SystemFigures]


@dataclass(frozen=True)
class MilvusServerCi(Run):
    """The server tests run as CI runs them, counted from their JUnit report."""

    passed: int
    failed: int
    skipped: int
    pytest_exit_code: int
    run_s: float
    server_tests_s: float
    files: tuple[str, ...]
    tail: tuple[str, ...]


@dataclass(frozen=True)
class ProductRun(Run):
    """The product's query path on one corpus size (the real corpus replicated with new PMIDs)."""

    documents: int
    queries: int
    latency_ms: Latency
    queries_with_results: int
    build_s: Mapping[str, float]
    peak_rss_mb: float
    rss_before_indexes_mb: float
    path: str
    postings: str = field(default="memory", metadata=OPTIONAL)  # memory, or store (the app's annotations table)
    load_average_end: tuple[float, ...] = field(default=(), metadata=OPTIONAL)
    store_concept_read_ms: Mapping[str, float] = field(default_factory=dict, metadata=OPTIONAL)  # before/after sort


@dataclass(frozen=True)
class Ingestion:
    file: Mapping[str, object]
    batch_documents: int
    phases: Mapping[str, Mapping[str, object]]  # phase → its counts, seconds and (when it reads) records_per_s
    kill_and_resume: Mapping[str, object]


@dataclass(frozen=True)
class Encoding:
    model: str
    documents: int
    batch_size: int
    cuda: bool
    runs: Mapping[str, Mapping[str, object]]  # abstracts_per_s printed as written


@dataclass(frozen=True)
class Ingest(Run):
    """PubMed XML ingestion and encoding throughput."""

    params: Mapping[str, object]
    ingestion: Ingestion
    encoding: Encoding


@dataclass(frozen=True)
class SizingRow:
    """All of PubMed on one backend (every figure an estimate from the per-million ones)."""

    disk_gb: float
    build_hours_one_core: float
    ram_gb: float | None = field(default=None, metadata=OPTIONAL)
    machines_of_128_gib: int | None = field(default=None, metadata=OPTIONAL)
    p95_ms_est: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Sizing:
    documents: int
    dimension: int
    machine_gib: int
    rows: Mapping[str, SizingRow]
    product_p95_ms_est: float | None = field(default=None, metadata=OPTIONAL)
    product_p95_ms_per_million: float | None = field(default=None, metadata=OPTIONAL)
    ingest_hours: float | None = field(default=None, metadata=OPTIONAL)
    encode_days_this_cpu: float | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class Scale:
    """bench/scale.py's result: the synthetic dense and BM25 sections, and the real-corpus sections when run."""

    date: str
    params: Mapping[str, object]
    counts: Counts
    systems: Mapping[str, SystemFigures]
    latency_ms: Mapping[str, Latency]
    timings_s: Mapping[str, float]
    memory_mb: Mapping[str, object]  # index → its file and RSS figures; peak_rss_process → MB
    goal: Mapping[str, object] = field(default_factory=dict, metadata=OPTIONAL)  # recall@50, p95_ms, met_by
    goals: Goals = field(default_factory=dict, metadata=OPTIONAL)
    milvus: Milvus | None = field(default=None, metadata=OPTIONAL)
    milvus_synthetic: MilvusSynthetic | None = field(default=None, metadata=OPTIONAL)
    milvus_server: MilvusServer | None = field(default=None, metadata=OPTIONAL)
    milvus_server_ci: MilvusServerCi | None = field(default=None, metadata=OPTIONAL)
    product: ProductRun | None = field(default=None, metadata=OPTIONAL)
    product_runs: Mapping[str, ProductRun] | None = field(default=None, metadata=OPTIONAL)
    product_store_runs: Mapping[str, ProductRun] | None = field(default=None, metadata=OPTIONAL)
    ingest: Ingest | None = field(default=None, metadata=OPTIONAL)
    per_million: Mapping[str, SystemFigures] = field(default_factory=dict, metadata=OPTIONAL)
    sizing_36m: Sizing | None = field(default=None, metadata=OPTIONAL)


read = reader("scale", Scale)


def scale_section(data: Scale) -> list[str]:
    c = data.counts
    lines = [
        "## Scale (`bench/scale.py`)",
        "",
        f"Run {data.date}: {c.vectors:,} synthetic {c.dimension}-d vectors (fitted to MiniLM "
        f"embeddings of the real corpus), {c.queries} queries; {c.documents:,} synthetic abstracts for "
        "BM25. Single-query latency. Details and the path to all of PubMed: [SCALING.md](SCALING.md).",
        "",
        "| system | recall@50 | p50 ms | p95 ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, s in data.systems.items():
        lat = data.latency_ms.get(name, {})
        lines.append(f"| `{name}` | {fmt(s.get('recall@50'), 4)} | {fmt(lat.get('p50'), 2)} | "
                     f"{fmt(lat.get('p95'), 2)} |")
    goal = data.goal
    if goal:
        lines += [
            "",
            f"Goal recall@50 ≥ {goal.get('recall@50')} and p95 ≤ {goal.get('p95_ms')} ms: met by "
            + ", ".join(f"`{m}`" for m in goal.get("met_by", []))
            + ".",
        ]
    return lines + [""] + scale_real_sections(data) + goals_line(data.goals)


def _systems_table(systems: Mapping[str, SystemFigures], quality: tuple[str, str, int], extra: tuple = ()) -> list[str]:
    """A table of ``systems``: a quality column (header, key, digits), p50 / p95 latency, build seconds, ``extra``."""
    columns = [quality[0], "p50 ms", "p95 ms", "build s", *(e[0] for e in extra)]
    rows = ["| system | " + " | ".join(columns) + " |", "| --- |" + " ---: |" * len(columns)]
    for name, system in systems.items():
        lat = system["latency_ms"]
        cells = [fmt(system.get(quality[1]), quality[2]), fmt(lat["p50"], 2), fmt(lat["p95"], 2),
                 fmt(system.get("build_s"), 1), *(fmt(system.get(key), digits) for _, key, digits in extra)]
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return rows


def milvus_lines(data: Scale) -> list[str]:
    """Milvus Lite against FAISS flat on the real corpus (scale.json's ``milvus``)."""
    m = data.milvus
    if not m:
        return []
    lines = [
        f"Milvus Lite against FAISS flat ({m.date[:10]}; {m.documents:,} real abstracts, {m.queries} dev "
        "queries, same MiniLM vectors; top-10):",
        "",
        *_systems_table(m.systems, ("top-10 overlap with FAISS flat", "top10_overlap_with_faiss_flat", 4)),
    ]
    if (e := m.engine_bm25) is not None:
        lines += ["", f"Milvus's own BM25 function against bm25s on the same query texts: top-10 overlap "
                      f"{fmt(e.top10_overlap_with_bm25s, 3)}, p95 {fmt(e.latency_ms['p95'], 2)} ms."]
    return lines + [""]


def milvus_synthetic_lines(data: Scale) -> list[str]:
    """Milvus Lite per index kind on synthetic vectors (scale.json's ``milvus_synthetic``)."""
    m = data.milvus_synthetic
    if not m:
        return []
    lines = [
        f"Milvus Lite per index kind ({m.date[:10]}; {m.vectors:,} synthetic {m.dimension}-d vectors, "
        f"{m.queries} held-out queries, recall@{m.k} against exact search):",
        "",
        *_systems_table(m.systems, ("recall@50", "recall@50", 4), extra=(("file MB", "file_mb", 1),)),
    ]
    return lines + [""]


def milvus_server_lines(data: Scale) -> list[str]:
    """The Milvus server process against FAISS flat (scale.json's ``milvus_server`` and ``milvus_server_ci``)."""
    m, ci = data.milvus_server, data.milvus_server_ci
    lines: list[str] = []
    if m and m.real:
        lines += [f"Milvus server process against FAISS flat ({m.date[:10]}; {m.server}, started in "
                  f"{fmt(m.start_s, 1)} s; {m.real['documents']:,} real abstracts, {m.real['queries']} dev queries, "
                  "same MiniLM vectors; top-10):", "",
                  *_systems_table(m.real["systems"], ("top-10 overlap with FAISS flat",
                                                      "top10_overlap_with_faiss_flat", 4)), ""]
    if m and m.synthetic:
        lines += ["HNSW on the server per synthetic size (one query per call over loopback gRPC, recall@50 against "
                  "exact search, timed once every row was indexed and the collection reloaded; load average of the "
                  "shared machine, 1 min, before → after the timing):", "",
                  "| vectors | recall@50 | p50 ms | p95 ms | insert s | flush + index s | server RSS added MB | "
                  "data folder added MB | load average |", "| ---: |" + " ---: |" * 7 + " --- |"]
        for n in sorted(m.synthetic, key=int):
            r = m.synthetic[n]
            load = r["load_average"]
            lines.append(f"| {int(n):,} | {fmt(r['recall@50'], 4)} | {fmt(r['latency_ms']['p50'], 2)} | "
                         f"{fmt(r['latency_ms']['p95'], 2)} | {fmt(r['insert_s'], 0)} | "
                         f"{fmt(r['seal_and_index_s'], 0)} | {fmt(r['server_rss_mb']['added'], 0)} | "
                         f"{fmt(r['server_data_mb']['added'], 0)} | {load['before'][0]} → {load['after'][0]} |")
        lines.append("")
    if ci:
        lines += [f"The server tests as CI runs them ({ci.date[:10]}; {', '.join(ci.files)}, the server required): "
                  f"{ci.passed} server tests passed, {ci.failed} failed, {ci.skipped} skipped; they took "
                  f"{fmt(ci.server_tests_s, 0)} s of the files' {fmt(ci.run_s, 0)} s.", ""]
    return lines


def product_lines(data: Scale, store: bool = False) -> list[str]:
    """The product's query path per corpus size (scale.json's ``product_runs``, else ``product``; ``store``: the
    runs whose postings came from a store's annotations table, ``product_store_runs``)."""
    runs = data.product_store_runs or {} if store else \
        data.product_runs or ({str(data.product.documents): data.product} if data.product else {})
    if not runs:
        return []
    lines = ["| abstracts | p50 ms | p95 ms | mean ms | queries | peak RSS MB | BM25 build s | date |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for n in sorted(runs, key=int):
        r = runs[n]
        lat = r.latency_ms
        lines.append(f"| {int(n):,} | {fmt(lat['p50'], 0)} | {fmt(lat['p95'], 0)} | {fmt(lat['mean'], 0)} | "
                     f"{r.queries} | {r.peak_rss_mb:,.0f} | {fmt(r.build_s['bm25'], 0)} | {r.date[:10]} |")
    return lines + ["", f"Path: {runs[max(runs, key=int)].path}.", ""]


def ingest_lines(data: Scale) -> list[str]:
    """PubMed XML ingestion and encoding throughput (scale.json's ``ingest``)."""
    i = data.ingest
    if not i:
        return []
    phases = i.ingestion.phases
    runs = i.encoding.runs
    resumed = i.ingestion.kill_and_resume["no_loss_no_duplicate"]
    return [
        f"Ingestion ({i.date[:10]}) of a {i.ingestion.file['records']:,}-record PubMed XML file: "
        + ", ".join(f"{name} {ph['records_per_s']:,.0f} records/s" for name, ph in phases.items()
                    if "records_per_s" in ph)
        + f"; killed and resumed without loss or duplicates: {resumed}."
        + " Encoding (MiniLM, abstracts/s): "
        + ", ".join(f"{name} {r['abstracts_per_s']}" for name, r in runs.items()) + ".",
        "",
    ]


def scale_real_sections(data: Scale) -> list[str]:
    """scale.py's real-corpus sections (Milvus, the product's query path, ingestion and encoding), when run."""
    product = product_lines(data)
    if product:
        product = ["The product's query path (the real corpus replicated with new PMIDs; single queries):", "",
                   *product]
    if store := product_lines(data, store=True):
        product += ["The same path, postings read from a store's annotations table as the app reads them:", "", *store]
    return milvus_lines(data) + milvus_synthetic_lines(data) + milvus_server_lines(data) + product + ingest_lines(data)


SIZING_LABELS = {
    "faiss_flat": "FAISS flat (exact)", "faiss_hnsw": "FAISS HNSW M32, ef 128",
    "faiss_ivfpq_sq8_refine": "FAISS IVF-PQ m48 + SQ8 refine ×8", "milvus_lite_flat": "Milvus FLAT",
    "milvus_lite_hnsw": "Milvus HNSW M32, ef 128", "milvus_lite_ivf_sq8": "Milvus IVF_SQ8",
    "milvus_server_hnsw": "Milvus server HNSW M32, ef 128",
    "bm25s": "BM25 (bm25s, memory-mapped)",
}


def per_million_table(data: Scale) -> str:
    """Measured memory, disk, build time and latency per million abstracts, per backend and index kind."""
    rows = ["| backend and kind | RAM MB / M | disk MB / M | build s / M (1 core) | recall@50 | p95 ms | measured at |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, f in data.per_million.items():
        rows.append(f"| {SIZING_LABELS.get(name, name)} | {fmt(f.get('ram_mb'), 0)} | {fmt(f['disk_mb'], 0)} | "
                    f"{fmt(f['build_s'], 0)} | {fmt(f.get('recall@50'), 4)} | "
                    f"{fmt(f.get('p95_ms_at_measured_size'), 2)} | {f['measured_at']:,} |")
    return "\n".join(rows)


def sizing_table(data: Scale) -> str:
    """All of PubMed, from the per-million figures (every cell an estimate)."""
    sizing = data.sizing_36m
    rows = [f"| {(sizing.documents if sizing else 0) / 1e6:.0f}M abstracts, {sizing and sizing.dimension}-d | RAM GB | "
            f"disk GB | build hours (1 core) | machines of {sizing and sizing.machine_gib} GiB (half for the index) |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for name, r in (sizing.rows if sizing else {}).items():
        machines = "–" if r.machines_of_128_gib is None else r.machines_of_128_gib
        rows.append(f"| {SIZING_LABELS.get(name, name)} | {fmt(r.ram_gb, 1)} | {fmt(r.disk_gb, 1)} | "
                    f"{fmt(r.build_hours_one_core, 1)} | {machines} |")
    return "\n".join(rows)


def dense_table(data: Scale) -> str:
    """The synthetic section's dense systems: recall@50, latency, build time and index size."""
    rows = ["| setting | recall@50 | p50 ms | p95 ms | build s | index file MB |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    memory, timings = data.memory_mb, data.timings_s
    for name, s in data.systems.items():
        lat = data.latency_ms.get(name, {})
        index = s.get("index", "")
        sizes = memory.get(index)
        index_file = sizes.get("index_file") if isinstance(sizes, dict) else None
        rows.append(f"| `{name}` | {fmt(s.get('recall@50'), 4)} | {fmt(lat.get('p50'), 2)} | "
                    f"{fmt(lat.get('p95'), 2)} | {fmt(timings.get(index + '_build'), 1)} | "
                    f"{fmt(index_file, 1)} |")
    return "\n".join(rows)

