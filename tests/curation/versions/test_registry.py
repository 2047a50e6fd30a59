from __future__ import annotations

import pytest

from curation.versions import registry
from curation.versions.manifest import Manifest, write_manifest
from curation.versions.registry import RegistryError


def _stage(models, version):
    tmp = registry.staging(models, version)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return tmp


def test_publish_is_atomic_and_immutable(tmp_path):
    _stage(tmp_path, "v1")
    assert registry.list_versions(tmp_path) == ([], [])  # a staged build is not a version
    published = registry.publish(tmp_path, "v1", Manifest(schema="PO", metrics={"ndcg@10": 0.5}))
    assert published.metrics == {"ndcg@10": 0.5}
    assert registry.read_version(tmp_path / "v1").manifest.version == "v1"
    assert registry.read_version(tmp_path / "v1").manifest == published.manifest
    with pytest.raises(RegistryError, match="immutable"):
        registry.staging(tmp_path, "v1")


def test_incomplete_and_corrupted_versions_are_reported_not_loaded(tmp_path):
    _stage(tmp_path, "good")
    registry.publish(tmp_path, "good", Manifest())
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    (tmp_path / "partial").mkdir()
    write_manifest(tmp_path / "partial" / "manifest.json", Manifest(version="partial"))
    versions, problems = registry.list_versions(tmp_path)
    assert [v.version for v in versions] == ["good"]
    assert any("broken/manifest.json is corrupted" in p for p in problems)
    assert any("partial is incomplete: model/ is missing" in p for p in problems)


def test_publish_refuses_a_staged_folder_missing_parts(tmp_path):
    tmp = registry.staging(tmp_path, "v2")
    (tmp / "model").mkdir()
    with pytest.raises(RegistryError, match="dense/ is missing"):
        registry.publish(tmp_path, "v2", Manifest())


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "v1.tmp", ".hidden"])
def test_version_names_are_checked(tmp_path, name):
    with pytest.raises(RegistryError, match="not a valid version name"):
        registry.staging(tmp_path, name)
