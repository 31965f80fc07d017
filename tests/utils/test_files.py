"""Files replaced in one step: the old file or the new one, never a part; errors name the
file the user knows."""

from __future__ import annotations

import errno
import io
import os

import pytest

from botorch_mtucb.utils import files
from botorch_mtucb.utils.files import reraise_naming, write_all, write_atomically


def test_write_atomically_replaces_the_file_with_its_mode(tmp_path):
    target = tmp_path / "data.bin"
    write_atomically(target, b"abc", mode=0o640)
    assert target.read_bytes() == b"abc" and target.stat().st_mode & 0o777 == 0o640
    write_atomically(target, b"de")
    assert target.read_bytes() == b"de"
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]  # no temporary left
    with pytest.raises(FileNotFoundError) as error:
        write_atomically(tmp_path / "missing" / "x", b"")
    assert error.value.filename == str(tmp_path / "missing" / "x")


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch, step):
    target = tmp_path / "summary.json"
    target.write_bytes(b"old")

    def full_disk(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, step, full_disk)
    with pytest.raises(OSError) as error:
        write_atomically(target, b"new")
    assert error.value.errno == errno.ENOSPC and error.value.filename == str(target)
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_an_interruption_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "curves.csv"
    target.write_bytes(b"old")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and len(list(tmp_path.iterdir())) == 1


class _Trickle(io.RawIOBase):
    """A handle that writes at most two bytes per call, as an unbuffered write may."""

    def __init__(self):
        self.data = b""

    def writable(self):
        return True

    def write(self, view):
        self.data += bytes(view[:2])
        return min(2, len(view))


def test_write_all_writes_every_byte():
    handle = _Trickle()
    write_all(handle, b"abcde")
    assert handle.data == b"abcde"


def test_reraise_naming_keeps_the_type_and_errno():
    with pytest.raises(PermissionError) as error:
        reraise_naming(PermissionError(errno.EACCES, "Permission denied", "/t/.x.tmp"), "/t/x")
    assert (error.value.errno, error.value.filename) == (errno.EACCES, "/t/x")
    bare = OSError("no errno")
    with pytest.raises(OSError) as error:
        reraise_naming(bare, "/t/x")
    assert error.value is bare
