"""Query vectors without torch: a version's BERT encoder run in numpy, for the served search.

Loading a version's model through sentence-transformers imports torch and transformers: 4-6 s on 2 cores, most
of a ``python -m curation search`` and of an app restart's first results, to encode one short query. A version's
encoder is a BERT-family transformer (MiniLM, fine-tuned or not), mean-pooled and normalised: :class:`QueryEncoder`
runs that forward pass (embeddings, self-attention, exact GELU, layer norms; the mean over the attention mask; unit
length) with numpy over the folder's own ``model.safetensors``, tokenized by the folder's ``tokenizer.json`` with
the Rust ``tokenizers`` library that sentence-transformers' fast tokenizer runs on. Loading it takes ~0.2 s.

Its vectors agree with sentence-transformers' to ~2e-7 per component (float32 rounding: sentence-transformers'
own vectors of a query encoded alone or in a batch differ by as much); tests/index/test_query_encoder.py checks
both the vectors and the served ranking. Documents are still encoded by sentence-transformers when a version is
built (:mod:`index.encoder`).

A folder of another shape (another architecture or activation, another pooling, a prompt, no ``tokenizer.json``)
is not guessed at: :func:`load_query_encoder` raises :class:`UnsupportedEncoder` naming why, and
:func:`index.loading.open_retriever` loads that folder with sentence-transformers instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from index.errors import RetrievalError

MAX_SEQ_LENGTH = 256  # tokens, as index.encoder.EncoderConfig truncates
# Every weight a BERT layer needs, after the prefix "encoder.layer.{i}.".
LAYER_WEIGHTS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                 "intermediate.dense", "output.dense")
LAYER_NORMS = ("attention.output.LayerNorm", "output.LayerNorm")
# Abramowitz & Stegun 7.1.26: erf to 1.5e-7 absolute, below float32's rounding of the GELU around it.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


class UnsupportedEncoder(RetrievalError):
    """A model folder this module does not run (the message says why); sentence-transformers loads it."""


def _read_json(path: Path) -> dict | list:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnsupportedEncoder(f"{path.name}: {exc}") from None


def _check_modules(folder: Path) -> bool:
    """The folder's sentence-transformers modules are Transformer → mean Pooling (→ Normalize); whether it
    normalises."""
    modules = _read_json(folder / "modules.json")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules] if isinstance(modules, list) else []
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) \
            or modules[0].get("path") not in ("", "."):
        raise UnsupportedEncoder(f"modules {kinds}, not Transformer → Pooling (→ Normalize)")
    pooling = _read_json(folder / modules[1]["path"] / "config.json")
    mean_only = pooling.get("pooling_mode") == "mean" or (
        pooling.get("pooling_mode_mean_tokens") is True
        and not any(v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"))
    if not mean_only:
        raise UnsupportedEncoder(f"pooling {pooling}, not the mean of the tokens")
    settings = folder / "config_sentence_transformers.json"
    if settings.is_file() and _read_json(settings).get("default_prompt_name"):
        raise UnsupportedEncoder("a default prompt is prepended to every text")
    return len(kinds) == 3


def _check_config(config: dict) -> None:
    # BertConfig's defaults for the last two: absent means the same.
    for key, value, default in (("model_type", "bert", None), ("hidden_act", "gelu", "gelu"),
                                ("position_embedding_type", "absolute", "absolute")):
        if config.get(key, default) != value:
            raise UnsupportedEncoder(f"config.json: {key} is {config.get(key)!r}, not {value!r}")
    try:
        if int(config["hidden_size"]) % int(config["num_attention_heads"]) or int(config["num_hidden_layers"]) < 1:
            raise UnsupportedEncoder("config.json: hidden_size is not a multiple of num_attention_heads")
    except (KeyError, TypeError, ValueError) as exc:
        raise UnsupportedEncoder(f"config.json: {exc}") from None


class QueryEncoder:
    """A sentence-transformers BERT encoder's query vectors, computed with numpy (see the module docstring).

    It has the part of the ``SentenceTransformer`` interface that :func:`index.encoder.encode_queries` and
    :func:`index.encoder.embedding_dimension` use: :meth:`encode` and :meth:`get_embedding_dimension`.

    Args:
        weights: the checkpoint's tensors by name, without a "bert." prefix.
        tokenizer: the folder's ``tokenizers.Tokenizer``, truncating at ``max_seq_length``, not padding.
        config: the folder's ``config.json``.
        normalize: the folder's modules end with Normalize.
        path: the model folder.
    """

    def __init__(self, weights: dict[str, np.ndarray], tokenizer, config: dict, normalize: bool,
                 path: Path) -> None:
        self._w = weights
        self._tokenizer = tokenizer
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._normalize = normalize
        self._model_path = str(path)  # what index.encoder.model_name reads
        self._dimension = int(config["hidden_size"])
        self.tokenizer = SimpleNamespace(sep_token=_sep_token(path))  # what index.encoder.separator_of reads

    def get_embedding_dimension(self) -> int:
        return self._dimension

    def encode(self, sentences: Sequence[str], batch_size: int = 32, normalize_embeddings: bool = False,
               convert_to_numpy: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Vectors of ``sentences``, (n, dim) float32, in their order (batched by length, as sentence-transformers
        does). ``convert_to_numpy`` and ``show_progress_bar`` are accepted for its interface; the result is always
        an array."""
        from threadpoolctl import threadpool_limits

        texts = list(sentences)
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)  # (n, dim)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        # One BLAS thread: these products are small, and on a busy 2-core machine OpenBLAS's spinning threads made
        # each one 10-40x slower (measured).
        with threadpool_limits(1, user_api="blas"):
            for start in range(0, len(order), max(batch_size, 1)):
                rows = order[start:start + max(batch_size, 1)]
                out[rows] = self._forward([texts[i] for i in rows])
        if normalize_embeddings:
            out = _unit(out)
        return out

    def _forward(self, texts: list[str]) -> np.ndarray:
        """The pooled (and normalised) vectors of one batch, (batch, dim)."""
        encodings = self._tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), length), dtype=np.int64)  # (batch, tokens), padded with 0s masked out
        types = np.zeros_like(ids)
        mask = np.zeros((len(texts), length), dtype=np.float32)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)], types[row, :len(e.ids)], mask[row, :len(e.ids)] = e.ids, e.type_ids, 1.0
        w = self._w
        h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length] \
            + w["embeddings.token_type_embeddings.weight"][types]  # (batch, tokens, dim)
        h = self._norm(h, "embeddings.LayerNorm")
        # Padded keys get the lowest float, as transformers' mask does: their softmax weight is exactly 0.
        key_bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # (batch, 1, 1, tokens)
        for layer in range(self._layers):
            h = self._layer(h, f"encoder.layer.{layer}.", key_bias)
        pooled = (h * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return _unit(pooled) if self._normalize else pooled

    def _layer(self, h: np.ndarray, prefix: str, key_bias: np.ndarray) -> np.ndarray:
        batch, tokens, dim = h.shape
        heads, size = self._heads, dim // self._heads

        def split(x: np.ndarray) -> np.ndarray:  # (batch, tokens, dim) → (batch, heads, tokens, size)
            return x.reshape(batch, tokens, heads, size).transpose(0, 2, 1, 3)

        q = split(self._linear(h, prefix + "attention.self.query"))
        k = split(self._linear(h, prefix + "attention.self.key"))
        v = split(self._linear(h, prefix + "attention.self.value"))
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(size)) + key_bias  # (b, heads, t, t)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, dim)
        attended = self._linear(context, prefix + "attention.output.dense")
        h = self._norm(attended + h, prefix + "attention.output.LayerNorm")
        inner = _gelu(self._linear(h, prefix + "intermediate.dense"))
        return self._norm(self._linear(inner, prefix + "output.dense") + h, prefix + "output.LayerNorm")

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._w[name + ".weight"].T + self._w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        variance = np.square(x - mean).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + np.float32(self._eps)) * self._w[name + ".weight"] \
            + self._w[name + ".bias"]


