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


def _special(tmp_path, kind: str):
    import os

    target = tmp_path / f"out-{kind}"
    if kind == "symlink":
        (tmp_path / "real.tsv").write_text("kept")
        target.symlink_to(tmp_path / "real.tsv")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    return target


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_a_target_that_is_not_a_regular_file_is_refused_and_left_as_it_was(tmp_path, kind):
    import stat

    from curation.errors import CurationError

    target = _special(tmp_path, kind)
    before = target.lstat()
    with pytest.raises(CurationError, match=f"^{target} is a .*, not a regular file: nothing was written"):
        write_atomic(target, "decisions\n")
    after = target.lstat()
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)
    assert not list(tmp_path.glob(".*.tmp"))
    if kind == "symlink":
        assert (tmp_path / "real.tsv").read_text() == "kept"


def test_a_device_is_refused_before_anything_is_opened_or_renamed(monkeypatch):
    from curation import files
    from curation.errors import CurationError

    def never(*args, **kwargs):  # the check must come first: /dev/null itself is never touched
        raise AssertionError(f"atomic_writer went on to touch the file system: {args}")

    monkeypatch.setattr(files, "open", never, raising=False)
    monkeypatch.setattr(files.os, "replace", never)
    with pytest.raises(CurationError, match="^/dev/null is a device, not a regular file"):
        write_atomic("/dev/null", "x")


def test_the_cli_refuses_an_out_that_is_not_a_regular_file_with_one_line(tmp_path, capsys):
    import os

    from curation.cli import main
    from curation.store.opening import open_store

    db = tmp_path / "s.duckdb"
    open_store(db).close()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main(["export", "decisions", "--db", str(db), "--out", str(fifo)]) == 2
    out, err = capsys.readouterr()
    assert "wrote" not in out and err.count("\n") == 1 and f"{fifo} is a named pipe (FIFO)" in err
    assert fifo.is_fifo()
