from __future__ import annotations

from curation.records import Span
from pages.parts.highlight import to_html


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


def test_a_cards_mention_line_says_how_often_the_card_highlights_a_concept_the_index_lists_less():
    from types import SimpleNamespace

    from curation.records import MarkedText, Span
    from index.hits import ConceptMatch
    from pages.parts.concept_chips import mentions_caption

    text = "BRAF V600E. BRAF inhibitors act on BRAF."
    spans = tuple(Span(m, m + 4, "BRAF", "query", "Gene: BRAF", "dictionary") for m in (0, 12, 36))
    row = SimpleNamespace(title=MarkedText("", ()), abstract=MarkedText(text, spans),
                          concepts=(ConceptMatch("Gene", "BRAF", 1, ((0, 4),), "concept index: gold"),))
    concepts = (SimpleNamespace(slot="Gene", canonical="BRAF"), SimpleNamespace(slot="Variant", canonical="V600E"))
    caption = mentions_caption(row, concepts)
    assert "1 mention; 3 highlighted" in caption and "not mentioned&#58; Variant V600E" in caption
    same = SimpleNamespace(**{**vars(row), "concepts": (ConceptMatch("Gene", "BRAF", 3, (), "concept index"),)})
    assert "highlighted" not in mentions_caption(same, concepts[:1])  # the index lists all three: nothing to add
