"""bench/house.py reads module lengths, sys.path edits and a CI run's pytest output as they are."""

from __future__ import annotations

import subprocess

from bench import house

CI_OUTPUT = """\
environment ready: numpy 2.4.6, torch 2.13.0+cpu
........................................................................ [ 50%]
=============================== slowest 30 durations ===============================
112.43s call     tests/app/test_browser_flows.py::test_curator_day
35.10s setup    tests/app/test_browser_flows.py::test_first_load
0.51s call     tests/curation/test_store.py::test_open
============ 1270 passed, 12 skipped, 1 failed in 803.21s (0:13:23) ============
"""


def test_the_ci_output_gives_the_counts_the_time_and_the_slowest_tests():
    parsed = house.parse_ci_output(CI_OUTPUT)
    assert parsed["counts"] == {"passed": 1270, "skipped": 12, "failed": 1}
    assert parsed["pytest_s"] == 803.21
    assert [s["test"] for s in parsed["slowest"]][:2] == ["tests/app/test_browser_flows.py::test_curator_day",
                                                          "tests/app/test_browser_flows.py::test_first_load"]
    assert parsed["slowest"][1] == {"test": "tests/app/test_browser_flows.py::test_first_load", "when": "setup",
                                    "seconds": 35.1}


def test_an_output_without_a_summary_has_no_counts():
    assert "counts" not in house.parse_ci_output("ERROR: could not install requirements\n")


def _repo(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_modules_past_their_folders_limit_and_sys_path_edits_are_listed(tmp_path, monkeypatch):
    root = _repo(tmp_path, {
        "pages/long.py": "x = 1\n" * 201,
        "pages/short.py": "x = 1\n" * 200,
        "curation/big.py": "x = 1\n" * 401,
        "bench/script.py": "import sys\nsys.path.insert(0, '.')\nimport os  # noqa: E402\n",
        "bench/clean.py": "# sys.path is never edited here\n",
        "untracked_folder/x.py": "",
    })
    monkeypatch.setattr(house, "contracts", lambda root: {"kept": 1, "broken": 0, "names": ["c"]})
    monkeypatch.setattr(house, "collected", lambda root: 3)
    shape = house.layout(root)
    assert [m["path"] for m in shape["folders"]["pages"]["over_limit"]] == ["pages/long.py"]
    assert shape["folders"]["curation"]["over_limit"] == [{"path": "curation/big.py", "lines": 401}]
    assert shape["folders"]["index"]["modules"] == 0
    assert shape["bench_sys_path_edits"] == ["bench/script.py"]
    assert shape["e402_waivers"] == 1


def test_each_benchmark_is_mapped_to_what_it_alone_brings_its_goals_and_where_it_is_cited(tmp_path, monkeypatch):
    root = _repo(tmp_path, {
        "README.md": "Run `python -m bench.alpha` first.\n",
        "docs/BENCHMARKS.md": "bench/beta.py\n",  # the generated document cites every benchmark: not counted
        "bench/__init__.py": "",
        "bench/report.py": "x = 1\n",
        "bench/_scaffold.py": "x = 1\n",
        "bench/_only_alpha.py": "from bench._deeper import y\n",
        "bench/_deeper.py": "y = 1\n" * 5,
        "bench/_both.py": "z = 1\n",
        "bench/_worker.py": "w = 1\n" * 3,
        "bench/alpha.py": ("from bench import _scaffold as scaffold\nfrom bench import _only_alpha, _both\n\n"
                           "def main():\n    from bench._both import z\n    p = scaffold.parser(__doc__, \"alpha\")\n"),
        "bench/beta.py": ("from bench import _scaffold as scaffold\nfrom bench._both import z\n"
                          "WORKER = Path(__file__).with_name(\"_worker.py\")\n"
                          "p = scaffold.parser(__doc__, \"alpha\")\n"),
        "bench/reports/alpha.py": "r = 1\n" * 4,
        "bench/results/alpha.json": '{"goals": {"a": {"met": true}, "b": {"met": false}}}\n',
    })
    monkeypatch.setattr(house, "contracts", lambda root: {"kept": 1, "broken": 0, "names": ["c"]})
    monkeypatch.setattr(house, "collected", lambda root: 3)
    shape = house.layout(root)
    rows = {row["script"]: row for row in shape["benchmarks"]}
    assert set(rows) == {"alpha", "beta"}  # not the report, not a private module
    alpha, beta = rows["alpha"], rows["beta"]
    assert alpha["alone"] == ["_deeper", "_only_alpha"] and alpha["shared"] == ["_both", "_scaffold"]
    assert alpha["lines_alone"] == 6 + 1 + 5 + 4  # itself, _only_alpha, _deeper (reached through it), its renderer
    assert (alpha["result"], alpha["goals"], alpha["goals_met"]) == ("alpha.json", 2, 1)
    assert alpha["documents"] == ["README.md"] and beta["documents"] == []
    assert beta["alone"] == ["_worker"] and beta["result"] == "alpha.json"  # a section of alpha's file
    assert shape["readme_lines"] == 1
