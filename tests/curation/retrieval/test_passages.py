from __future__ import annotations

from curation.records import Span
from curation.retrieval.passages import best_sentences, shift, split_sentences


def test_sentences_split_and_best_are_in_document_order():
    text = (
        "Melanoma is common. Vemurafenib inhibits BRAF V600E in melanoma (e.g. in trials). "
        "Patients were followed for 3 years. BRAF V600E predicts response to dabrafenib."
    )
    offsets = split_sentences(text)
    assert [text[s:e] for s, e in offsets][1] == "Vemurafenib inhibits BRAF V600E in melanoma (e.g. in trials)."
    assert len(offsets) == 4
    spans = [
        Span(text.index("BRAF"), text.index("BRAF") + 4, "BRAF", "Gene"),
        Span(text.index("V600E"), text.index("V600E") + 5, "V600E", "Variant"),
        Span(text.index("Vemurafenib"), text.index("Vemurafenib") + 11, "Vemurafenib", "Treatment"),
        Span(text.rindex("BRAF"), text.rindex("BRAF") + 4, "BRAF", "Gene"),
        Span(text.rindex("V600E"), text.rindex("V600E") + 5, "V600E", "Variant"),
        Span(text.index("dabrafenib"), text.index("dabrafenib") + 10, "dabrafenib", "Treatment"),
    ]
    best = best_sentences(
        text, spans, "Treatment for gene BRAF and variant V600E?", ("Gene", "Variant"), "Treatment", limit=2
    )
    assert [s.text[:11] for s in best] == ["Vemurafenib", "BRAF V600E "]
    assert best[0].score > 8


def test_shift_keeps_spans_inside_the_window():
    spans = [Span(10, 14, "BRAF", "Gene"), Span(2, 5, "x", "Gene")]
    assert shift(spans, 8, 20) == [Span(2, 6, "BRAF", "Gene")]
