"""The recogniser's activation rule: when a newly trained recogniser replaces the active one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.versions.activation import Verdict, judge_entity_model

TOLERANCE = 0.01  # a new recogniser is activated when its dev F1 ≥ the active one's minus this


def judge_recogniser(con: duckdb.DuckDBPyConnection, folder: Path, chosen: bool) -> Verdict:
    """Whether the recogniser at ``folder`` becomes active, and why: one chosen by hand always; a newly trained one
    unless its dev F1 is below the active one's (same dev set) by more than :data:`TOLERANCE`.

    Raises:
        RecogniserError: ``folder`` holds no readable recogniser manifest.
    """
    from curation.entities.recogniser import read_recogniser_manifest

    if chosen:
        return Verdict(True, "activated as chosen")
    return judge_entity_model(
        con, "recogniser", read_recogniser_manifest(folder), read_recogniser_manifest,
        lambda new, active: (new.dev_scores.get("ents_f"), active.dev_scores.get("ents_f")), "dev F1", TOLERANCE,
        "activate it on the Train page to use it anyway")
