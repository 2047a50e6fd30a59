"""Lexical index: BM25 with bm25s, saved as its plain files and memory-mapped on load.

Tokenisation keeps biomedical names whole enough to match: lower-cased word tokens of two or
more characters (V600E → "v600e", BCR::ABL1 → "bcr", "abl1"), English stop words removed,
Snowball stemming. Documents are indexed as title + abstract.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from index.documents import TextDocument
from index.errors import RetrievalError
from index.hits import Ranking

IDS_FILE = "ids.json"
MANIFEST_FILE = "lexical.json"
FORMAT_VERSION = 1


class LexicalIndexError(RetrievalError):
    """A BM25 index that cannot be loaded or built."""


@dataclass(frozen=True)
class LexicalConfig:
    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "en"


class LexicalIndex:
    """bm25s index plus the document ids of its rows."""

    def __init__(self, retriever: bm25s.BM25, ids: list[str], config: LexicalConfig) -> None:
        self.retriever = retriever
        self.ids = ids
        self.config = config
        self._stemmer = Stemmer.Stemmer(config.stemmer) if config.stemmer else None

    @classmethod
    def build(cls, documents: Sequence[TextDocument], config: LexicalConfig = LexicalConfig()) -> LexicalIndex:
        stemmer = Stemmer.Stemmer(config.stemmer) if config.stemmer else None
        texts = [d.text for d in documents]
        tokens = bm25s.tokenize(texts, stopwords=config.stopwords, stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        retriever.index(tokens, show_progress=False)
        return cls(retriever, [d.pmid for d in documents], config)

    def __len__(self) -> int:
        return len(self.ids)

    def _tokens(self, queries: Sequence[str]) -> list[list[str]]:
        return bm25s.tokenize(
            list(queries),
            stopwords=self.config.stopwords,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )

    def search(self, queries: Sequence[str], k: int) -> list[Ranking]:
        """Top-k (doc id, BM25 score) per query; documents scoring 0 are left out."""
        if not queries:
            return []
        k = min(k, len(self))
        if k == 0:
            return [[] for _ in queries]
        tokens = self._tokens(queries)
        results: list[Ranking] = [[] for _ in queries]
        # bm25s cannot score a query with no known token; such queries simply have no hits.
        known = [i for i, t in enumerate(tokens) if any(w in self.retriever.vocab_dict for w in t)]
        if not known:
            return results
        rows, scores = self.retriever.retrieve(
            [tokens[i] for i in known], k=k, show_progress=False, n_threads=1
        )  # (n_known, k) each
        for slot, (row_ids, row_scores) in zip(known, zip(rows, scores, strict=True), strict=True):
            results[slot] = [(self.ids[r], float(s)) for r, s in zip(row_ids, row_scores, strict=True) if s > 0]
        return results

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(folder), show_progress=False)
        (folder / IDS_FILE).write_text(json.dumps(self.ids))
        manifest = {
            "format_version": FORMAT_VERSION,
            "documents": len(self),
            "config": asdict(self.config),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": {"bm25s": bm25s.__version__, "numpy": np.__version__},
        }
        (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
        return folder

    @classmethod
    def load(cls, folder: str | Path, mmap: bool = True) -> LexicalIndex:
        folder = Path(folder)
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text())
            ids = json.loads((folder / IDS_FILE).read_text())
            retriever = bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False)
        except FileNotFoundError as exc:
            raise LexicalIndexError(
                f"BM25 index in {folder} is incomplete: {Path(exc.filename).name} is missing"
            ) from None
        except (ValueError, OSError, json.JSONDecodeError) as exc:
            raise LexicalIndexError(f"BM25 index in {folder} is corrupted ({exc}); rebuild it") from None
        if manifest.get("documents") != len(ids):
            raise LexicalIndexError(
                f"BM25 index in {folder} is inconsistent: manifest says {manifest.get('documents')} "
                f"documents, ids.json has {len(ids)}; rebuild it"
            )
        return cls(retriever, ids, LexicalConfig(**manifest.get("config", {})))
