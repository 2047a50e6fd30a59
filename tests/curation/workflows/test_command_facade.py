"""The facade functions the command line calls (curation.workflows: shell, sources, retrain, model_training):
each does what the command did itself before, behind the same role checks."""

from __future__ import annotations

from curation.access import local_operator
from curation.records import Document, KBRecord
from curation.schemas import PO
from curation.store.base import list_schemas, transaction
from curation.store.corpus import add_documents
from curation.store.kb import add_kb_records
from curation.workflows import retrain, sources
from curation.workflows.model_training import RecogniserOptions, recogniser_plan
from curation.workflows.schemas import add_schemas
from curation.workflows.shell import open_command_store, operator


def test_the_shell_acts_as_the_local_operator_and_opens_read_only_without_writing(tmp_path):
    assert operator() == local_operator()
    db = tmp_path / "s.duckdb"
    open_command_store(db).close()  # created, migrated
    con = open_command_store(db, read_only=True)
    try:
        assert {s.name for s in list_schemas(con)} >= {"PO"}
    finally:
        con.close()


def test_cited_and_missing_pmids(con):
    with transaction(con):
        add_kb_records(con, [KBRecord(PO.name, (("Gene", g), ("Variant", v)), pmid, "t", f"t{i}")
                             for i, (g, v, pmid) in enumerate((("BRAF", "V600E", "2"), ("KRAS", "G12C", "1"),
                                                               ("KRAS", "G12D", "1")))], "t")
        add_documents(con, [Document("2", "t", "a", "t")])
    assert sources.cited_pmids(con) == ["1", "2"]
    assert sources.missing_pmids(con, ["3", "2", "1"]) == ["3", "1"]


def test_add_schemas_reads_the_file_into_the_store(con, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[[schema]]\nname = "DX"\nentity_types = ["Gene", "Disease"]\nanswer = "Disease"\n'
                    'templates = ["Diseases of {Gene}?"]\n')
    added = add_schemas(con, operator(), path)
    assert [s.name for s in added] == ["DX"] and "DX" in {s.name for s in list_schemas(con)}


def test_the_retrain_form_carries_the_command_s_fields_into_the_request(con, monkeypatch):
    asked = {}
    monkeypatch.setattr(retrain.retraining, "start_retrain", lambda c, request, s: asked.setdefault("r", request))
    form = retrain.RetrainForm(schema="PO", learning_rate=1e-4, device="cpu", seed=7, decision_repeat=3,
                               cross_encoder="off", conflicts="latest")
    retrain.start(con, form, settings=None, who=operator())
    request = asked["r"]
    assert (request.learning_rate, request.device, request.seed, request.cross_encoder) == (1e-4, "cpu", 7, "off")
    assert request.feedback.repeat == 3 and request.feedback.conflicts == "latest"
    page = retrain.RetrainForm(schema="PO")  # the page's form keeps the request's defaults
    assert (page.learning_rate, page.device, page.seed, page.decision_repeat, page.cross_encoder) == (
        2e-5, "", 13, 1, "auto")


def test_the_cnn_recogniser_plan_fills_in_the_defaults(tmp_path):
    from curation.config import load_settings

    settings = load_settings()
    plan = recogniser_plan(RecogniserOptions(), settings)
    assert plan.out == settings.models_dir / "recognisers" / "biomed" and plan.epochs == 25 and plan.device == ""
    plan = recogniser_plan(RecogniserOptions(data_dir=tmp_path, out=tmp_path / "r", epochs=3), settings)
    assert (plan.data_dir, plan.out, plan.epochs) == (tmp_path, tmp_path / "r", 3)
