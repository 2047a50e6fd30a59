"""A real browser closes its tab in the middle of "Load the sample", the server is then killed, and the next start
finishes the load (``bench/_load_resume.py``'s run; bench/first_run.py --load-resume runs it on the whole real sample
and compares it with a clean load).

Here the sample is a part of the real data, linked into a folder of the same layout: both CIViC exports, BioRED Dev,
BC5CDR Dev and the DrugBank vocabulary (600 abstracts, not 3,476), without the installed vocabularies. The steps, the
cut and the resumption are the same; the annotation the next start finishes is a sixth of the whole sample's, so the
test takes about a third of the time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench._browser import CHROMIUM
from bench._load_resume import interrupted_load

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PART = ("civic/civic_evidence_2026-05.tsv", "civic/civic_evidence_2018-05_v1schema.tsv", "biored/Dev.PubTator",
        "bc5cdr/CDR_DevelopmentSet.PubTator.txt", "dicts/drugbank_vocabulary.csv")


def part_of(data_dir: Path, folder: Path) -> Path:
    """A data folder of the sample's layout holding :data:`PART` (symbolic links to the real files)."""
    for name in PART:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(data_dir / name)
    return folder


def test_a_load_cut_by_a_closed_tab_and_a_killed_server_is_finished_by_the_next_start(tmp_path, data_dir,
                                                                                      monkeypatch):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    monkeypatch.setenv("CURATION_VOCABULARIES", "none")  # the servers' environment is this process's
    run = interrupted_load(tmp_path, part_of(data_dir, tmp_path / "data"))
    cut, resumed = run["at_cut"], run["after_resume"]
    assert cut["steps_left"] and cut["steps_left"][-1] == "annotate", cut  # cut mid-load
    assert cut["annotated_documents"] < cut["documents"] or cut["documents"] < resumed["documents"]
    assert "Loading the sample" in run["notice_after_restart"]  # the next start says it is finishing it
    assert resumed["steps_left"] == []
    assert resumed["annotated_documents"] == resumed["documents"] >= cut["documents"]
    assert resumed["annotations"] > cut["annotations"]
    assert resumed["relation_pairs"] > 0
