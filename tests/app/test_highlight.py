from __future__ import annotations

from curation.records import Span
from pages.highlight import to_html


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
