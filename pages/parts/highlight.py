"""Turning an abstract and its entity spans into safe HTML.

Abstracts are untrusted text: every character of it goes through :func:`escape_text`; only
the ``<mark>`` tags this module writes are markup. The pages show this HTML with
``st.markdown(..., unsafe_allow_html=True)``, which still parses Markdown around the tags, so
:func:`escape_text` also turns Markdown's punctuation into character references: an abstract's
"*2/*2 genotype" stays literal instead of turning italic, and ``[text](url)`` or ``![](url)``
in a title never becomes a link or a remote image. The workflows hand over text and spans
(:class:`curation.records.MarkedText`); which sentences are best is
:mod:`curation.retrieval.passages`'s.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from curation.records import MarkedText, Span

#: What a result shows in place of a title its source does not have (HoC's abstracts have none).
NO_TITLE_HTML = "<em>(no title in the source)</em>"
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


def marked_html(marked: MarkedText, shown: set[str] | None = None) -> str:
    """A workflow's text with its spans as :func:`to_html` writes it (its role spans marked)."""
    return to_html(marked.text, marked.spans, shown=shown)


def title_html(title: MarkedText) -> str:
    """A result's title as HTML, or :data:`NO_TITLE_HTML` when its source has none."""
    return marked_html(title) if title.text else NO_TITLE_HTML
