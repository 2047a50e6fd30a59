"""Turning an abstract and its entity spans into safe HTML, and picking its best sentences.

Abstracts are untrusted text: every character of it goes through :func:`escape_text`; only
the ``<mark>`` tags this module writes are markup. The pages show this HTML with
``st.markdown(..., unsafe_allow_html=True)``, which still parses Markdown around the tags, so
:func:`escape_text` also turns Markdown's punctuation into character references: an abstract's
"*2/*2 genotype" stays literal instead of turning italic, and ``[text](url)`` or ``![](url)``
in a title never becomes a link or a remote image. Sentence selection follows seeds 003/004:
score each sentence by the query entities it mentions (most), candidate answers, and plain
word overlap with the query, and show the best two or three first.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from curation.records import Span

_WORD = re.compile(r"[A-Za-z0-9]+")
# A sentence ends at . ! ? followed by space and a capital, digit or bracket; not after
# common abbreviations or single capitals ("e.g.", "Fig.", "B. subtilis").
_BOUNDARY = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bFig)(?<!\bet al)(?<!\b[A-Z])[.!?](?=\s+[A-Z0-9(\[])")
#: What a result shows in place of a title its source does not have (HoC's abstracts have none).
NO_TITLE_HTML = "<em>(no title in the source)</em>"
STOP = frozenset("a an and are as at be by for from in is it of on or the to with was were this that".split())
# HTML's five special characters, and Markdown punctuation that acts anywhere in a line (with GFM
# and Streamlit's extensions: tables, strikethrough, $math$, :emoji: and :color[text]): a character
# reference for it is plain text to a CommonMark parser. (GFM's autolinks of bare URLs and e-mail
# addresses are found after references are decoded: a URL in an abstract stays a link, opened in
# a new tab with rel="noopener noreferrer".)
_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
    | {c: f"&#{ord(c)};" for c in "\\`*_[]{}()~$:|!#"}
)
# What makes a list, heading, rule or indented code block at the start of a line.
_BLOCK_START = re.compile(r"(^|\n)([ \t0-9+=-])")


def escape_text(text: str, line_start: bool = True) -> str:
    """Untrusted text as HTML that Markdown leaves alone: HTML-escaped, Markdown punctuation as references.

    The result reads as exactly ``text`` in HTML and through ``st.markdown``, with or without
    ``unsafe_allow_html``.

    Args:
        text: the untrusted text.
        line_start: whether ``text`` begins a line (where "1." or "-" would start a list).

    Example:
        >>> escape_text("<b>*x*</b>")
        '&lt;b&gt;&#42;x&#42;&lt;/b&gt;'
    """
    escaped = text.translate(_ESCAPES)

    def block(match: re.Match) -> str:
        newline, first = match.groups()
        return match.group(0) if not newline and not line_start else f"{newline}&#{ord(first)};"

    return _BLOCK_START.sub(block, escaped)

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


def to_html(
    text: str, spans: Iterable[Span], classes: dict[str, str] | None = None, shown: set[str] | None = None
) -> str:
    """``text`` escaped, with non-overlapping spans wrapped in ``<mark class="...">``.

    Args:
        text: the untrusted text.
        spans: spans with offsets into ``text``; overlapping ones keep the longest (then first).
        classes: entity type → CSS class (default "ent-<type>").
        shown: entity types to mark (None: all).
    """
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (-(s.end - s.start), s.start)):
        if shown is not None and span.entity_type not in shown:
            continue
        if span.start < 0 or span.end > len(text) or span.start >= span.end:
            continue
        if all(span.end <= c.start or span.start >= c.end for c in chosen):
            chosen.append(span)
    out, position = [], 0
    for span in sorted(chosen, key=lambda s: s.start):
        out.append(_escape_at(text, position, span.start))
        css = (classes or {}).get(span.entity_type) or "ent-" + re.sub(r"[^a-z0-9-]", "-", span.entity_type.lower())
        # An attribute value is never parsed as Markdown: HTML escaping is enough there.
        title = html.escape(f"{span.entity_type}: {span.concept or span.text}", quote=True)
        out.append(f'<mark class="{css}" title="{title}">{_escape_at(text, span.start, span.end)}</mark>')
        position = span.end
    out.append(_escape_at(text, position, len(text)))
    return "".join(out)


def _escape_at(text: str, start: int, end: int) -> str:
    """``text[start:end]`` escaped, knowing whether it begins a line of ``text``."""
    return escape_text(text[start:end], line_start=start == 0 or text[start - 1] == "\n")


def shift(spans: Iterable[Span], offset: int, length: int) -> list[Span]:
    """Spans moved by ``-offset`` and cut to those inside a window of ``length`` characters."""
    out = []
    for s in spans:
        if s.start >= offset and s.end <= offset + length:
            out.append(Span(s.start - offset, s.end - offset, s.text, s.entity_type, s.concept, s.how))
    return out
