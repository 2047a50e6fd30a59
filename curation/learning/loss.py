"""EDEL's layered contrastive loss (MultiMargin), in the shape of sentence-transformers' losses.

The paper's equation (EDEL §4.1, Eq. 2) did not survive text extraction; this is the formula
implemented, and why.

For a query q and document d with cosine distance ``D = 1 - cos(q, d)`` in [0, 2], label
``y`` (1 positive, 0 negative) and the margin ``m`` of the pair's class::

    L(q, d) = ½ · [ y · max(0, D − m)²  +  (1 − y) · max(0, m − D)² ]

and the batch loss is the mean over pairs. This is Hadsell et al. (2006)'s contrastive loss
(``½·y·D² + ½·(1−y)·max(0, m − D)²``, the form of sentence-transformers' ContrastiveLoss) with
two changes the paper describes in words: every pair brings its own margin (one per margin
class), and a positive is pulled only until it is inside its margin (``D ≤ m``) rather than all
the way to D = 0, so a noisy positive (margin 0.2 … 1.2) stops being pulled once it is as close
as its class allows. With m = 0 for positives the positive term is Hadsell's. Negatives are
pushed until ``D ≥ m``; inside their margins both terms are exactly zero, with zero gradient.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn


def cosine_distance(queries: Tensor, documents: Tensor) -> Tensor:
    """Row-wise cosine distance 1 − cos, in [0, 2]. Shapes (batch, dim) → (batch,)."""
    return 1.0 - nn.functional.cosine_similarity(queries, documents, dim=-1)


def multi_margin_loss(distances: Tensor, labels: Tensor, margins: Tensor, reduction: str = "mean") -> Tensor:
    """The MultiMargin loss on precomputed distances.

    Args:
        distances: (batch,) cosine distances.
        labels: (batch,) 1.0 for positives, 0.0 for negatives.
        margins: (batch,) each pair's class margin.
        reduction: "mean", "sum" or "none".
    """
    positive = labels * torch.relu(distances - margins).pow(2)
    negative = (1.0 - labels) * torch.relu(margins - distances).pow(2)
    losses = 0.5 * (positive + negative)
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    if reduction == "none":
        return losses
    raise ValueError(f"unknown reduction '{reduction}'")


class MultiMarginContrastiveLoss(nn.Module):
    """Contrastive loss with one margin per example (EDEL's layered loss).

    Args:
        model: the SentenceTransformer whose embeddings are trained (one shared encoder for
            queries and documents).
        size_average: average over the batch (True) or sum (False).

    Inputs:
        sentence_features: two feature dicts (tokenised queries, tokenised documents).
        labels: (batch, 2) float tensor: column 0 is 1 for a positive and 0 for a negative pair,
            column 1 is the pair's margin.

    References:
        EDEL: "Enhancing Document Retrieval for Curating N-ary Relations in Knowledge Bases", §4.1
        and appendix A; Hadsell, Chopra, LeCun (2006), "Dimensionality Reduction by Learning an
        Invariant Mapping".

    Example:
        >>> loss = MultiMarginContrastiveLoss(model)
        >>> value = loss([query_features, doc_features], torch.tensor([[1.0, 0.2], [0.0, 1.0]]))
    """

    def __init__(self, model: nn.Module, size_average: bool = True) -> None:
        super().__init__()
        self.model = model
        self.size_average = size_average

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        queries, documents = (self.model(features)["sentence_embedding"] for features in sentence_features)
        distances = cosine_distance(queries, documents)
        return multi_margin_loss(
            distances, labels[:, 0], labels[:, 1], reduction="mean" if self.size_average else "sum"
        )

    def get_config_dict(self) -> dict[str, object]:
        return {"size_average": self.size_average, "distance": "cosine", "form": "squared hinge, per-pair margin"}

    @property
    def citation(self) -> str:
        return "EDEL (Enhancing Document Retrieval for Curating N-ary Relations in Knowledge Bases), §4.1"
