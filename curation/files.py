"""Publishing files atomically: a reader sees the old file or the whole new one, never part of one.

:func:`write_atomic` (and :func:`atomic_writer`, for content written piece by piece) writes a
temporary file in the target's folder, flushes and fsyncs it, then renames it over the target
(``os.replace``); with ``sync_folder`` it also fsyncs the folder, so that the rename itself
survives a power cut. On any error the temporary file is removed and the target is left as it was.
A target that exists and is not a regular file (a symbolic link, a named pipe, a device, a folder) is
refused before anything is written: the rename would replace the link or the pipe with a plain file.
:func:`fsync_path` flushes a file or a folder (after renaming a folder into place). :func:`staged_folder`
publishes a whole folder the same way: built beside the target as ``<name>.tmp``, renamed into place.
:func:`file_sha256` names a file's bytes (backups, the shipped recogniser's corpora).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from curation.errors import CurationError


@contextmanager
def atomic_writer(
    path: str | Path, mode: str = "w", *, encoding: str = "utf-8", sync_folder: bool = False
) -> Iterator[IO]:
    """A handle on a temporary file that replaces ``path`` when the block ends without an error.

    Args:
        mode: ``"w"`` (text, in ``encoding``) or ``"wb"`` (bytes).
        sync_folder: also fsync ``path``'s folder after the rename.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    _refuse_special(path)
    # A unique name (two writers of one file never share a temporary file); created with the
    # usual permissions, as a plain write would create it.
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        try:
            handle = open(tmp, mode.replace("w", "x"), encoding=None if mode == "wb" else encoding)
        except OSError as exc:  # a missing folder: the error names the target, not our temporary name
            raise _naming(exc, path) from exc
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.replace(tmp, path)
        except OSError as exc:  # the target is a folder, or not ours to replace
            raise _naming(exc, path) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_folder:
        fsync_path(path.parent)


_KINDS = ((stat.S_ISLNK, "symbolic link"), (stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISDIR, "folder"),
          (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device"), (stat.S_ISSOCK, "socket"))


def _refuse_special(path: Path) -> None:
    """Refuse a target that exists and is not a regular file (its link itself, not what it points to).

    Raises:
        CurationError: naming the path and what it is; nothing was written.
    """
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "special file")
        raise CurationError(f"{path} is a {kind}, not a regular file: nothing was written (name a regular file, "
                            "or a new one)")


def _naming(exc: OSError, path: Path) -> OSError:
    """The same error (same class, same errno), about ``path``."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def write_atomic(path: str | Path, data: str | bytes, *, encoding: str = "utf-8", sync_folder: bool = False) -> Path:
    """Replace ``path`` with ``data`` (text in ``encoding``, or bytes) atomically; returns the path."""
    mode = "wb" if isinstance(data, bytes) else "w"
    with atomic_writer(path, mode, encoding=encoding, sync_folder=sync_folder) as out:
        out.write(data)
    return Path(path)


def fsync_path(path: str | Path) -> None:
    """Flush a file or a folder to disk (a folder: so a rename in it survives a power cut)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def staged_folder(out: str | Path) -> Iterator[Path]:
    """Build a folder at ``<out>.tmp`` (yielded, empty) and, when the block ends without error, put it in place of
    ``out`` (an older ``out`` is removed first); on an error the staged folder is removed and ``out`` is untouched.
    """
    out = Path(out)
    stage = out.with_name(out.name + ".tmp")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    try:
        yield stage
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
