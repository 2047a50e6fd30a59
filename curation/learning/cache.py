"""The build cache: what one retraining job computes that the next one can reuse, keyed by what it depends on.

Two results are kept between jobs, as plain JSON files under ``<models dir>/.cache/<kind>/<key>.json``
(no pickle; a corrupted or unreadable entry is a miss, never an error):

- ``kb_pairs``: the KB's EDEL training pairs (text matching of every record, BM25 hard negatives); key:
  the documents, synonyms, stored annotations and KB records of the snapshot, the schema, the sampling
  settings and the split's seed. A curator's decision without an answer changes none of these.
- ``baseline``: the active version's dev evaluation (its text-retriever dev metrics and its per-query
  served scores); key: the version's name and manifest, the dev set, and the documents, synonyms and
  annotations the served search reads.

The key is a digest of exactly those inputs (:func:`digest`); each kind keeps its :data:`KEEP` newest
entries. :class:`BuildCache` records a hit or a miss per kind, for the job's result and its tests.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from curation.files import write_atomic
from curation.learning.snapshot import Snapshot

FOLDER = ".cache"
KEEP = 4  # entries kept per kind: a few active versions / KB states back
FORMAT = 1  # bump when what an entry holds changes, so old entries miss


def digest(*parts: object) -> str:
    """A stable hex digest of JSON-serialisable ``parts`` (keys sorted; dataclasses as dicts)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()


def _plain(value: object) -> object:
    if hasattr(value, "__dataclass_fields__"):
        # a record's own fields (nested records come back here); vars() is far faster than asdict() on a corpus
        return vars(value) if hasattr(value, "__dict__") else asdict(value)  # type: ignore[arg-type]
    if isinstance(value, set | frozenset | tuple):
        return sorted(value, key=str) if isinstance(value, set | frozenset) else list(value)
    return str(value)


def _rows_digest(rows: Iterable[object]) -> str:
    hasher = hashlib.sha256()
    for row in rows:
        hasher.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=_plain).encode())
        hasher.update(b"\n")
    return hasher.hexdigest()


@dataclass(frozen=True)
class SnapshotDigests:
    """A digest of each part of a snapshot a build result can depend on."""

    documents: str
    synonyms: str
    annotations: str
    records: str
    decisions: str

    @classmethod
    def of(cls, snapshot: Snapshot) -> SnapshotDigests:
        documents = _rows_digest((d.pmid, d.title, d.abstract, d.source, d.mentions)
                                 for _, d in sorted(snapshot.documents.items()))
        annotations = _rows_digest((pmid, found) for pmid, found in sorted(snapshot.annotations.items()))
        return cls(documents=documents, synonyms=_rows_digest(snapshot.synonyms), annotations=annotations,
                   records=_rows_digest(snapshot.records), decisions=_rows_digest(snapshot.decisions))

    @property
    def corpus(self) -> str:
        """What the corpus analysis (lexicon, matcher, concept index) reads: documents, synonyms, annotations."""
        return digest(self.documents, self.synonyms, self.annotations)


@dataclass
class BuildCache:
    """The cache folder of one models folder, and the hits and misses of one build.

    Attributes:
        folder: ``<models dir>/.cache``.
        enabled: False reads nothing and writes nothing (every kind a miss).
        report: per kind, ``hit`` or ``miss`` (what this build did).
    """

    folder: Path
    enabled: bool = True
    report: dict[str, str] = field(default_factory=dict)

    @classmethod
    def under(cls, models_dir: str | Path, enabled: bool = True) -> BuildCache:
        return cls(Path(models_dir) / FOLDER, enabled)

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / f"{key}.json"

    def get(self, kind: str, key: str) -> dict | None:
        """The entry of ``kind`` under ``key`` (None: a miss, recorded in :attr:`report`)."""
        data = None
        if self.enabled:
            try:
                loaded = json.loads(self._path(kind, key).read_text(encoding="utf-8"))
                if isinstance(loaded, dict) and loaded.get("format") == FORMAT:
                    data = loaded.get("data")
            except (OSError, ValueError):
                data = None  # absent or damaged: computed again and rewritten
        self.report[kind] = "hit" if data is not None else "miss"
        return data

    def put(self, kind: str, key: str, data: Mapping[str, object]) -> None:
        """Keep ``data`` under ``key`` (atomically), and drop the oldest entries of ``kind`` beyond :data:`KEEP`.

        A cache that cannot be written (a full disk, a read-only folder) only costs the next job time.
        """
        if not self.enabled:
            return
        try:
            path = self._path(kind, key)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps({"format": FORMAT, "data": data}, ensure_ascii=False))
            entries = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in entries[KEEP:]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            self.report[kind] = f"{self.report.get(kind, 'miss')} (not kept: {os.strerror(exc.errno or 0)})"
