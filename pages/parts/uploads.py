"""Uploaded files, saved where an import can read them: a private temporary folder, a plain file name."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

MAX_UPLOAD_NAME = 120  # characters kept of an uploaded file's name


def safe_upload_name(name: str) -> str:
    """An uploaded file's name reduced to a plain file name (no folders, no traversal)."""
    base = Path(name.replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")
    if len(base) > MAX_UPLOAD_NAME:  # file systems refuse names over 255 bytes; keep the extension(s)
        stem, dot, suffix = base.partition(".")
        suffix = (dot + suffix)[-40:]
        base = stem[: MAX_UPLOAD_NAME - len(suffix)] + suffix
    return base or "upload"


def save_upload(upload) -> Path:
    """Write an uploaded file to a private temporary folder and return its path."""
    folder = Path(tempfile.mkdtemp(prefix="curation-upload-"))
    path = folder / safe_upload_name(upload.name)
    path.write_bytes(upload.getvalue())
    return path
