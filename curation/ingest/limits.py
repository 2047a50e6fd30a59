"""Size limits every loader applies to one document or one field, and the message for each.

Why limits at all: a text goes through spaCy when the app's matcher analyses the corpus,
and spaCy refuses texts over 1,000,000 characters (error E088), so one oversized abstract
would stop every page that highlights. The limits sit far above real data (the longest
abstract in BioRED, BC5CDR and HoC has 4,162 characters, the longest title 294, the longest
CIViC field 3,144) and far below spaCy's.
"""

from __future__ import annotations

MAX_TITLE_CHARS = 10_000
MAX_ABSTRACT_CHARS = 100_000
MAX_FIELD_CHARS = 100_000  # one field of a knowledge-base TSV


def document_problem(pmid: str, title: str, abstract: str) -> tuple[str, str] | None:
    """(field, problem) when a document's title or abstract is empty, too long, or not valid Unicode."""
    if not abstract.strip():
        return "abstract", f"PMID {pmid} has an empty abstract; nothing to retrieve"
    for field, text, limit in (("title", title, MAX_TITLE_CHARS), ("abstract", abstract, MAX_ABSTRACT_CHARS)):
        if len(text) > limit:
            return field, (
                f"PMID {pmid}: the {field} has {len(text):,} characters, more than the limit of {limit:,}; "
                f"this is not one {field} (check how the file was exported)"
            )
        if problem := unicode_problem(text):
            return field, f"PMID {pmid}: the {field} {problem}"
    return None


def unicode_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as UTF-8 (an unpaired surrogate from a ``\\ud800`` escape), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds an unpaired surrogate (U+{ord(text[exc.start]):04X} at character {exc.start + 1}), "
            "which is not text; fix the escape in the file"
        )
    return None