def _sep_token(folder: Path) -> str:
    """The separator token the folder's tokenizer config names ("[SEP]" when it names none)."""
    path = Path(folder) / "tokenizer_config.json"
    token = _read_json(path).get("sep_token") if path.is_file() else None
    if isinstance(token, dict):  # an AddedToken written out
        token = token.get("content")
    return token if isinstance(token, str) and token else "[SEP]"


def _gelu(x: np.ndarray) -> np.ndarray:
    """x · Φ(x) with the exact (erf) normal CDF, as BERT's "gelu"; computed in float64, returned as float32."""
    wide = x.astype(np.float64) / math.sqrt(2.0)
    a = np.abs(wide)
    t = 1.0 / (1.0 + _ERF_P * a)
    poly = t * (_ERF_A[4] + t * (_ERF_A[3] + t * (_ERF_A[2] + t * (_ERF_A[1] + t * _ERF_A[0]))))
    erf = np.sign(wide) * (1.0 - poly * np.exp(-a * a))
    return (x * (0.5 * (1.0 + erf))).astype(np.float32)


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows at unit length, as torch's ``F.normalize`` (a norm below 1e-12 counts as 1e-12)."""
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), np.float32(1e-12))


def load_query_encoder(folder: str | Path, max_seq_length: int = MAX_SEQ_LENGTH) -> QueryEncoder:
    """The :class:`QueryEncoder` of a sentence-transformers folder.

    Raises:
        UnsupportedEncoder: the folder is not a BERT encoder mean-pooled (and normalised) with a ``tokenizer.json``
            and float32 ``model.safetensors``, or a file of it cannot be read (the message says which).
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    folder = Path(folder)
    normalize = _check_modules(folder)
    config = _read_json(folder / "config.json")
    _check_config(config)
    if not (folder / "tokenizer.json").is_file() or not (folder / "model.safetensors").is_file():
        raise UnsupportedEncoder("no tokenizer.json or model.safetensors")
    try:
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tensors = load_file(str(folder / "model.safetensors"))
    except Exception as exc:  # tokenizers and safetensors raise exceptions of their own kinds
        raise UnsupportedEncoder(f"{type(exc).__name__}: {exc}") from None
    tokenizer.no_padding()
    positions = int(config.get("max_position_embeddings", max_seq_length))
    tokenizer.enable_truncation(max_length=min(max_seq_length, positions))
    weights = {name.removeprefix("bert."): tensor for name, tensor in tensors.items()}
    needed = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
              "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for layer in range(int(config["num_hidden_layers"])):
        for name in (*LAYER_WEIGHTS, *LAYER_NORMS):
            needed += [f"encoder.layer.{layer}.{name}.weight", f"encoder.layer.{layer}.{name}.bias"]
    missing = [n for n in needed if n not in weights]
    if missing:
        raise UnsupportedEncoder(f"model.safetensors lacks {missing[0]}")
    if any(weights[n].dtype != np.float32 for n in needed):
        raise UnsupportedEncoder("model.safetensors is not float32")
    return QueryEncoder({n: weights[n] for n in needed}, tokenizer, config, normalize, folder)
