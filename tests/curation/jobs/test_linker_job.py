"""The linker job from the app: trained (tiny) in the worker, judged and activated by the app once, the abstracts
annotated again by the active recogniser's job; the Train page's overview of the trained linkers.

The tiny names of tests/curation/learning/tiny_linker.py stand in for BioRED, BC5CDR and DrugBank; one linker is
trained through a job (the worker's ``run`` in this process), the others are copies of one trained per module.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from curation import access
from curation.config import load_settings
from curation.errors import AccessDeniedError, CurationError
from curation.jobs import retraining, worker
from curation.jobs.result import JobResult, job_result, write_result
from curation.learning.linker.learner import LinkerRequest, train_in_process
from curation.store.annotations import get_active_entity_model, insert_entity_model, set_active_entity_model
from curation.store.jobs import get_job, list_jobs
from curation.store.opening import open_store
from curation.workflows import linker_training as workflow
from curation.workflows import retrain, team
from curation.workflows.ingestion import ingest_corpus, ingest_kb
from tests.curation.learning.tiny_linker import write_tiny_data_dir

TINY_STEPS = 2


@pytest.fixture(scope="module")
def tiny_linker(tmp_path_factory) -> Path:
    """One linker trained on the tiny names (2 steps, seconds), copied by the tests that need a folder."""
    root = tmp_path_factory.mktemp("tiny-linker")
    train_in_process(LinkerRequest(name="tiny", data_dir=str(write_tiny_data_dir(root / "data")),
                                   models_dir=str(root / "linkers"), steps=TINY_STEPS, device="cpu",
                                   vocabularies=False))
    return root / "linkers" / "tiny"


@pytest.fixture
def app_store(tmp_path, fixtures, monkeypatch):
    """A store with the fixture KB and corpus; models, jobs and the kept dictionaries under tmp_path."""
    monkeypatch.setenv("CURATION_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("CURATION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CURATION_JOBS_DIR", str(tmp_path / "jobs"))
    con = open_store(tmp_path / "s.duckdb")
    ingest_kb(con, "civic", fixtures / "civic" / "current.tsv")
    ingest_corpus(con, "pubtator", fixtures / "pubtator" / "small.PubTator")
    yield con
    con.close()


def _no_launch(job_dir: Path) -> int:
    return 2**22 + 4321  # no such process: the worker "is gone" once the test has run it here


def _copy(tiny: Path, name: str, accuracy_delta: float = 0.0) -> Path:
    """The tiny linker under models/linkers/<name>, its manifest's name and dev accuracy@1 changed."""
    folder = load_settings().models_dir / "linkers" / name
    shutil.copytree(tiny, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["name"] = name
    manifest["dev"]["dev_fuzzy_acc1"] += accuracy_delta
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _succeeded_job(con, folder: Path):
    """A linker job whose worker 'trained' ``folder``: its result written, the job finished but not applied."""
    job = workflow.start_linker_training(con, load_settings(), steps=TINY_STEPS, data_dir=write_tiny_data_dir(
        Path(load_settings().models_dir).parent / "data"), name=f"job-{folder.name}", launch=_no_launch)
    write_result(Path(job.job_dir) / "result.json", JobResult(
        state="succeeded", message=f"trained {folder.name}", version=folder.name, path=str(folder)))
    return retraining.poll_job(con, job)


def test_the_overview_of_an_empty_models_folder_says_names_link_exactly(app_store):
    overview = workflow.linker_overview(app_store, load_settings())
    assert overview.active is None and overview.trained == () and overview.problems == ()
    assert overview.note == workflow.NO_LINKER and overview.default_steps == workflow.DEFAULT_STEPS


def test_a_trained_linker_is_activated_once_and_the_message_recorded(app_store, tmp_path):
    con, settings = app_store, load_settings()
    job = workflow.start_linker_training(con, settings, steps=TINY_STEPS, data_dir=write_tiny_data_dir(tmp_path / "d"),
                                         name="tiny", launch=_no_launch, vocabularies=False)
    assert job.kind == "linker" and job.params["models_dir"] == str(settings.models_dir / "linkers")
    assert job.params["steps"] == TINY_STEPS
    result = worker.run(Path(job.job_dir))  # what the worker process does
    assert result.succeeded, result.message
    folder = settings.models_dir / "linkers" / "tiny"
    assert result.path == str(folder) and "dev_fuzzy_acc1" in result.scores

    assert retrain.current_job(con) is None  # the poll finishes the job and applies it
    job = get_job(con, job.job_id)
    assert job.state == "succeeded" and job_result(job).activated is True, job.message
    assert job.message.startswith("tiny is active (activated: no linker was active)")
    assert "no recogniser is active" in job.message  # nothing to annotate again: highlights are dictionaries'
    assert get_active_entity_model(con, "linker").path == str(folder)
    assert workflow.apply_linker_jobs(con)[0].message == job.message  # applied once only

    overview = workflow.linker_overview(con, settings)
    assert overview.active is not None and overview.active.name == "tiny" and overview.active.active
    assert [t.name for t in overview.trained] == ["tiny"] and "typed names in searches" in overview.note
    accuracy = overview.active.accuracy
    assert overview.active.summary().startswith(f"dev accuracy@1 {accuracy:.3f} on 4 dev names")
    assert overview.active.label().endswith(f", dev acc@1 {accuracy:.3f}, active)")


def test_a_worse_or_unreadable_linker_keeps_the_active_one(app_store, tiny_linker):
    con, settings = app_store, load_settings()
    good = _copy(tiny_linker, "good", accuracy_delta=0.5)
    done = workflow.activate_linker(con, settings, good)  # by hand: always, without a judge
    assert done.name == "good" and done.job is None and "no recogniser is active" in done.message
    worse = _copy(tiny_linker, "worse")

    assert workflow.apply_linker_jobs(con, settings) == []  # no linker job yet
    job = workflow.apply_linker_job(con, _succeeded_job(con, worse), settings)
    assert job_result(job).activated is False and "kept inactive" in job.message and "below" in job.message
    assert "python -m curation activate-linker" in job.message
    assert get_active_entity_model(con, "linker").path == str(good)

    gone = settings.models_dir / "linkers" / "gone"  # judged from a manifest that is not there
    job = workflow.apply_linker_job(con, _succeeded_job(con, gone), settings)
    assert job_result(job).activated is False and "could not be activated" in job.message
    assert get_active_entity_model(con, "linker").path == str(good)
    assert {t.name: t.active for t in workflow.linker_overview(con, settings).trained} == {"good": True,
                                                                                             "worse": False}


def test_activating_with_an_active_recogniser_starts_its_annotation_job(app_store, tiny_linker, tmp_path):
    import spacy

    con, settings = app_store, load_settings()
    recogniser = settings.models_dir / "recognisers" / "biomed"
    (recogniser / "model").mkdir(parents=True)
    (recogniser / "model" / "meta.json").write_text("{}")
    (recogniser / "manifest.json").write_text(json.dumps({
        "name": "biomed", "format": "recogniser/1", "spacy_version": spacy.__version__, "labels": ["GENE"],
        "created": "2025-01-02T03:04:05+00:00", "trained_on": {}, "selected_on": "biored_dev",
        "dev_scores": {"ents_f": 0.8}}))
    insert_entity_model(con, "recogniser", str(recogniser), "biomed")
    set_active_entity_model(con, "recogniser", str(recogniser))
    folder = _copy(tiny_linker, "names-a")

    done = workflow.activate_linker(con, settings, folder, launch=_no_launch)
    assert done.job is not None and done.job.kind == "recogniser"
    assert done.job.params["folder"] == str(recogniser) and done.job.params["linker"] == str(folder)
    assert done.message == (f"names-a is active; job {done.job.job_id} annotates the abstracts again with "
                            "recogniser biomed and this linker")
    assert "links the names the active recogniser finds" in workflow.linker_overview(con, settings).note

    again = workflow.activate_linker(con, settings, _copy(tiny_linker, "names-b"), launch=_no_launch)
    assert again.job is None and "is running" in again.message  # the first one runs
    assert "Train & evaluate → Entity recogniser → Activate" in again.message
    assert get_active_entity_model(con, "linker").name == "names-b"


def test_the_overview_lists_an_unreadable_folder_as_a_problem(app_store, tiny_linker):
    con, settings = app_store, load_settings()
    _copy(tiny_linker, "names-a")
    (settings.models_dir / "linkers" / "junk").mkdir()
    (settings.models_dir / "linkers" / "half.tmp").mkdir()  # a job's staging folder: not listed
    overview = workflow.linker_overview(con, settings)
    assert [t.name for t in overview.trained] == ["names-a"] and overview.active is None
    assert len(overview.problems) == 1 and "junk/manifest.json: missing" in overview.problems[0]
    assert overview.trained[0].precision and all(kind in ("chemical", "gene") for kind in overview.trained[0].precision)


def test_training_and_activating_need_their_roles(app_store, tiny_linker, tmp_path):
    con, settings = app_store, load_settings()
    ana = access.Identity("ana@example.org", access.IdentitySource.OIDC)
    ben = access.Identity("ben@example.org", access.IdentitySource.OIDC)
    access.sign_in(con, ana)  # the first sign-in of a team store: maintainer
    team.grant_role(con, ana, ben.name, "curator")
    folder = _copy(tiny_linker, "names-a")
    for who in (ben, "ana@example.org"):  # a curator; the maintainer's typed name is not her
        with pytest.raises(AccessDeniedError):
            workflow.start_linker_training(con, settings, data_dir=write_tiny_data_dir(tmp_path / "d"),
                                           launch=_no_launch, who=who)
        with pytest.raises(AccessDeniedError):
            workflow.activate_linker(con, settings, folder, who=who)
    assert list_jobs(con) == [] and get_active_entity_model(con, "linker") is None
    with pytest.raises(CurationError, match="at least one step"):
        workflow.start_linker_training(con, settings, steps=0, who=ana)
