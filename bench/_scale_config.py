"""The scale benchmark's sizes, goals and constants, shared by its sections."""

from __future__ import annotations

from dataclasses import dataclass

K = 50
GOAL_RECALL = 0.95
GOAL_P95_MS = 10.0
MODEL = "synthetic-384d"


@dataclass(frozen=True)
class Sizes:
    vectors: int = 1_000_000
    queries: int = 1000
    flat_latency_queries: int = 200
    documents: int = 100_000
    lexical_queries: int = 1000


SMALL = Sizes(vectors=50_000, queries=300, flat_latency_queries=100, documents=10_000, lexical_queries=300)
