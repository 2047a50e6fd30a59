"""Corpus embeddings cached on disk by model and text, and an encoder that remembers query embeddings."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from curation.records import Document
from index.encoder import (
    EncoderConfig,
    document_text,
    embedding_dimension,
    encode_documents,
    resolve_model,
    separator_of,
)


def corpus_embeddings(
    model, model_key: str, corpus: Sequence[Document], cache_dir: Path
) -> tuple[np.ndarray, float, bool]:
    """(vectors (n_docs, dim), seconds the encoding took, whether they came from the cache).

    The cache key hashes ``model_key`` (model name and max sequence length) and every
    (pmid, encoded text), so any change to either re-encodes.
    """
    separator = separator_of(model)
    digest = hashlib.sha256()
    digest.update(f"{model_key}\n".encode())
    for document in corpus:
        digest.update(f"{document.pmid}\t{document_text(document, separator)}\n".encode())
    key = digest.hexdigest()[:20]
    folder = cache_dir / "bench"
    vectors_path, meta_path = folder / f"corpus-{key}.npy", folder / f"corpus-{key}.json"
    if vectors_path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        vectors = np.load(vectors_path)
        if vectors.shape == (len(corpus), meta["dimension"]):
            return vectors, float(meta["encode_seconds"]), True
    start = time.perf_counter()
    vectors = encode_documents(model, corpus, batch_size=32, progress=sys.stderr.isatty())  # (n_docs, dim)
    seconds = time.perf_counter() - start
    folder.mkdir(parents=True, exist_ok=True)
    tmp = vectors_path.with_name(vectors_path.stem + ".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(vectors_path)
    meta = {"model": model_key, "documents": len(corpus), "dimension": int(vectors.shape[1]),
            "encode_seconds": round(seconds, 2), "created_at": _now()}
    meta_path.write_text(json.dumps(meta, indent=2))
    return vectors, seconds, False


def model_key(config: EncoderConfig) -> str:
    """The encoder as named in the embedding cache key and the dense index manifest."""
    return f"{Path(resolve_model(config.model)).name}|max_seq_length={config.max_seq_length}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class MemoEncoder:
    """The encoder with query embeddings remembered by text.

    Used only for the dev sweep and test scoring, where every fusion candidate encodes the
    same queries; latency is measured with the plain encoder.
    """

    def __init__(self, model) -> None:
        self.model = model
        self.tokenizer = model.tokenizer
        self._memo: dict[str, np.ndarray] = {}

    def encode(self, texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False):
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            vectors = self.model.encode(todo, batch_size=batch_size, normalize_embeddings=normalize_embeddings,
                                        convert_to_numpy=True, show_progress_bar=False)
            self._memo.update(zip(todo, vectors, strict=True))
        return np.stack([self._memo[t] for t in texts])

    def get_embedding_dimension(self) -> int:
        return embedding_dimension(self.model)
