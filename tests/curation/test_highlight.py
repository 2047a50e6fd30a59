from __future__ import annotations

from curation.records import Span
from curation.workflows.highlight import best_sentences, shift, split_sentences, to_html


def test_html_is_escaped_and_only_marks_are_markup():
    text = 'BRAF <script>alert("x")</script> & V600E'
    spans = [Span(0, 4, "BRAF", "Gene", "BRAF"), Span(35, 40, "V600E", "Variant", "V600E")]
    out = to_html(text, spans)
    assert "<script>" not in out and "&lt;script&gt;" in out and "&amp;" in out
    assert out.startswith('<mark class="ent-gene" title="Gene: BRAF">BRAF</mark>')
    assert out.endswith('<mark class="ent-variant" title="Variant: V600E">V600E</mark>')
    assert out.count("<mark") == 2


def test_overlaps_keep_the_longest_and_types_can_be_hidden():
    text = "BCR-ABL1 fusion"
    spans = [Span(0, 3, "BCR", "Gene"), Span(0, 8, "BCR-ABL1", "Variant"), Span(99, 120, "x", "Gene")]
    assert to_html(text, spans).count("<mark") == 1
    assert "ent-variant" in to_html(text, spans)
    assert to_html(text, spans, shown={"Gene"}) == '<mark class="ent-gene" title="Gene: BCR">BCR</mark>-ABL1 fusion'
    assert to_html(text, spans, shown=set()) == "BCR-ABL1 fusion"


def test_title_attribute_cannot_break_out():
    out = to_html("x", [Span(0, 1, "x", "Gene", concept='"><img src=x onerror=alert(1)>')])
    assert "<img" not in out and "&quot;&gt;&lt;img" in out


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
