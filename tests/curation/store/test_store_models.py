from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from curation.errors import CurationError
from curation.store.models import (
    VersionRow,
    clear_active_version,
    get_active_version_row,
    get_version_row,
    set_active_version,
)
from curation.versions import catalog, registry
from curation.versions.manifest import Manifest
from curation.versions.registry import RegistryError


def _publish(models, version, schema="PO", **manifest):
    tmp = registry.staging(models, version)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, version, Manifest(schema=schema, **manifest))


def _active(con):
    return sorted(con.execute("SELECT schema_name, version FROM model_versions WHERE active").fetchall())


def test_register_and_list_newest_first(con, tmp_path):
    old = _publish(tmp_path, "po-1", metrics={"ndcg@10": 0.4})
    new = _publish(tmp_path, "po-2", loss_curve=(0.9, 0.5))
    # published_at has one-second resolution: set it so the order is known.
    old = registry.ModelVersion(old.version, old.path, replace(old.manifest, published_at="2025-01-01T00:00:00+00:00"))
    new = registry.ModelVersion(new.version, new.path, replace(new.manifest, published_at="2025-02-01T00:00:00+00:00"))
    assert catalog.register_version(con, old) is True
    assert catalog.register_version(con, new) is True
    assert catalog.register_version(con, new) is False  # already known
    listed = catalog.list_model_versions(con)
    assert [v.version for v in listed] == ["po-2", "po-1"]
    assert listed[1].metrics == {"ndcg@10": 0.4} and listed[0].loss_curve == [0.9, 0.5]
    assert listed[0].path == new.path and listed[0].schema == "PO" and not listed[0].active
    assert listed[0].manifest == new.manifest  # the store's copy reads back as the typed manifest
    assert catalog.list_model_versions(con, "PTM") == []


def test_the_store_layer_takes_and_returns_plain_values(con, tmp_path):
    version = _publish(tmp_path, "po-1")
    catalog.register_version(con, version)
    row = get_version_row(con, "po-1")
    assert isinstance(row, VersionRow) and row.path == str(version.path)
    assert isinstance(row.manifest, dict) and row.manifest["schema"] == "PO" and row.manifest["format"] == 1
    set_active_version(con, "po-1", "PO")
    assert get_active_version_row(con, "PO").version == "po-1"
    clear_active_version(con, "PO")
    assert get_active_version_row(con, "PO") is None


def test_a_damaged_copy_in_the_store_is_an_error_naming_it(con, tmp_path):
    catalog.register_version(con, _publish(tmp_path, "po-1"))
    con.execute("UPDATE model_versions SET manifest = json_object('schema', 'PO', 'surprise', 1)")
    with pytest.raises(RegistryError, match="store's copy of po-1/manifest.json: unknown field 'surprise'"):
        catalog.get_version(con, "po-1")


def test_register_refuses_a_manifest_without_schema(con, tmp_path):
    version = _publish(tmp_path, "anon", schema="")
    with pytest.raises(CurationError, match="names no schema"):
        catalog.register_version(con, version)


def test_one_active_version_per_schema(con, tmp_path):
    for name, schema in (("po-1", "PO"), ("po-2", "PO"), ("ptm-1", "PTM")):
        catalog.register_version(con, _publish(tmp_path, name, schema))
    assert catalog.active_version(con, "PO") is None
    assert catalog.activate_version(con, "po-1").active
    catalog.activate_version(con, "ptm-1")
    assert _active(con) == [("PO", "po-1"), ("PTM", "ptm-1")]
    catalog.activate_version(con, "po-2")
    assert _active(con) == [("PO", "po-2"), ("PTM", "ptm-1")]  # the other schema is untouched
    assert catalog.active_version(con, "PO").version == "po-2"
    catalog.activate_version(con, "po-2")  # again: still exactly one
    assert _active(con) == [("PO", "po-2"), ("PTM", "ptm-1")]
    catalog.deactivate_versions(con, "PO")
    assert catalog.active_version(con, "PO") is None and _active(con) == [("PTM", "ptm-1")]


def test_a_failed_activation_changes_nothing(con, tmp_path):
    catalog.register_version(con, _publish(tmp_path, "po-1"))
    catalog.register_version(con, _publish(tmp_path, "po-2"))
    catalog.activate_version(con, "po-1")
    with pytest.raises(CurationError, match="not registered"):
        catalog.activate_version(con, "po-9")
    shutil.rmtree(tmp_path / "po-2" / "dense")
    with pytest.raises(CurationError, match="cannot activate po-2: .*dense/ is missing"):
        catalog.activate_version(con, "po-2")
    assert _active(con) == [("PO", "po-1")]
    # The transaction was closed: the connection takes new work.
    catalog.activate_version(con, "po-1")


def test_sync_registers_published_versions_and_reports_broken_ones(con, tmp_path):
    models = tmp_path / "models"
    _publish(models, "po-1")
    _publish(models, "po-2")
    (models / "corrupt").mkdir()
    (models / "corrupt" / "manifest.json").write_text("{not json")
    versions, problems = catalog.sync_model_versions(con, models)
    assert {v.version for v in versions} == {"po-1", "po-2"}
    assert any("corrupt/manifest.json is corrupted" in p for p in problems)
    catalog.activate_version(con, "po-1")
    shutil.rmtree(models / "po-1")  # a registered version whose folder went away
    versions, problems = catalog.sync_model_versions(con, models)
    assert [v.version for v in versions] == ["po-2"]
    assert any("po-1 is not a model version" in p and "activate another" in p for p in problems)
    assert catalog.active_version(con, "PO").version == "po-1"  # reported; the choice stays the curator's


def test_sync_of_a_missing_models_folder_is_empty(con, tmp_path):
    assert catalog.sync_model_versions(con, tmp_path / "nowhere") == ([], [])


def test_a_moved_models_folder_updates_the_paths(con, tmp_path):
    _publish(tmp_path / "a", "po-1")
    catalog.sync_model_versions(con, tmp_path / "a")
    shutil.move(tmp_path / "a", tmp_path / "b")
    versions, problems = catalog.sync_model_versions(con, tmp_path / "b")
    assert [v.path for v in versions] == [tmp_path / "b" / "po-1"] and problems == []


def test_a_version_registered_while_none_is_active_changes_what_serves_without_a_restart(con, tmp_path):
    """The served retriever is cached under its serving key: with no active version, the newest registered version
    that fits is part of the key, so registering one (a first base version built in the background) serves it at
    the next search, not after a restart."""
    from curation.store.base import content_counts
    from curation.versions.serving import NEWEST, serving_key

    documents = content_counts(con)[0]
    assert serving_key(con, "PO").active == ()
    catalog.register_version(con, _publish(tmp_path, "po-other", documents=documents + 5))  # does not fit
    assert serving_key(con, "PO").active == ()
    catalog.register_version(con, _publish(tmp_path, "po-1", documents=documents, trained=True))
    assert serving_key(con, "PO").active == (f"{NEWEST}po-1",)
    assert serving_key(con, "PTM").active == ()  # another schema's trained version never serves this one
    catalog.register_version(con, _publish(tmp_path, "po-base", documents=documents))  # untrained: any schema's
    assert serving_key(con, "PTM").active == (f"{NEWEST}po-base",)
