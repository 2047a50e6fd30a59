"""Atomic publishing of files: the old file or the whole new one, and no temporary file left."""

from __future__ import annotations

import pytest

from curation.files import atomic_writer, fsync_path, write_atomic


def test_write_atomic_writes_text_and_bytes_and_replaces(tmp_path):
    target = tmp_path / "progress.json"
    assert write_atomic(target, '{"step": 1}') == target
    assert target.read_text() == '{"step": 1}'
    write_atomic(target, b"\x00bytes", sync_folder=True)
    assert target.read_bytes() == b"\x00bytes"
    write_atomic(target, "é", encoding="utf-8")
    assert target.read_bytes() == "é".encode()
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]


def test_an_error_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "data.tsv"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target, "wb") as out:
        out.write(b"half of the new")
        raise RuntimeError("the download broke")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.tsv"]


def test_only_whole_writes_are_offered(tmp_path):
    with pytest.raises(ValueError, match="mode"), atomic_writer(tmp_path / "x", "a"):
        pass
    fsync_path(tmp_path)  # a folder can be flushed too
