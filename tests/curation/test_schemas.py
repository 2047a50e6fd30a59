from __future__ import annotations

import pytest

from curation.errors import SchemaError
from curation.schemas import PO, PTM, load_schemas, resolve_schema


def test_builtin_templates_match_the_paper():
    assert PO.render_query({"Gene": "BRAF", "Variant": "V600E"}) == "Treatment for gene BRAF and variant V600E?"
    query = PTM.render_query({"Protein": "AKT1", "PTM type": "phosphorylation", "Residue": "serine 473"})
    assert query == "Catalysts for the phosphorylation of AKT1 at serine 473?"
    assert PO.answer == "Treatment" and PTM.answer == "Catalyst"
    assert PO.query_types == ("Gene", "Variant")


def test_partial_relation_uses_the_first_template_that_fits():
    assert PO.render_query({"Gene": "BRAF", "Variant": "  "}) == "Treatment for gene BRAF?"
    assert PO.render_query({"Variant": "V600E"}) == "Treatment for variant V600E?"
    with pytest.raises(SchemaError, match="fill in at least one"):
        PO.render_query({"Gene": "", "Treatment": "vemurafenib"})


def test_user_schema_from_toml(tmp_path):
    path = tmp_path / "schemas.toml"
    path.write_text(
        """
[[schema]]
name = "GDC"
entity_types = ["Gene", "Disease", "Chemical"]
answer = "Chemical"
templates = ["Treatment for gene {Gene} and disease {Disease}?", "Treatment for gene {Gene}?"]
kinds = { Gene = "gene", Disease = "disease", Chemical = "chemical" }
"""
    )
    (schema,) = load_schemas(path)
    assert schema.render_query({"Gene": "TP53", "Disease": "glioma"}) == "Treatment for gene TP53 and disease glioma?"
    assert schema.kind("Chemical") == "chemical"
    assert schema.kind("Gene") == "gene"
    assert resolve_schema("gdc", [schema]) is schema


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[[schema]]\nname = "X"\nentity_types = ["A", "B"]\ntemplates = ["{A}?"]\n',
            "missing required field 'answer'",
        ),
        ('[[schema]]\nname = "X"\nentity_types = ["A", "B"]\nanswer = "C"\ntemplates = ["{A}?"]\n', "answer 'C'"),
        ('[[schema]]\nname = "X"\nentity_types = ["A", "B"]\nanswer = "B"\ntemplates = ["{B}?"]\n', "not a query"),
        ('[[schema]]\nname = "PO"\nentity_types = ["A", "B"]\nanswer = "B"\ntemplates = ["{A}?"]\n', "built in"),
        ("name = [", "not valid TOML"),
        ('title = "no schema"', "expected one or more"),
    ],
)
def test_bad_schema_files_name_the_problem(tmp_path, body, message):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(SchemaError, match=message) as info:
        load_schemas(path)
    assert str(path) in str(info.value)


def test_unknown_schema_lists_known_ones():
    with pytest.raises(SchemaError, match="known schemas: PO, PTM"):
        resolve_schema("CIViC2")
