"""The committed documents are what bench/report.py renders from the committed JSONs (no hand-edited figure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import report

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
