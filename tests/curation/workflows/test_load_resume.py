"""A load of the sample stopped at any step is finished by the next load or the next start, as a clean load."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from curation.config import Settings
from curation.entities.annotation import Annotator
from curation.entities.served_annotator import dictionary_matcher
from curation.store.base import stats
from curation.store.loads import unfinished_load
from curation.store.opening import open_store
from curation.workflows import background_load
from curation.workflows.quickstart import LoadStopped, load_sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
COUNTED = ("kb_records", "documents", "mentions", "synonyms", "annotations", "annotated_documents")


class PowerCut(BaseException):
    """Stands for the process dying: nothing of the load catches it."""


@pytest.fixture
def sample_dir(tmp_path) -> Path:
    folder = tmp_path / "data"
    for source, target in [
        ("civic/current.tsv", "civic/civic_evidence_small.tsv"),
        ("pubtator/small.PubTator", "biored/Train.PubTator"),
        ("bench/bc5cdr/CDR_Small.PubTator.txt", "bc5cdr/CDR_Small.PubTator.txt"),
        ("bench/hoc/tiny_hoc.jsonl", "hoc/hoc_abstracts.jsonl"),
    ]:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / source, folder / target)
    return folder


def _settings(tmp_path: Path, data_dir: Path, db: Path | None = None) -> Settings:
    return dataclasses.replace(Settings(), data_dir=data_dir, cache_dir=tmp_path / "cache", vocabularies=(),
                               db_path=db or tmp_path / "store.duckdb")


def _annotator(con):
    return lambda: Annotator(dictionary_matcher(con))


def _contents(con) -> dict[str, int]:
    counts = stats(con)
    out = {name: counts[name] for name in COUNTED}
    out["relation_pairs"] = con.execute("SELECT count(*) FROM relation_pairs").fetchone()[0]
    return out


def _clean_load(tmp_path: Path, sample_dir: Path) -> dict[str, int]:
    clean = open_store(tmp_path / "clean.duckdb")
    try:
        report = load_sample(clean, _settings(tmp_path, sample_dir), annotator=_annotator(clean))
        assert not report.failed and report.annotation is not None and report.annotation.annotated > 0
        assert unfinished_load(clean) is None
        return _contents(clean)
    finally:
        clean.close()


def test_a_load_cut_in_a_file_step_is_finished_by_the_next_load_as_a_clean_one(con, tmp_path, sample_dir,
                                                                               monkeypatch):
    from curation.workflows import quickstart

    real = quickstart.ingest_corpus
    calls = []

    def dies_on_the_second_corpus(con, fmt, path, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            real(con, fmt, path, **kwargs)  # its rows are in, but the step never hears of it
            raise PowerCut
        return real(con, fmt, path, **kwargs)

    monkeypatch.setattr(quickstart, "ingest_corpus", dies_on_the_second_corpus)
    settings = _settings(tmp_path, sample_dir)
    with pytest.raises(PowerCut):
        load_sample(con, settings, annotator=_annotator(con))
    left = unfinished_load(con)
    assert [s.kind for s in left.pending] == ["corpus", "corpus", "annotate"]
    state = background_load.index_state(con, settings)
    assert state.building and state.annotated == 0
    message = state.message()
    assert "still being built" in message and "0 of " in message
    assert "bc5cdr/CDR_Small.PubTator.txt, hoc/hoc_abstracts.jsonl, annotating the abstracts" in message

    monkeypatch.setattr(quickstart, "ingest_corpus", real)
    report = load_sample(con, settings, annotator=_annotator(con))  # the next load: the steps left, nothing else
    assert [o.file.label for o in report.outcomes] == ["bc5cdr/CDR_Small.PubTator.txt", "hoc/hoc_abstracts.jsonl"]
    assert "finishing a load that had stopped" in report.summary()
    assert unfinished_load(con) is None
    assert background_load.index_state(con, settings).message() == ""
    assert _contents(con) == _clean_load(tmp_path, sample_dir)


def test_a_load_cut_while_annotating_is_finished_at_the_next_start_in_the_background(tmp_path, sample_dir):
    db = tmp_path / "app.duckdb"
    settings = _settings(tmp_path, sample_dir, db)
    con = open_store(db)
    batches = []

    class DiesAnnotating(Annotator):
        def annotate(self, texts):
            batches.append(len(texts))
            raise PowerCut

    with pytest.raises(PowerCut):
        load_sample(con, settings, annotator=lambda: DiesAnnotating(dictionary_matcher(con)))
    assert batches and [s.kind for s in unfinished_load(con).pending] == ["annotate"]
    assert _contents(con)["annotated_documents"] == 0  # the documents are in, the concept index is empty
    con.close()

    con = open_store(db)  # the next start: the app's store, and the check every run makes
    try:
        started = background_load.resume_unfinished_load(con.cursor, settings)
        assert started is not None and started.name == "Loading the sample"
        done = background_load.wait_for_load(settings, timeout=300)
        assert done.finished and not done.error, done
        assert "finishing a load that had stopped" in done.summary
        assert unfinished_load(con) is None
        # Once per process: a finished load is not started again by the next run's check.
        assert background_load.resume_unfinished_load(con.cursor, settings).finished
        completed = _contents(con)
    finally:
        con.close()
    assert completed == _clean_load(tmp_path, sample_dir)


def test_a_load_asked_to_stop_leaves_its_step_pending(con, tmp_path, sample_dir):
    settings = _settings(tmp_path, sample_dir)
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 3  # the first file, then a few row batches: stop

    with pytest.raises(LoadStopped):
        load_sample(con, settings, annotator=_annotator(con), stop=stop)
    left = unfinished_load(con)
    assert left is not None and left.pending[-1].kind == "annotate"
    assert load_sample(con, settings, annotator=_annotator(con)).annotation.annotated > 0
    assert unfinished_load(con) is None


def test_a_finished_load_is_not_resumed_and_a_new_one_is_planned_whole(con, tmp_path, sample_dir):
    settings = _settings(tmp_path, sample_dir)
    load_sample(con, settings)
    assert background_load.resume_unfinished_load(con.cursor, _settings(tmp_path, sample_dir, tmp_path / "x")) is None
    again = load_sample(con, settings)
    assert again.nothing_new and len(again.outcomes) == 4
