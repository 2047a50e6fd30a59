"""The Train & evaluate page's entity linker section: the note without a linker, the trained ones listed from their
manifests, training in the background (its own progress panel), the active one's dev figures."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from streamlit.testing.v1 import AppTest

from curation.config import PROJECT_ROOT

APP = str(PROJECT_ROOT / "app.py")


def _train_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/train.py").run()
    return at


def _linker_folder(models: Path, name: str, accuracy: float) -> Path:
    """A linker folder with a manifest only: enough for this page, which reads manifests (never the encoder)."""
    from curation.entities.linking import FORMAT_VERSION

    folder = models / "linkers" / name
    (folder / "encoder").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format_version": FORMAT_VERSION, "name": name, "base_model": "all-MiniLM-L6-v2",
        "created": "2025-01-02T03:04:05+00:00", "device": "cpu", "train_seconds": 12.0, "weight": 0.6,
        "thresholds": {"chemical": {"min_score": 0.7, "dev_precision": 0.981, "dev_applied": 40, "dev_total": 90}},
        "counts": {}, "config": {"steps": 800}, "dev": {"dev_names": 1204, "dev_fuzzy_acc1": accuracy},
    }))
    return folder


def _stand_in_worker(job_dir):
    """A process in place of the worker: alive until the test writes its result and kills it."""
    import subprocess
    import sys

    from curation.jobs import retraining

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "curation.jobs.worker"],
                            start_new_session=True)
    retraining._CHILDREN[proc.pid] = proc
    return proc.pid


def test_linker_section_says_exact_names_trains_in_the_background_and_lists_trained_ones(loaded_db, tmp_path,
                                                                                         monkeypatch):
    from curation.jobs import retraining
    from curation.learning.linker import data
    from curation.learning.linker.name_encoder import NAME_ENCODER_LOOP
    from curation.store.jobs import get_job, list_jobs
    from pages.parts.common import connection

    monkeypatch.setattr(retraining, "spawn_worker", _stand_in_worker)
    monkeypatch.setattr(data, "check_data_dir", lambda data_dir: None)
    _linker_folder(tmp_path / "models", "names-a", 0.812)
    at = _train_page()
    assert not at.exception
    assert any(s.value == "Entity linker" for s in at.subheader)
    assert any("no linker active: recognised names are linked only when the dictionaries hold them exactly"
               in i.value for i in at.info)
    assert at.selectbox(key="lnk_choice").options == ["names-a (2025-01-02T03:04, dev acc@1 0.812)"]
    assert at.number_input(key="lnk_steps").value == NAME_ENCODER_LOOP.max_steps

    at.number_input(key="lnk_steps").set_value(5)
    at.button(key="lnk_train").click()
    at.run()
    assert not at.exception
    job = list_jobs(connection())[0]
    try:
        assert job.kind == "linker" and job.state == "running" and job.params["steps"] == 5
        assert job.params["name"].startswith("names-")
        Path(job.job_dir, "progress.json").write_text(json.dumps(
            {"state": "fine-tuning the name encoder", "step": 2, "total": 5, "loss": 1.5, "eta_s": None,
             "epoch": None}))
        at.run()
        bars = [b.proto.text for b in at.get("progress")]
        assert bars == [f"Job {job.job_id} · fine-tuning the name encoder · 2/5 · loss 1.5000"]  # one panel: ours
        assert at.button(key="lnk_train").disabled and at.button(key="lnk_activate").disabled
        assert at.button(key="rec_train").disabled
        assert not any(b.key in ("rt_cancel", "rec_cancel") for b in at.button)

        at.button(key="lnk_cancel").click()
        at.run()
        assert Path(job.job_dir, "cancel").exists()
        Path(job.job_dir, "result.json").write_text(json.dumps({"state": "cancelled", "message": "cancelled"}))
        at.run()
        assert get_job(connection(), job.job_id).state == "cancelled"
        assert not at.button(key="lnk_train").disabled
    finally:
        os.killpg(job.pid, signal.SIGKILL)


def test_an_active_linker_shows_its_dev_figures_escaped(loaded_db, tmp_path):
    from curation.store.annotations import insert_entity_model, set_active_entity_model
    from pages.parts.common import connection

    folder = _linker_folder(tmp_path / "models", "names_b", 0.853).resolve()
    con = connection()
    insert_entity_model(con, "linker", str(folder), "names_b")
    set_active_entity_model(con, "linker", str(folder))
    at = _train_page()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Active linker"))
    assert caption.startswith("Active linker **names&#95;b**: dev accuracy@1 0.853 on 1,204 dev names; fuzzy links "
                              "applied at precision&#58; chemical 0.98 &#40;40 of 90&#41;")
    assert at.selectbox(key="lnk_choice").options == ["names_b (2025-01-02T03:04, dev acc@1 0.853, active)"]


def test_activating_a_linker_that_does_not_load_says_why_and_keeps_none_active(loaded_db, tmp_path):
    import shutil

    from curation.store.annotations import get_active_entity_model
    from pages.parts.common import connection

    folder = _linker_folder(tmp_path / "models", "names-c", 0.7)
    shutil.rmtree(folder / "encoder")
    at = _train_page()
    at.button(key="lnk_activate").click()
    at.run()
    assert not at.exception
    assert any("the encoder is missing; train the linker again" in e.value for e in at.error)
    assert get_active_entity_model(connection(), "linker") is None
