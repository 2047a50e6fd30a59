"""The built-in margin tables hold every class of the EDEL paper's appendix (Tables 7 and 8), for every schema."""

from __future__ import annotations

import itertools

import pytest

from curation.errors import SchemaError
from curation.learning.margins import BUILTIN_TABLES, margin_table
from curation.schemas import BUILTIN, PO, PTM, read_toml

T, F = True, False

# The paper's classes: (positive class → margin), (negative class → margin); docs/EDEL.md.
PAPER = {
    "PO": ({1: 0.0, 2: 0.2, 3: 0.6, 5: 1.0, 6: 1.2}, {2: 0.2, 3: 0.6, 4: 0.8, 5: 1.0}),
    "PTM": ({1: 0.0, 2: 0.4, 3: 0.6, 4: 0.8, 5: 1.0}, {2: 0.4, 3: 0.6, 4: 0.8, 5: 1.0}),
}


def _patterns(width: int):
    return [tuple(bits) for bits in itertools.product((T, F), repeat=width)]


@pytest.mark.parametrize("schema", list(BUILTIN.values()), ids=list(BUILTIN))
def test_every_schema_has_every_class_of_the_paper(schema):
    assert schema.name in read_toml(BUILTIN_TABLES, "margin table"), "a built-in schema without its paper table"
    table = margin_table(schema)
    positives, negatives = PAPER[schema.name]
    margins = {c.name: c.margin for c in table.classes()}
    assert {n: m for n, m in margins.items() if n.startswith("pos-")} == {f"pos-{k}": v for k, v in positives.items()}
    assert {n: m for n, m in margins.items() if n.startswith("neg-")} == {f"neg-{k}": v for k, v in negatives.items()}
    assert {"bm25", "random"} <= set(margins)
    # Every text-match pattern of a positive falls in exactly one class, with a margin that never falls
    # as fewer entities are mentioned (appendix A.1: more matched entities, lower margin).
    for pattern in _patterns(table.width):
        margin = table.positive_class(pattern).margin
        for i, flag in enumerate(pattern):
            if flag:
                fewer = pattern[:i] + (F,) + pattern[i + 1 :]
                assert table.positive_class(fewer).margin >= margin, (pattern, fewer)


def test_ptm_class_2_is_the_appendix_0_4_for_positives_and_negatives():
    table = margin_table(PTM)
    assert table.positive_class((T, T, F, T)).margin == 0.4  # residue missing
    assert table.negative_class((T, T, F, T), (T, T, T, T)).name == "neg-2"
    assert table.negative_class((T, T, F, T), (T, T, T, T)).margin == 0.4


def test_ptm_class_4_row_with_the_protein_star():
    """Table 8(b) class 4, "1* - - 1": same protein and catalyst, the protein may be absent from its abstract."""
    table = margin_table(PTM)
    every = (T, T, T, T)
    assert table.negative_class((T, F, T, T), every).name == "neg-4"  # same protein, residue, catalyst; other PTM
    assert table.negative_class((T, T, F, T), (F, T, T, T)).name == "neg-4"  # class 2's pattern, protein unmentioned
    assert table.negative_class((T, F, F, T), (F, T, T, T)).name == "neg-4"  # class 3's pattern, protein unmentioned
    # the stricter rows still come first
    assert table.negative_class((T, T, F, T), every).name == "neg-2"
    assert table.negative_class((T, F, F, T), every).name == "neg-3"
    assert table.negative_class((F, F, F, T), every).name == "neg-4"
    # the star is about the protein only: an unmentioned catalyst still leaves the pair out
    assert table.negative_class((T, F, T, T), (T, T, T, F)) is None


def test_ptm_class_5_row_with_the_protein_star():
    table = margin_table(PTM)
    assert table.negative_class((T, F, T, F), (T, T, T, T)).name == "neg-5"
    assert table.negative_class((T, F, F, F), (F, T, T, T)).name == "neg-5"
    assert table.negative_class((T, F, F, F), (T, T, T, T)).name == "neg-4"  # Table 8(b) class 4 row "1 0 0 0"


def test_po_table_unchanged_by_the_ptm_rows():
    table = margin_table(PO)
    assert table.negative_class((T, F, T), (T, F, T)).name == "neg-2"
    assert table.negative_class((T, F, T), (F, T, T)) is None  # PO has no starred protein row


def test_one_class_with_two_margins_is_refused(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(
        '[PO]\n[[PO.positive]]\nclass = 1\nmargin = 0.0\ntext_match = ["---"]\n'
        '[[PO.negative]]\nclass = 4\nmargin = 0.8\nkb_match = ["100"]\n'
        '[[PO.negative]]\nclass = 4\nmargin = 0.7\nkb_match = ["001"]\n'
    )
    with pytest.raises(SchemaError, match="two margins"):
        margin_table(PO, path)
