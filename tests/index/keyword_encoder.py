"""A keyword one-hot fake encoder: a text's vector marks which of ten words it holds (no model needed)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

VOCABULARY = ("braf", "v600e", "melanoma", "vemurafenib", "egfr", "lung", "gefitinib", "kras", "cisplatin", "kinase")


class KeywordEncoder:
    """Embeds a text as the unit-normalised indicator vector of VOCABULARY words in it."""

    tokenizer = SimpleNamespace(sep_token="[SEP]")

    def __init__(self) -> None:
        self.calls = 0

    def get_embedding_dimension(self) -> int:
        return len(VOCABULARY)

    def encode(self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False):
        self.calls += 1
        vectors = np.zeros((len(texts), len(VOCABULARY)), dtype=np.float32)  # (n_texts, vocabulary)
        for row, text in enumerate(texts):
            words = set(re.findall(r"\w+", text.lower()))
            for column, word in enumerate(VOCABULARY):
                vectors[row, column] = float(word in words)
        if normalize_embeddings:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1, norms)
        return vectors
