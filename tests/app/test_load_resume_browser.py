"""A real browser closes its tab in the middle of "Load the sample", the server is then killed, and the next start
finishes the load (``bench/_load_resume.py``'s run, on the real data; bench/first_run.py --load-resume also compares
it with a clean load)."""

from __future__ import annotations

import pytest

from bench._browser import CHROMIUM
from bench._load_resume import interrupted_load

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_load_cut_by_a_closed_tab_and_a_killed_server_is_finished_by_the_next_start(tmp_path, data_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does it)")
    run = interrupted_load(tmp_path, data_dir)
    cut, resumed = run["at_cut"], run["after_resume"]
    assert cut["steps_left"] and cut["steps_left"][-1] == "annotate", cut  # cut mid-load
    assert cut["annotated_documents"] < cut["documents"] or cut["documents"] < resumed["documents"]
    assert "Loading the sample" in run["notice_after_restart"]  # the next start says it is finishing it
    assert resumed["steps_left"] == []
    assert resumed["annotated_documents"] == resumed["documents"] >= cut["documents"]
    assert resumed["annotations"] > cut["annotations"]
    assert resumed["relation_pairs"] > 0
