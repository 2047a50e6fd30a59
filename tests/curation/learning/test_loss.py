from __future__ import annotations

import math

import pytest
import torch

from curation.learning.loss import MultiMarginContrastiveLoss, cosine_distance, multi_margin_loss


def test_hand_computed_values():
    distances = torch.tensor([0.5, 0.1, 0.3, 1.5])
    labels = torch.tensor([1.0, 1.0, 0.0, 0.0])
    margins = torch.tensor([0.2, 0.2, 1.0, 1.0])
    # positive 0.5 vs 0.2 → ½·0.3² = 0.045; positive 0.1 inside 0.2 → 0;
    # negative 0.3 vs 1.0 → ½·0.7² = 0.245; negative 1.5 beyond 1.0 → 0.
    losses = multi_margin_loss(distances, labels, margins, reduction="none")
    assert torch.allclose(losses, torch.tensor([0.045, 0.0, 0.245, 0.0]))
    assert math.isclose(multi_margin_loss(distances, labels, margins).item(), (0.045 + 0.245) / 4, rel_tol=1e-6)
    assert math.isclose(multi_margin_loss(distances, labels, margins, reduction="sum").item(), 0.29, rel_tol=1e-6)


def test_gradients_pull_positives_in_and_push_negatives_out():
    distances = torch.tensor([0.9, 0.4], requires_grad=True)
    labels = torch.tensor([1.0, 0.0])
    margins = torch.tensor([0.2, 1.2])
    multi_margin_loss(distances, labels, margins, reduction="sum").backward()
    positive_grad, negative_grad = distances.grad.tolist()
    assert positive_grad == pytest.approx(0.7)  # d/dD ½(D−m)² = D−m > 0: descent lowers the distance
    assert negative_grad == pytest.approx(-0.8)  # d/dD ½(m−D)² = −(m−D) < 0: descent raises the distance


def test_zero_loss_and_zero_gradient_inside_the_margins():
    distances = torch.tensor([0.1, 0.6, 1.3], requires_grad=True)
    labels = torch.tensor([1.0, 1.0, 0.0])
    margins = torch.tensor([0.2, 0.6, 1.2])
    loss = multi_margin_loss(distances, labels, margins)
    loss.backward()
    assert loss.item() == 0.0
    assert distances.grad.abs().sum().item() == 0.0


def test_cosine_distance_range():
    a = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    b = torch.tensor([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    assert torch.allclose(cosine_distance(a, b), torch.tensor([0.0, 1.0, 2.0]))


class _Toy(torch.nn.Module):
    """Embeds a one-hot 'token' through a linear layer; stands in for a SentenceTransformer."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, features):
        return {"sentence_embedding": self.linear(features["x"])}


def test_training_steps_move_distances_toward_their_margins():
    model = _Toy()
    loss_fn = MultiMarginContrastiveLoss(model)
    eye = torch.eye(4)
    queries = {"x": eye[[0, 0]]}
    documents = {"x": eye[[1, 2]]}
    labels = torch.tensor([[1.0, 0.0], [0.0, 1.2]])  # doc 1 relevant (margin 0), doc 2 negative (1.2)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)

    def distances():
        with torch.no_grad():
            q = model(queries)["sentence_embedding"]
            d = model(documents)["sentence_embedding"]
            return cosine_distance(q, d).tolist()

    before = distances()
    first = None
    for _ in range(60):
        optimiser.zero_grad()
        loss = loss_fn([queries, documents], labels)
        first = loss.item() if first is None else first
        loss.backward()
        optimiser.step()
    after = distances()
    assert loss.item() < 0.01 * first
    assert after[0] < before[0]
    assert before[1] < 0.5 and after[1] > 1.15  # the negative is pushed out to its 1.2 margin
    assert loss_fn.get_config_dict()["distance"] == "cosine"
