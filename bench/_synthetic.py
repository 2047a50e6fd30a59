"""What bench/scale.py and its real-corpus sections share: the synthetic embedding mixture and the timing helpers."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Mixture:
    """Generator of the synthetic embeddings (bench/scale.py's docstring says how it is fitted to real ones)."""

    dim: int = 384
    topics: int = 64
    clusters: int = 4000
    mean_norm: float = 0.5  # global mean direction: the shared "biomedical abstract" component
    topic_scale: float = 0.7
    cluster_scale: float = 0.5
    noise_scale: float = 0.72
    spectrum_alpha: float = 0.8  # per-axis variance ∝ rank^-alpha
    seed: int = 0


# --------------------------------------------------------------------------- measuring


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def percentiles(seconds: Sequence[float]) -> dict[str, float]:
    ms = 1000 * np.asarray(seconds)
    return {"p50": round(float(np.percentile(ms, 50)), 3), "p95": round(float(np.percentile(ms, 95)), 3),
            "mean": round(float(ms.mean()), 3), "n": len(ms)}


def single_queries(search, queries: Sequence, warmup: int = 10) -> tuple[list[list[str]], list[float]]:
    """Run ``search([q], K)`` once per query; returns the hit ids and the seconds per call."""
    for q in queries[:warmup]:
        search(q)
    found, seconds = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = search(q)
        seconds.append(time.perf_counter() - t0)
        found.append([doc_id for doc_id, _ in hits])
    return found, seconds


def recall(found: list[list[str]], truth: list[list[str]]) -> float:
    return round(float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True)])), 4)


# --------------------------------------------------------------------------- synthetic vectors


def _anisotropic(rng: np.random.Generator, n: int, mix: Mixture, rotation: np.ndarray) -> np.ndarray:
    scale = np.arange(1, mix.dim + 1, dtype=np.float32) ** (-mix.spectrum_alpha / 2)
    scale /= np.sqrt((scale**2).sum())  # expected squared norm 1
    return (rng.standard_normal((n, mix.dim), dtype=np.float32) * scale) @ rotation  # (n, dim)


def synthetic_vectors(n: int, mix: Mixture, chunk: int = 100_000) -> np.ndarray:
    """``n`` unit vectors ``(n, dim)`` float32 from the mixture, generated in chunks to bound memory."""
    rng = np.random.default_rng(mix.seed)
    rotation = np.linalg.qr(rng.standard_normal((mix.dim, mix.dim)))[0].astype(np.float32)
    mean = rng.standard_normal(mix.dim).astype(np.float32)
    mean *= mix.mean_norm / np.linalg.norm(mean)
    topics = mix.topic_scale * _anisotropic(rng, mix.topics, mix, rotation)
    centres = mean + topics[rng.integers(0, mix.topics, mix.clusters)]
    centres += mix.cluster_scale * _anisotropic(rng, mix.clusters, mix, rotation)  # (clusters, dim)
    weights = rng.lognormal(0.0, 1.0, mix.clusters)
    labels = rng.choice(mix.clusters, n, p=weights / weights.sum())
    out = np.empty((n, mix.dim), dtype=np.float32)
    for start in range(0, n, chunk):
        rows = labels[start : start + chunk]
        block = centres[rows] + mix.noise_scale * _anisotropic(rng, len(rows), mix, rotation)
        out[start : start + chunk] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


