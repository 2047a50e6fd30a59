"""The linker's activation rule: when a newly trained linker replaces the active one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.entities.linking import read_manifest
from curation.errors import CurationError
from curation.store.annotations import get_active_entity_model
from curation.versions.activation import Verdict

TOLERANCE = 0.01  # a new linker is activated when its dev accuracy@1 ≥ the active one's minus this
MEASURE = "dev_fuzzy_acc1"  # accuracy@1 on the dev names no exact dictionary name settles (the encoder's work)


def judge_linker(con: duckdb.DuckDBPyConnection, folder: Path) -> Verdict:
    """Whether the linker at ``folder`` becomes active, and why: unless, on the same dev names, its accuracy@1 is
    below the active linker's by more than :data:`TOLERANCE` (both read from their manifests).

    Its auto-apply precision is not compared: calibration holds every linker's at the same target on dev.

    Raises:
        LinkerUnavailable: ``folder`` holds no readable linker manifest.
    """
    new = read_manifest(folder)
    row = get_active_entity_model(con, "linker")
    if row is None:
        return Verdict(True, "activated: no linker was active")
    try:
        active = read_manifest(Path(row.path))
    except CurationError:
        return Verdict(True, f"activated: the active linker {row.name} cannot be read any more")
    if new.dev.get("dev_names") != active.dev.get("dev_names"):
        return Verdict(True, f"activated: {active.name} was calibrated on other dev names, so the two are not "
                             "compared")
    ours, theirs = new.dev.get(MEASURE), active.dev.get(MEASURE)
    if ours is None or theirs is None:
        return Verdict(True, "activated: no dev accuracy to compare")
    if ours >= theirs - TOLERANCE:
        return Verdict(True, f"activated: dev accuracy@1 {ours:.3f} vs {theirs:.3f} of {active.name}")
    return Verdict(False, f"kept inactive: dev accuracy@1 {ours:.3f} is below {theirs:.3f} of the active "
                          f"{active.name} by more than {TOLERANCE}; activate it with `python -m curation "
                          "activate-linker` to use it anyway")
