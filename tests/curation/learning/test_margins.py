from __future__ import annotations

import pytest

from curation.errors import SchemaError
from curation.learning.margins import derived_table, margin_table
from curation.schemas import PO, PTM, RelationSchema

T, F = True, False


def test_po_positive_classes_follow_the_appendix():
    table = margin_table(PO)
    assert table.positive_class((T, T, T)).margin == 0.0
    assert table.positive_class((T, F, T)).margin == 0.2  # variant missing
    assert table.positive_class((F, T, T)).margin == 0.2  # gene missing
    assert table.positive_class((T, T, F)).margin == 0.6  # treatment missing: appendix 0.6, not the body's 0.2
    assert {table.positive_class(p).margin for p in [(T, F, F), (F, T, F), (F, F, T)]} == {1.0}
    assert table.positive_class((F, F, F)).margin == 1.2


def test_po_negative_classes():
    table = margin_table(PO)
    every = (T, T, T)
    assert table.negative_class((T, F, T), (T, F, T)).name == "neg-2"  # its own variant not in its abstract
    assert table.negative_class((T, F, T), every).margin == 0.6
    assert table.negative_class((T, T, F), every).margin == 0.6  # same gene and variant, no answer
    assert table.negative_class((F, T, T), every).margin == 0.8
    assert table.negative_class((F, F, F), every).margin == 1.0
    assert table.negative_class((T, T, F), (T, F, T)) is None  # a noisy negative is not used
    assert (table.bm25.margin, table.random.margin) == (1.0, 1.2)


def test_ptm_table():
    table = margin_table(PTM)
    assert table.positive_class((T, T, T, T)).margin == 0.0
    assert table.positive_class((T, T, F, T)).margin == 0.4
    assert table.positive_class((T, T, T, F)).margin == 0.6
    assert table.positive_class((F, F, F, T)).margin == 0.8
    assert table.positive_class((F, F, F, F)).margin == 1.0
    assert table.negative_class((T, T, F, T), (T, T, T, T)).margin == 0.4


def test_derived_table_reproduces_po_and_weights_the_answer():
    clone = RelationSchema("POX", PO.entity_types, PO.answer, PO.templates)
    derived, builtin = derived_table(clone), margin_table(PO)
    for bits in range(8):
        pattern = tuple(bool((bits >> (2 - i)) & 1) for i in range(3))
        assert derived.positive_class(pattern).margin == builtin.positive_class(pattern).margin, pattern
    gdc = RelationSchema("GDC", ("Gene", "Disease", "Chemical", "Cell"), "Chemical", ("{Gene}?",))
    table = margin_table(gdc)
    assert table.positive_class((T, T, T, T)).margin == 0.0
    answer_missing = table.positive_class((T, T, F, T)).margin
    query_missing = table.positive_class((T, F, T, T)).margin
    assert query_missing < answer_missing
    assert table.negative_class((T, T, F, T), (T, T, T, T)).margin == 0.6


def test_user_margin_file_overrides_and_is_validated(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[PO]\n[[PO.positive]]\nclass = 1\nmargin = 0.1\ntext_match = ["---"]\n')
    assert margin_table(PO, path).positive_class((F, F, F)).margin == 0.1
    path.write_text('[PO]\n[[PO.positive]]\nclass = 1\nmargin = 2.5\ntext_match = ["---"]\n')
    with pytest.raises(SchemaError, match="outside"):
        margin_table(PO, path)
    path.write_text('[PO]\n[[PO.positive]]\nclass = 1\nmargin = 0.0\ntext_match = ["11"]\n')
    with pytest.raises(SchemaError, match="3 characters"):
        margin_table(PO, path)
