"""Snapshots: what a training run reads, exported from the store into plain files.

DuckDB lets one process write a file and no other process read it meanwhile, so a training
worker never opens the store: the app (the only writer) exports a snapshot folder, the worker
reads it. A snapshot holds the schemas, KB records, documents, gold mentions, dictionary
synonyms, decisions and the stored annotations (the concept index: what EDEL's g(e, d) reads
besides the text) as JSON lines, and a manifest with counts and a content hash (the "data
snapshot hash" a model's manifest cites). A snapshot written before annotations were stored
has no ``annotations.jsonl`` and loads with none.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.entities.annotation import Annotation
from curation.errors import CurationError
from curation.files import write_atomic
from curation.grades import Grade
from curation.records import Decision, Document, KBRecord, Mention, Synonym
from curation.schemas import BUILTIN, RelationSchema, schema_from_dict
from curation.store.annotations import list_annotations
from curation.store.base import list_schemas, stats
from curation.store.corpus import iter_documents, list_mentions, list_synonyms
from curation.store.decisions import list_decisions
from curation.store.kb import list_kb_records

FILES = ("schemas", "kb_records", "documents", "mentions", "synonyms", "decisions")
OPTIONAL_FILES = ("annotations",)


class SnapshotError(CurationError):
    """A snapshot folder that is missing, incomplete or corrupted."""


@dataclass(frozen=True)
class Snapshot:
    """The data of one training run, loaded."""

    schemas: tuple[RelationSchema, ...]
    records: tuple[KBRecord, ...]
    documents: dict[str, Document]
    synonyms: tuple[Synonym, ...]
    decisions: tuple[Decision, ...]
    digest: str
    annotations: dict[str, tuple[Annotation, ...]] = field(default_factory=dict)

    def schema(self, name: str) -> RelationSchema:
        for schema in self.schemas:
            if schema.name == name:
                return schema
        raise SnapshotError(f"schema '{name}' is not in the snapshot; known: {[s.name for s in self.schemas]}")


def _write_jsonl(path: Path, rows: Iterable[dict]) -> str:
    digest = hashlib.sha256()
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            line = json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
            digest.update(line.encode())
            handle.write(line)
    return digest.hexdigest()


def _read_jsonl(path: Path) -> Iterator[dict]:
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SnapshotError(f"{path}, line {number}: corrupted ({exc.msg})") from None
    except FileNotFoundError:
        raise SnapshotError(f"snapshot file {path} is missing") from None


def export_snapshot(con: duckdb.DuckDBPyConnection, folder: str | Path) -> dict[str, object]:
    """Write the store's training data into ``folder`` (created; written via a temporary name)."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    mentions: dict[str, list[Mention]] = {}
    for mention in list_mentions(con):
        mentions.setdefault(mention.pmid, []).append(mention)
    digests = {
        "schemas": _write_jsonl(tmp / "schemas.jsonl", (s.to_dict() for s in list_schemas(con))),
        "kb_records": _write_jsonl(tmp / "kb_records.jsonl", (asdict(r) for r in list_kb_records(con))),
        "documents": _write_jsonl(
            tmp / "documents.jsonl",
            ({"pmid": d.pmid, "title": d.title, "abstract": d.abstract, "source": d.source}
             for d in iter_documents(con)),
        ),
        "mentions": _write_jsonl(tmp / "mentions.jsonl", (asdict(m) for ms in mentions.values() for m in ms)),
        "synonyms": _write_jsonl(tmp / "synonyms.jsonl", (asdict(s) for s in list_synonyms(con))),
        "decisions": _write_jsonl(tmp / "decisions.jsonl",
                                  (asdict(d) for d in list_decisions(con, include_superseded=True))),
        "annotations": _write_jsonl(tmp / "annotations.jsonl", _annotations(con)),
    }
    manifest = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "digest": hashlib.sha256("".join(digests[f] for f in (*FILES, *OPTIONAL_FILES)).encode()).hexdigest(),
        "files": digests,
        "counts": stats(con),
    }
    write_atomic(tmp / "manifest.json", json.dumps(manifest, indent=2, default=str))
    if folder.exists():
        raise SnapshotError(f"{folder} already exists; snapshots are never overwritten")
    tmp.replace(folder)
    return manifest


def _annotations(con: duckdb.DuckDBPyConnection) -> Iterator[dict]:
    """The stored predicted annotations (gold mentions travel in mentions.jsonl), document by document."""
    pmids = [d.pmid for d in iter_documents(con)]
    for start in range(0, len(pmids), 2000):
        for pmid, rows in list_annotations(con, pmids[start : start + 2000]).items():
            for row in rows:
                if row.source != "gold":
                    yield {"pmid": pmid, "start": row.start, "end": row.end, "text": row.text,
                           "type": row.entity_type, "concept_id": row.concept_id, "canonical": row.canonical,
                           "confidence": row.confidence, "source": row.source}


def load_snapshot(folder: str | Path) -> Snapshot:
    """Read a snapshot folder.

    Raises:
        SnapshotError: a file is missing or corrupted (the message names it).
    """
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except FileNotFoundError:
        raise SnapshotError(f"{folder} is not a snapshot (no manifest.json)") from None
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{folder}/manifest.json is corrupted ({exc.msg})") from None
    schemas = []
    for row in _read_jsonl(folder / "schemas.jsonl"):
        schemas.append(BUILTIN[row["name"]] if row["name"] in BUILTIN else schema_from_dict(row, "snapshot schema"))
    records = tuple(
        KBRecord(
            schema=r["schema"], entities=tuple(map(tuple, r["entities"])), pmid=r["pmid"], source=r["source"],
            source_id=r["source_id"], attributes=tuple(map(tuple, r["attributes"])),
        )
        for r in _read_jsonl(folder / "kb_records.jsonl")
    )
    mentions: dict[str, list[Mention]] = {}
    for m in _read_jsonl(folder / "mentions.jsonl"):
        mentions.setdefault(m["pmid"], []).append(Mention(**m))
    documents = {
        d["pmid"]: Document(d["pmid"], d["title"], d["abstract"], d["source"], tuple(mentions.get(d["pmid"], ())))
        for d in _read_jsonl(folder / "documents.jsonl")
    }
    synonyms = tuple(Synonym(**s) for s in _read_jsonl(folder / "synonyms.jsonl"))
    decisions = tuple(
        Decision(**{**d, "query_entities": tuple(map(tuple, d["query_entities"])), "grade": Grade(d["grade"])})
        for d in _read_jsonl(folder / "decisions.jsonl")
    )
    annotations: dict[str, list[Annotation]] = {}
    if (folder / "annotations.jsonl").exists():
        for a in _read_jsonl(folder / "annotations.jsonl"):
            pmid = a.pop("pmid")
            annotations.setdefault(pmid, []).append(Annotation(**a))
    return Snapshot(tuple(schemas), records, documents, synonyms, decisions, manifest["digest"],
                    {pmid: tuple(found) for pmid, found in annotations.items()})


def store_snapshot(con: duckdb.DuckDBPyConnection) -> Snapshot:
    """The store's training data, exported to a temporary folder and read back: a build in this process reads what
    a worker would (the build never reads the store)."""
    with tempfile.TemporaryDirectory(prefix="curation-snapshot-") as folder:
        export_snapshot(con, Path(folder) / "snapshot")
        return load_snapshot(Path(folder) / "snapshot")
