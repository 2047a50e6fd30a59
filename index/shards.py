"""Resumable corpus encoding: embeddings written shard by shard into a folder, finished shards kept.

A corpus too large to encode in one sitting is encoded :data:`SHARD_SIZE` documents at a time.
Shard ``i`` is two files, ``shard-000i.npy`` (float32, (n, dim), unit length) and
``shard-000i.ids`` (the documents' ids, one a line, in the vectors' order); each is written to a
temporary file and renamed, vectors first, so a shard's ids file exists only once its vectors are
whole. A re-run skips every shard whose ids file holds exactly the ids of the documents it would
encode, and encodes the others: a killed run goes on from the shard it stopped in (shards past the
end of a shorter corpus are removed). ``encoder.json``
names the model and dimension; a folder made by another model is refused rather than mixed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from index.documents import TextDocument
from index.encoder import embedding_dimension, encode_documents, encoding_pool, model_name
from index.errors import RetrievalError

SHARD_SIZE = 10_000
MANIFEST = "encoder.json"


class ShardFolderMismatch(RetrievalError):
    """The shard folder was written by another encoder, or holds something else."""


@dataclass(frozen=True)
class ShardRun:
    """What :func:`encode_shards` did: shards encoded now, shards kept from an earlier run, documents in all."""

    encoded: int
    kept: int
    documents: int


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it onto ``path``."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _shard_paths(folder: Path, number: int) -> tuple[Path, Path]:
    return folder / f"shard-{number:05d}.npy", folder / f"shard-{number:05d}.ids"


def _check_manifest(folder: Path, model) -> None:
    wanted = {"model": model_name(model), "dimension": embedding_dimension(model)}
    path = folder / MANIFEST
    if not path.exists():
        write_file_atomic(path, json.dumps(wanted, indent=2).encode())
        return
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ShardFolderMismatch(f"{path}: not a shard folder's manifest ({exc}); give an empty folder") from None
    if found != wanted:
        raise ShardFolderMismatch(
            f"{path}: the shards here were encoded by {found.get('model')} ({found.get('dimension')} dimensions), "
            f"not {wanted['model']} ({wanted['dimension']}); give another folder or empty this one"
        )


def _batches(documents: Iterable[TextDocument], size: int) -> Iterator[list[TextDocument]]:
    iterator = iter(documents)
    while batch := list(islice(iterator, size)):
        yield batch


def encode_shards(
    model,
    documents: Iterable[TextDocument],
    folder: str | Path,
    shard_size: int = SHARD_SIZE,
    batch_size: int = 32,
    processes: int | None = None,
    progress: bool = False,
) -> ShardRun:
    """Encode ``documents`` into ``folder`` shard by shard, keeping the shards an earlier run finished.

    Documents are consumed lazily, one shard at a time; the same documents in the same order give
    the same shards, so a re-run encodes only what is missing. One worker pool (``processes``, see
    :func:`index.encoder.pool_devices`) serves every shard.

    Raises:
        ShardFolderMismatch: the folder's shards come from another model.
        ValueError: ``shard_size`` below 1.
    """
    if shard_size < 1:
        raise ValueError(f"shard_size must be 1 or more, got {shard_size}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _check_manifest(folder, model)
    encoded = kept = total = shards = 0
    with encoding_pool(model, processes) as pool:
        for number, shard in enumerate(_batches(documents, shard_size)):
            total += len(shard)
            vectors_path, ids_path = _shard_paths(folder, number)
            ids = [d.pmid for d in shard]
            if ids_path.exists() and vectors_path.exists() and ids_path.read_text(encoding="utf-8").split() == ids:
                kept += 1
                shards = number + 1
                continue
            vectors = encode_documents(model, shard, batch_size=batch_size, progress=progress, pool=pool)  # (n, dim)
            ids_path.unlink(missing_ok=True)  # a stale ids file must never vouch for the new vectors
            write_file_atomic(vectors_path, _npy_bytes(vectors))
            write_file_atomic(ids_path, ("\n".join(ids) + "\n").encode())
            encoded += 1
            shards = number + 1
    for ids_path in sorted(folder.glob("shard-*.ids"))[shards:]:  # a shorter corpus: its old tail is not its own
        ids_path.unlink()
        ids_path.with_suffix(".npy").unlink(missing_ok=True)
    return ShardRun(encoded=encoded, kept=kept, documents=total)


def _npy_bytes(vectors: np.ndarray) -> bytes:
    from io import BytesIO

    buffer = BytesIO()
    np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
    return buffer.getvalue()


def load_shards(folder: str | Path) -> tuple[list[str], np.ndarray]:
    """Every finished shard of ``folder`` in order: (ids, vectors (n, dim) float32).

    Raises:
        ShardFolderMismatch: a shard whose vectors and ids disagree in number.
    """
    folder = Path(folder)
    ids: list[str] = []
    parts: list[np.ndarray] = []
    for ids_path in sorted(folder.glob("shard-*.ids")):
        vectors = np.load(ids_path.with_suffix(".npy"), allow_pickle=False)
        shard_ids = ids_path.read_text(encoding="utf-8").split()
        if len(shard_ids) != len(vectors):
            raise ShardFolderMismatch(f"{ids_path}: {len(shard_ids)} ids for {len(vectors)} vectors; encode it again")
        ids.extend(shard_ids)
        parts.append(vectors)
    if not parts:
        return [], np.zeros((0, 0), dtype=np.float32)
    return ids, np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
