"""BIO tags over word pieces: gold character spans -> tag ids per window, predicted tags -> character spans.

The transformer recogniser (:mod:`curation.entities.transformer_recogniser`) reads a text as windows of
at most ``max_length`` word pieces that overlap by ``stride`` pieces (transformers' fast tokenizers cut
them and keep each piece's character offsets). A piece is tagged by the character it starts at: ``B-X``
when it is the first piece of a mention of kind X in its window, ``I-X`` for the mention's other pieces,
``O`` outside, and :data:`IGNORE` (no loss) for special pieces and for pieces that a partially annotated
corpus leaves unlabelled (BC5CDR's genes and variants, found by the dictionary: "missing", as the CNN's
training marks them). A piece that appears in two windows is predicted by the window where it is
furthest from an edge, so every piece is read with context on both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

#: transformers' (and torch's cross-entropy) "no loss here" label
IGNORE = -100


def tag_names(labels: Sequence[str]) -> list[str]:
    """``O`` then ``B-X``, ``I-X`` for each label X, in order: the model's output classes."""
    return ["O"] + [f"{prefix}-{label}" for label in labels for prefix in ("B", "I")]


class Window(NamedTuple):
    """One window of word pieces of a text.

    Attributes:
        text: index of the text in the batch it was cut from.
        input_ids: word-piece ids, special pieces included.
        offsets: (start, end) characters of each piece in the text; (0, 0) for special pieces.
    """

    text: int
    input_ids: list[int]
    offsets: list[tuple[int, int]]


def windows(tokenizer, texts: Sequence[str], max_length: int, stride: int) -> list[Window]:
    """Every text cut into overlapping windows of at most ``max_length`` pieces (a fast tokenizer)."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), truncation=True, max_length=max_length, stride=stride,
                        return_overflowing_tokens=True, return_offsets_mapping=True)
    return [
        Window(int(sample), list(ids), [tuple(o) for o in offsets])
        for sample, ids, offsets in zip(encoded["overflow_to_sample_mapping"], encoded["input_ids"],
                                        encoded["offset_mapping"], strict=True)
    ]


def gold_tags(
    window: Window,
    spans: Iterable[tuple[int, int, str]],
    tags: Sequence[str],
    missing: Iterable[tuple[int, int]] = (),
) -> list[int]:
    """The tag id of every piece of ``window`` for gold ``spans`` (start, end, LABEL).

    Pieces of ``missing`` character ranges that start in no gold span get :data:`IGNORE`.
    """
    index = {name: i for i, name in enumerate(tags)}
    spans = sorted(spans)
    missing = list(missing)
    out: list[int] = []
    previous = None  # the gold span of the previous piece
    for start, end in window.offsets:
        if end <= start:
            out.append(IGNORE)
            previous = None
            continue
        owner = next((s for s in spans if s[0] <= start < s[1]), None)
        if owner is None:
            out.append(IGNORE if any(ms < end and start < me for ms, me in missing) else index["O"])
        else:
            out.append(index[f"{'I' if owner == previous else 'B'}-{owner[2]}"])
        previous = owner
    return out


def centrality(window: Window) -> list[int]:
    """Per piece, how many content pieces separate it from the nearer edge of its window (-1: special)."""
    content = [i for i, (s, e) in enumerate(window.offsets) if e > s]
    if not content:
        return [-1] * len(window.offsets)
    first, last = content[0], content[-1]
    return [min(i - first, last - i) if e > s else -1 for i, (s, e) in enumerate(window.offsets)]


def merge_windows(
    pieces: Iterable[tuple[Window, Sequence[int]]],
) -> dict[tuple[int, int], int]:
    """(start, end) of each piece of one text -> its predicted tag id, from the window where it is most central."""
    best: dict[tuple[int, int], tuple[int, int]] = {}
    for window, predicted in pieces:
        for offset, rank, tag in zip(window.offsets, centrality(window), predicted, strict=True):
            if rank < 0:
                continue
            if offset not in best or rank > best[offset][0]:
                best[offset] = (rank, int(tag))
    return {offset: tag for offset, (_, tag) in best.items()}


def decode(pieces: dict[tuple[int, int], int], tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """Character spans (start, end, kind) from tagged pieces.

    ``B-X`` opens a mention, ``I-X`` extends an open mention of kind X (or opens one: a model's stray
    ``I`` after ``O`` still marks a mention), anything else closes it. Kinds are labels in lower case.
    """
    out: list[tuple[int, int, str]] = []
    current: list | None = None  # [start, end, label]
    for (start, end), tag in sorted(pieces.items()):
        name = tags[tag]
        prefix, _, label = name.partition("-")
        if prefix == "I" and current is not None and current[2] == label:
            current[1] = end
            continue
        if current is not None:
            out.append((current[0], current[1], current[2].lower()))
            current = None
        if prefix in ("B", "I"):
            current = [start, end, label]
    if current is not None:
        out.append((current[0], current[1], current[2].lower()))
    return out


def misaligned(window_offsets: Iterable[Sequence[tuple[int, int]]], spans: Iterable[tuple[int, int, str]]) -> int:
    """Gold spans whose start or end falls inside a word piece (the tags cannot say them exactly)."""
    starts, ends = set(), set()
    for offsets in window_offsets:
        for s, e in offsets:
            if e > s:
                starts.add(s)
                ends.add(e)
    return sum(s not in starts or e not in ends for s, e, _ in spans)
