"""bench/_scaffold.py: the preamble, goals, machine figures and the JSON every benchmark writes."""

from __future__ import annotations

import json

import pytest

from bench import _scaffold as scaffold


def test_a_goal_compares_unless_told_and_names_its_figure():
    assert scaffold.goal(3, 2, ">=") == {"value": 3, "target": 2, "op": ">=", "met": True}
    assert scaffold.goal(2, 2, ">")["met"] is False
    assert scaffold.goal(1, 60, "<=", met=False, of="click.seconds") == {
        "value": 1, "target": 60, "op": "<=", "met": False, "of": "click.seconds"}
    with pytest.raises(KeyError):
        scaffold.goal(1, 1, "==")


def test_machine_figures_keep_the_keys_asked_for_in_order():
    figures = scaffold.machine("cpus", "python", seed=13)
    assert list(figures) == ["cpus", "python", "seed"] and figures["seed"] == 13


def test_the_preamble_defaults_out_to_the_results_folder(tmp_path):
    parser = scaffold.parser("First paragraph.\n\nUsage details.", "house", seed=7)
    args = parser.parse_args([])
    assert args.out == scaffold.RESULTS / "house.json" and args.seed == 7
    assert parser.description == "First paragraph."
    assert not hasattr(args, "data_dir")


def test_a_section_is_merged_into_the_shared_file_keeping_the_rest(tmp_path):
    out = tmp_path / "results" / "feedback.json"
    scaffold.write(out, {"date": "d", "goals": {"a": scaffold.goal(1, 0, ">")}, "forms": {"x": 1}})
    scaffold.write(out, {"curve": [1, 2]}, section="learning_curve", goals={"b": scaffold.goal(0, 1, ">=")})
    written = json.loads(out.read_text())
    assert list(written) == ["date", "goals", "forms", "learning_curve"]
    assert list(written["goals"]) == ["a", "b"] and written["learning_curve"] == {"curve": [1, 2]}
    assert out.read_text().endswith("}\n") and not list(out.parent.glob("*.tmp*"))


def test_a_section_of_a_file_not_written_yet_starts_with_empty_goals(tmp_path):
    out = tmp_path / "feedback.json"
    scaffold.write(out, {"n": 1}, section="ranker_dev")
    assert json.loads(out.read_text()) == {"goals": {}, "ranker_dev": {"n": 1}}


def test_print_goals_says_whether_every_goal_was_met(capsys):
    assert not scaffold.print_goals({"a": scaffold.goal(1, 2, ">="), "b": scaffold.goal(1, 2, "<=")})
    assert capsys.readouterr().out.splitlines() == ["a: 1 >= 2 MISSED", "b: 1 <= 2 met"]
