"""Relation schemas while the app runs: the starter set, add / edit / remove under the in-use rules, CURATION_SCHEMAS
read by the app and by every command, and the Knowledge base page's form."""

from __future__ import annotations

import pytest

from curation.errors import SchemaError
from curation.grades import Grade
from curation.schemas import STARTER, schema_from_dict
from curation.store.base import list_schemas
from curation.store.decisions import record_decision
from curation.store.opening import open_store
from curation.workflows.schemas import apply_schema_file, delete_schema, draft, known_schemas, save_schema

GENE_DRUG = """
[[schema]]
name = "Gene-Drug"
entity_types = ["Gene", "Drug"]
answer = "Drug"
templates = ["Drugs for gene {Gene}?"]
kinds = { Gene = "gene", Drug = "chemical" }
"""


def test_a_new_store_has_the_starter_schemas_beside_the_built_in_ones():
    con = open_store(":memory:")
    names = [s.name for s in list_schemas(con)]
    assert names[:2] == ["PO", "PTM"] and {s.name for s in STARTER} <= set(names)
    disease = next(s for s in list_schemas(con) if s.name == "Disease-Treatment")
    assert disease.query_types == ("Disease",) and disease.kind("Treatment") == "chemical"
    assert disease.render_query({"Disease": "melanoma"}) == "Treatment for disease melanoma?"


def test_draft_checks_the_form_and_previews_each_template():
    ok = draft("Gene-Drug", "Gene, Variant, Drug", "Drug", "Drugs for {Gene} {Variant}?\nDrugs for {Gene}?",
               {"Gene": "gene", "Variant": "variant", "Drug": "chemical"})
    assert not ok.error and ok.examples == (("Drugs for {Gene} {Variant}?", "Drugs for <Gene> <Variant>?"),
                                            ("Drugs for {Gene}?", "Drugs for <Gene>?"))
    assert "not one of" in draft("X", "Gene, Drug", "Dose", "For {Gene}?", {}).error  # the answer is no slot
    assert "{Drug}" in draft("X", "Gene, Drug", "Drug", "For {Drug}?", {}).error  # the answer in a template
    assert "kind 'enzyme'" in draft("X", "Gene, Drug", "Drug", "For {Gene}?", {"Gene": "enzyme"}).error


def test_a_schema_in_use_keeps_its_slots_and_an_unused_one_is_removed():
    from curation.records import Document
    from curation.store.corpus import add_documents

    con = open_store(":memory:")
    add_documents(con, [Document("1", "BRAF and vemurafenib", "Vemurafenib treats BRAF mutant melanoma.")])
    schema = draft("Gene-Drug", "Gene, Drug", "Drug", "Drugs for gene {Gene}?", {"Gene": "gene"}).schema
    save_schema(con, "", schema)
    with pytest.raises(SchemaError, match="exists"):
        save_schema(con, "", schema)  # a new schema never replaces one silently
    with pytest.raises(SchemaError, match="built in"):
        save_schema(con, "", schema_from_dict({**schema.to_dict(), "name": "PO"}), replacing="PO")
    record_decision(con, "ana", schema, {"Gene": "BRAF"}, "1", Grade.COMPLETE)
    wider = draft("Gene-Drug", "Gene, Variant, Drug", "Drug", "Drugs for gene {Gene}?", {}).schema
    with pytest.raises(SchemaError, match="1 decisions"):
        save_schema(con, "", wider, replacing="Gene-Drug")
    reworded = draft("Gene-Drug", "Gene, Drug", "Drug", "Which drugs act on {Gene}?", {"Gene": "gene"}).schema
    save_schema(con, "", reworded, replacing="Gene-Drug")  # templates may change while in use
    assert next(s for s in list_schemas(con) if s.name == "Gene-Drug").templates == ("Which drugs act on {Gene}?",)
    with pytest.raises(SchemaError, match="cannot be removed: the store has 1 decisions"):
        delete_schema(con, "", "Gene-Drug")
    delete_schema(con, "", "Gene-Disease")  # a starter schema nothing uses
    assert "Gene-Disease" not in {s.name for s in list_schemas(con)}
    with pytest.raises(SchemaError, match="built in"):
        delete_schema(con, "", "PTM")


def test_editing_schemas_needs_the_import_role():
    from curation import access
    from curation.access import Identity, IdentitySource
    from curation.errors import AccessDeniedError

    mia, cal = (Identity(n, IdentitySource.OIDC) for n in ("mia@example.org", "cal@example.org"))
    con = open_store(":memory:")
    access.sign_in(con, mia)  # the first to sign in maintains the team store
    access.sign_in(con, cal)
    access.grant(con, mia, cal.name, "curator")
    schema = draft("Gene-Drug", "Gene, Drug", "Drug", "Drugs for gene {Gene}?", {}).schema
    with pytest.raises(AccessDeniedError):
        save_schema(con, cal, schema)
    with pytest.raises(AccessDeniedError):
        delete_schema(con, cal, "Gene-Disease")
    save_schema(con, mia, schema)


def test_the_schema_file_is_saved_by_a_writing_open_and_read_by_a_reading_command(tmp_path, monkeypatch, fixtures):
    from curation.cli import main

    path = tmp_path / "schemas.toml"
    path.write_text(GENE_DRUG)
    con = open_store(":memory:")
    assert apply_schema_file(con, path) == ["Gene-Drug"] and apply_schema_file(con, path) == ["Gene-Drug"]
    assert "Gene-Drug" in {s.name for s in list_schemas(con)}
    bare = open_store(":memory:")
    assert "Gene-Drug" in {s.name for s in known_schemas(bare, path)}  # read-only commands read the file
    (tmp_path / "bad.toml").write_text(GENE_DRUG.replace('answer = "Drug"', 'answer = "Dose"'))
    with pytest.raises(SchemaError, match="bad.toml"):
        apply_schema_file(con, tmp_path / "bad.toml")
    # Through the command line: any writing command saves the file's schemas into the store.
    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("CURATION_SCHEMAS", str(path))
    assert main(["ingest-corpus", "--db", str(db), "pubtator", str(fixtures / "pubtator" / "small.PubTator")]) == 0
    check = open_store(db, read_only=True)
    assert "Gene-Drug" in {s.name for s in list_schemas(check)}
    check.close()
