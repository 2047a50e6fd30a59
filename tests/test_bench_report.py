"""The committed documents are what bench.report renders from the committed JSONs, read strictly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report
from bench.reports.readers import ResultError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


@pytest.mark.parametrize("document, render", [
    ("BENCHMARKS.md", lambda: report.render(RESULTS)),
    ("RELIABILITY.md", lambda: report.render_reliability(RESULTS, ROOT / "bench" / "reliability.md.in")),
    ("SCALING.md", lambda: report.render_template(RESULTS, ROOT / "bench" / "scaling.md.in", ("scale",))),
])
def test_each_document_is_rendered_from_the_results(document, render):
    assert (ROOT / "docs" / document).read_text() == render(), f"run python -m bench.report: docs/{document} is stale"


def test_a_template_placeholder_that_names_no_figure_fails_loudly(tmp_path):
    template = tmp_path / "t.md.in"
    template.write_text("p95 {{scale:no_such.figure|f0}} ms")
    with pytest.raises(SystemExit, match="no_such.figure is not in the JSON"):
        report.render_template(RESULTS, template, ("scale",))


def test_a_result_that_lost_a_figure_fails_naming_the_file_and_field(tmp_path):
    data = json.loads((RESULTS / "team.json").read_text())
    del data["enforcement"]["cells"]
    (tmp_path / "team.json").write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"team\.json: field 'enforcement\.cells' is missing"):
        report.render(tmp_path)


def test_a_result_with_an_unknown_figure_fails_rather_than_being_left_out(tmp_path):
    data = json.loads((RESULTS / "app.json").read_text())
    data["counts"]["clicks_timd"] = 3
    (tmp_path / "app.json").write_text(json.dumps(data))
    with pytest.raises(ResultError, match="unknown field 'counts.clicks_timd'"):
        report.render(tmp_path)
