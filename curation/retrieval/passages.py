"""A document's best sentences for a query, and entity spans moved into a window of its text.

Sentence selection follows seeds 003/004: score each sentence by the query entities it mentions
(most), candidate answers, and plain word overlap with the query, and show the best two or three
first. Pure text and offsets: how the sentences are drawn (escaped HTML with marks) is the pages'
(``pages/parts/highlight.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from curation.records import Span

_WORD = re.compile(r"[A-Za-z0-9]+")
# A sentence ends at . ! ? followed by space and a capital, digit or bracket; not after
# common abbreviations or single capitals ("e.g.", "Fig.", "B. subtilis").
_BOUNDARY = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bFig)(?<!\bet al)(?<!\b[A-Z])[.!?](?=\s+[A-Z0-9(\[])")
STOP = frozenset("a an and are as at be by for from in is it of on or the to with was were this that".split())


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str
    score: float


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of ``text``."""
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if text[start:end].strip():
            spans.append((start, end))
        start = end
    if text[start:].strip():
        spans.append((start, len(text)))
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in spans]


def best_sentences(
    text: str, spans: Iterable[Span], query: str, query_types: Sequence[str], answer_type: str, limit: int = 3
) -> list[Sentence]:
    """The ``limit`` most informative sentences, in document order.

    Score: 3 per distinct query entity type mentioned, 2 if a candidate answer is mentioned,
    plus the share of the query's content words present. Sentences scoring 0 are never shown.
    """
    spans = list(spans)
    words = {w.casefold() for w in _WORD.findall(query)} - STOP
    scored = []
    for start, end in split_sentences(text):
        inside = [s for s in spans if s.start >= start and s.end <= end]
        kinds = {s.entity_type for s in inside}
        score = 3.0 * len(kinds & set(query_types)) + (2.0 if answer_type in kinds else 0.0)
        if words:
            present = {w.casefold() for w in _WORD.findall(text[start:end])}
            score += len(words & present) / len(words)
        if score > 0:
            scored.append(Sentence(start, end, text[start:end], score))
    chosen = sorted(scored, key=lambda s: (-s.score, s.start))[:limit]
    return sorted(chosen, key=lambda s: s.start)


def shift(spans: Iterable[Span], offset: int, length: int) -> list[Span]:
    """Spans moved by ``-offset`` and cut to those inside a window of ``length`` characters."""
    out = []
    for s in spans:
        if s.start >= offset and s.end <= offset + length:
            out.append(Span(s.start - offset, s.end - offset, s.text, s.entity_type, s.concept, s.how))
    return out
