"""The learner registry: every learned model the jobs train is found by its name and drives the same interface;
every learned model has one home, named with its serving, its artifact and its learner."""

from __future__ import annotations

import importlib

import pytest

from curation.errors import CurationError
from curation.learning.learner import HOMES, LEARNERS, LINKER, RECOGNISER, RELATIONS, RETRAIN, learner


def test_every_registered_learner_is_found_by_its_name_and_has_the_interface():
    assert set(LEARNERS) == {RETRAIN, RECOGNISER, RELATIONS, LINKER}
    for kind in LEARNERS:
        found = learner(kind)
        assert found.kind == kind and found.label
        for method in ("title", "read_request", "prepare", "train", "judge"):
            assert callable(getattr(found, method))
    assert [kind for kind in LEARNERS if learner(kind).versioned] == [RETRAIN]  # only model versions are registered


def test_a_request_reads_back_as_its_learners_dataclass_and_a_bad_one_is_named():
    request = learner(RECOGNISER).read_request({"kind": "recogniser", "name": "tiny"}, "job 1")
    assert request.name == "tiny" and request.to_dict()["kind"] == "recogniser"
    assert learner(RETRAIN).read_request({"schema": "PO", "tolerance": 0.01}, "job 2").schema == "PO"  # retired key
    with pytest.raises(CurationError, match=r"job 3: unknown fields \['width'\]"):
        learner(RELATIONS).read_request({"kind": "relations", "name": "r", "width": 8}, "job 3")
    assert learner(RECOGNISER).title({"folder": "/x"}) == "Recogniser activation"


def test_an_unknown_name_is_refused_with_the_names_there_are():
    with pytest.raises(CurationError, match="no learned model is named 'ranker'; the jobs train linker, recogniser"):
        learner("ranker")


def test_every_learned_models_home_and_serving_import_and_its_learner_is_registered():
    assert set(HOMES) == {"recogniser", "linker", "relation scorer", "learned ranker", "screening learner",
                          "EDEL encoder", "cross-encoder"}
    for name, home in HOMES.items():
        for module in (home.home, *home.serving):
            importlib.import_module(module)  # raises when a move left the table behind
        assert home.learner is None or home.learner in LEARNERS, name
        assert home.learner is not None or home.note, f"{name}: say why no job trains it"
    assert {home.learner for home in HOMES.values()} - {None} == set(LEARNERS)  # no registered learner homeless


def test_the_artifact_folders_named_are_the_ones_the_code_writes():
    from curation.learning.cross_encoder.stage import FOLDER
    from curation.ranking.stage import RANKER_FOLDER
    from curation.versions.registry import OWN_FOLDERS

    under_models = {home.artifact.split("/")[0] for home in HOMES.values()
                    if home.artifact and not home.artifact.startswith("<version>")}
    assert under_models == OWN_FOLDERS
    assert HOMES["learned ranker"].artifact == f"<version>/{RANKER_FOLDER}"
    assert HOMES["cross-encoder"].artifact == f"<version>/{FOLDER}"
    assert HOMES["screening learner"].artifact is None
