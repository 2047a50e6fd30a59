"""bench/first_run.py --fast-start: its percentile, its goals and how docs/BENCHMARKS.md reads them back."""

from __future__ import annotations

import json

from bench._fast_start import fast_start_goals, p95
from bench.reports import first_run


def _timed(seconds: float) -> dict:
    return {"s": seconds, "load_1min_before": 1.5}


def _fast_start(search: list[float], suggest: list[float]) -> dict:
    def command(values):
        return {"first_run": _timed(30.0), "runs": [_timed(v) for v in values], "p50": sorted(values)[len(values) // 2],
                "p95": p95(values)}

    return {"date": "2026-11-26T14:00:00+00:00", "store": "s.duckdb", "runs": len(search),
            "load_average_before": [1.0, 1.0, 1.0], "load_average_after": [2.0, 2.0, 2.0],
            "cli_search_s": command(search), "cli_suggest_s": command(suggest),
            "matcher_build_s": {"before": _timed(25.0), "after": _timed(1.5)}}


def test_p95_interpolates_and_is_the_largest_of_few_runs():
    assert p95([3.0, 1.0, 2.0]) == 2.9
    assert p95(list(map(float, range(1, 22)))) == 20.0
    assert p95([4.0]) == 4.0


def test_goals_say_met_or_missed_per_command():
    goals = fast_start_goals(_fast_start([2.0, 2.5, 2.9], [2.0, 3.5, 2.0]))
    assert goals["cli_search_s_p95"]["met"] and goals["cli_search_s_p95"]["target"] == 3.0
    assert not goals["cli_suggest_s_p95"]["met"] and goals["cli_suggest_s_p95"]["value"] == 3.35


def test_the_first_run_section_shows_the_fast_start_figures(tmp_path):
    figures = _fast_start([2.0, 2.5, 2.9], [2.0, 3.5, 2.0])
    result = {"date": "2026-11-26T14:00:00+00:00", "params": {"command": "x", "data_dir": "d"},
              "machine": {"cpus": 2}, "counts": {"runs_timed": 0, "failures": [], "files": 0},
              "timings_s": {}, "runs": [], "fast_start": figures, "goals": fast_start_goals(figures)}
    (tmp_path / "first_run.json").write_text(json.dumps(result))
    lines = first_run.first_run_section(first_run.read(tmp_path))
    search = next(line for line in lines if line.startswith("| `search`"))
    assert "| 2.9 |" in search and "met" in search and "missed" not in search
    assert any("missed" in line for line in lines if line.startswith("| `suggest`"))
    assert any("25.0 s built from the store" in line and "1.5 s read" in line for line in lines)


def test_restarts_measured_alone_are_read_back_with_their_backup_and_goal(tmp_path):
    figures = _fast_start([2.0, 2.5, 2.9], [2.0, 2.5, 2.0])
    restarts = [{**_timed(v), "exit_s": v + 0.5, "in_process_s": v - 0.2, "results": 13} for v in (2.4, 2.6, 3.4)]
    figures["restart_to_first_results_s"] = {
        "date": "2026-11-28T15:00:00+00:00", "store": "s.duckdb", "models_copied": True,
        "load_average_before": [0.5, 0.6, 0.7], "load_average_after": [0.8, 0.8, 0.8],
        "warm_up": {"cli_search_s": _timed(30.0)}, "runs": restarts, "p50": 2.6, "p95": p95([2.4, 2.6, 3.4]),
        "backup_interval_min": 0.001}
    goal = fast_start_goals(figures)["restart_to_first_results_s_p95"]
    assert goal["target"] == 3.0 and not goal["met"] and "over 3 runs" in goal["of"]
    result = {"date": "2026-11-26T14:00:00+00:00", "params": {"command": "x", "data_dir": "d"},
              "machine": {"cpus": 2}, "counts": {"runs_timed": 0, "failures": [], "files": 0},
              "timings_s": {}, "runs": [], "fast_start": figures, "goals": fast_start_goals(figures)}
    (tmp_path / "first_run.json").write_text(json.dumps(result))
    lines = first_run.first_run_section(first_run.read(tmp_path))
    assert any(line.startswith("| a new app process") and "| 3.3 |" in line and "missed" in line for line in lines)
    assert any("finds a backup due" in line and "models folder copied" in line for line in lines)
