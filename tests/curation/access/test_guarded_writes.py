"""Writes a page makes on its own (dismissing a notice, opening a saved query, registering published versions,
finishing a background job) go through the role check like every other write (curation.access.require)."""

from __future__ import annotations

import pytest

from curation import access
from curation.access import Identity, IdentitySource
from curation.errors import AccessDeniedError
from curation.schemas import PO
from curation.store.jobs import create_job, get_job, start_job
from curation.store.reconcile import SQL_ADD_NOTICE, open_notices
from curation.store.saved import list_saved_queries
from curation.versions import registry
from curation.versions.manifest import Manifest
from curation.workflows import retrain, session, team, versions, watch

MAINTAINER = Identity("ana@example.org", IdentitySource.OIDC)
NOBODY = Identity("ben@example.org", IdentitySource.OIDC)  # signed in, no role
CURATOR = Identity("cat@example.org", IdentitySource.OIDC)


@pytest.fixture
def team_store(con):
    access.sign_in(con, MAINTAINER)  # the first sign-in: maintainer
    access.sign_in(con, NOBODY)
    access.sign_in(con, CURATOR)
    team.grant_role(con, MAINTAINER, CURATOR.name, "curator")
    return con


def test_a_repair_notice_is_dismissed_only_by_a_maintainer(team_store):
    con = team_store
    con.execute(SQL_ADD_NOTICE, ["journal", "the store was repaired"])
    (notice,) = open_notices(con)
    for who in (NOBODY, CURATOR, "ana@example.org"):  # no role, a curator, a typed name on a team store
        assert not session.may_dismiss_notices(con, who)
        with pytest.raises(AccessDeniedError):
            session.acknowledge(con, notice.notice_id, who)
        assert open_notices(con) == [notice]  # still shown to everyone
    assert session.may_dismiss_notices(con, MAINTAINER)
    session.acknowledge(con, notice.notice_id, MAINTAINER)
    assert open_notices(con) == []
    assert con.execute("SELECT acknowledged_by FROM store_notices").fetchall() == [(MAINTAINER.name,)]


def test_opening_a_saved_query_marks_it_seen_only_for_someone_who_may_save_queries(team_store):
    con = team_store
    watch.save_search(con, CURATOR, PO.name, {"Gene": "BRAF"}, [])
    (item,) = watch.watched(con, CURATOR.name, PO.name)
    seen = item.saved.last_seen_at
    for who in (NOBODY, CURATOR.name):  # no role; the curator's name typed on a team store
        with pytest.raises(AccessDeniedError):
            watch.open_watched(con, item, who)
        assert list_saved_queries(con, CURATOR.name, PO.name)[0].last_seen_at == seen
    values, _new = watch.open_watched(con, item, CURATOR)
    assert values == {"Gene": "BRAF"}


def _publish(models, version):
    tmp = registry.staging(models, version)
    for part in ("model", "dense", "lexical"):
        (tmp / part).mkdir()
    return registry.publish(models, version, Manifest(schema="PO"))


def test_published_versions_are_registered_only_by_someone_with_a_role(team_store, tmp_path):
    con = team_store
    _publish(tmp_path / "models", "po-1")
    assert versions.model_versions(con, tmp_path / "models", who=NOBODY) == ([], [])
    assert versions.model_versions(con, tmp_path / "models", who="ana@example.org") == ([], [])
    assert con.execute("SELECT count(*) FROM model_versions").fetchall() == [(0,)]  # nothing written
    listed, _ = versions.model_versions(con, tmp_path / "models", who=CURATOR)
    assert [v.version for v in listed] == ["po-1"]


def test_a_finished_job_is_brought_up_to_date_only_by_someone_with_a_role(team_store, tmp_path):
    con = team_store
    job = create_job(con, "retrain", {"schema": "PO"})
    (tmp_path / "job").mkdir()
    start_job(con, job.job_id, 2**22 + 4321, str(tmp_path / "job"))  # its worker is gone: the poll fails it
    for who in (NOBODY, "ana@example.org"):
        assert retrain.current_job(con, who=who).job_id == job.job_id  # shown as it is, not written
        assert get_job(con, job.job_id).state == "running"
        assert session.sidebar_view(con, None, who=who).job_line
        assert get_job(con, job.job_id).state == "running"
    assert retrain.current_job(con, who=CURATOR) is None
    assert get_job(con, job.job_id).state == "failed"


def test_the_write_paths_behind_the_page_reads_refuse_without_a_role(team_store, tmp_path):
    con = team_store
    job = create_job(con, "retrain", {"schema": "PO"})
    for who in (NOBODY, "ana@example.org"):
        with pytest.raises(AccessDeniedError, match="finish background jobs"):
            retrain.follow_job(con, job, who=who)
        with pytest.raises(AccessDeniedError, match="register published model versions"):
            versions.register_versions(con, tmp_path / "models", who=who)
    assert retrain.follow_job(con, job, who=CURATOR).job_id == job.job_id
