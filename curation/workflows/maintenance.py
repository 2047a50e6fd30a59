"""Backing the store up and restoring it, by a person the roles allow (maintainer; the shell)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from curation import access
from curation.access import Action, Who
from curation.config import Settings
from curation.ops.backup import KEEP, Backup, backup_store, backups_dir_for
from curation.ops.recovery import RecoveryReport, recover_store


def backup_folder(settings: Settings, db_path: str | Path) -> Path:
    """The backup folder of the store at ``db_path``: ``CURATION_BACKUPS_DIR/<store name>``."""
    return backups_dir_for(settings.backups_dir, db_path)


def back_up(con: duckdb.DuckDBPyConnection, settings: Settings, folder: str | Path | None = None, keep: int = KEEP,
            *, who: Who = "") -> Backup:
    """Back the open store up now (``python -m curation backup``); the app's automatic backups need no role.

    Raises:
        AccessDeniedError: ``who`` may not back up the store; nothing is written.
    """
    access.require(con, who, Action.BACKUP)
    return backup_store(con, folder or backups_dir_for(settings.backups_dir, settings.db_path), keep=keep)


def restore(db_path: str | Path, settings: Settings, folder: str | Path | None = None, *,
            who: Who = "") -> RecoveryReport:
    """Recover a store that does not open from its backups and WAL copies (``python -m curation recover``).

    The store cannot be read to look up roles, so only the shell (the machine account that owns the file) may.

    Raises:
        AccessDeniedError: ``who`` is not the local shell; nothing is touched.
    """
    access.require(None, who, Action.RESTORE)
    return recover_store(db_path, folder or backups_dir_for(settings.backups_dir, db_path))
