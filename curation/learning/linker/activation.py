"""The linker's activation rule: when a newly trained linker replaces the active one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation.entities.linking import read_manifest
from curation.versions.activation import Verdict, judge_entity_model

TOLERANCE = 0.01  # a new linker is activated when its dev accuracy@1 ≥ the active one's minus this
MEASURE = "dev_fuzzy_acc1"  # accuracy@1 on the dev names no exact dictionary name settles (the encoder's work)


def judge_linker(con: duckdb.DuckDBPyConnection, folder: Path) -> Verdict:
    """Whether the linker at ``folder`` becomes active, and why: unless, on the same dev names, its accuracy@1 is
    below the active linker's by more than :data:`TOLERANCE` (both read from their manifests).

    Its auto-apply precision is not compared: calibration holds every linker's at the same target on dev.

    Raises:
        LinkerUnavailable: ``folder`` holds no readable linker manifest.
    """
    def figures(new, active):
        if new.dev.get("dev_names") != active.dev.get("dev_names"):
            return f"{active.name} was calibrated on other dev names, so the two are not compared"
        return new.dev.get(MEASURE), active.dev.get(MEASURE)

    return judge_entity_model(con, "linker", read_manifest(folder), read_manifest, figures, "dev accuracy@1",
                              TOLERANCE, "activate it with `python -m curation activate-linker` to use it anyway")
