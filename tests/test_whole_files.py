"""Every file Chalk writes is whole or absent after a full disk, Ctrl-C or a kill: `chalk export
--all` into a directory on a full disk once left 16 of 300 files and a stray `.part`, a single
export a `.part`, a failed `chalk archive` an empty archive or WAL files, and a full standard
output read "cannot write None". A real full disk is a small tmpfs (mounted when this runs as
root, as it does in CI here); everywhere else ENOSPC comes from os.write itself, the lowest
layer Python writes through."""

import contextlib
import errno
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from chalk import atomic
from chalk.errors import ChalkError
from chalk.export import export
from chalk.randomgame import random_match
from chalk.store import Archive, board_records

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def small_disk(tmp_path, kb):
    """A directory on a filesystem of `kb` KiB, or None where none can be mounted."""
    d = tmp_path / ("disk-" + uuid.uuid4().hex[:6])
    d.mkdir()
    if os.geteuid() != 0:
        yield None
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % kb, "tmpfs", str(d)],
                       capture_output=True)
    if r.returncode != 0:
        yield None
        return
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def archive_of(path, games=12, actions=200):
    with Archive(path, create=True) as a:
        b = a.board({"device": "esp32-a1b2c3d4e5f6", "board": "five-pins", "game": "five-pins"})
        seq = 1
        for g in range(games):
            head, acts = random_match("five-pins", seed=g, config={"target": 400},
                                      max_actions=actions, players=["Ann", "Bob"])
            recs, states = board_records(dict(head, game_no=g + 1), acts, seq=seq, end=False)
            recs.append({"seq": recs[-1]["seq"] + 1, "type": "E", "end": {"winner": None}})
            a.ingest(b, recs, states, resync=True)
            seq = recs[-1]["seq"] + 1
    return path


def listing(d):
    return sorted(p.name for p in Path(d).iterdir()) if Path(d).exists() else None


def fill(d):
    """Fill the disk but a few bytes."""
    fd = os.open(d / "ballast", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x" * 512)
    finally:
        os.close(fd)


def test_export_all_on_a_full_disk_leaves_nothing_half(tmp_path):
    db = archive_of(tmp_path / "a.db")
    with small_disk(tmp_path, 96) as disk:
        if disk is None:
            pytest.skip("no tmpfs here: test_enospc_at_the_lowest_layer covers it")
        out = disk / "games"
        r = subprocess.run([sys.executable, "-m", "chalk.cli", "export", "--all", "-o", out,
                            "--format", "csv", "--db", db], capture_output=True, text=True)
        assert r.returncode == 1, r.stderr
        assert "the disk is full" in r.stderr and "Traceback" not in r.stderr
        assert "None" not in r.stderr
        assert listing(disk) == [], listing(disk)  # no half-filled directory, no stray file
        out.mkdir()
        (out / "keep.txt").write_text("mine")
        r = subprocess.run([sys.executable, "-m", "chalk.cli", "export", "--all", "-o", out,
                            "--db", db], capture_output=True, text=True)
        assert r.returncode == 1 and "the disk is full" in r.stderr
        assert listing(disk) == ["games"] and listing(out) == ["keep.txt"]
        # One game to a file on a full disk: no file, no .part.
        fill(disk)
        r = subprocess.run([sys.executable, "-m", "chalk.cli", "export", "1", "-o",
                            disk / "one.jsonl", "--db", db], capture_output=True, text=True)
        assert r.returncode == 1 and "cannot write %s: the disk is full" % (disk / "one.jsonl") \
            in r.stderr
        assert listing(disk) == ["ballast", "games"]


def test_archive_on_a_full_disk_leaves_no_empty_archive(tmp_path):
    with small_disk(tmp_path, 16) as disk:
        if disk is None:
            pytest.skip("no tmpfs here")
        fill(disk)
        db = disk / "a.db"
        r = subprocess.run([sys.executable, "-m", "chalk.cli", "archive", "--once", "--port",
                            "loop://", "--db", db], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert listing(disk) == ["ballast"], listing(disk)


@pytest.fixture
def enospc_after(monkeypatch):
    """os.write raises ENOSPC once `n` bytes went through it (the lowest layer)."""
    real = os.write

    def arm(n):
        left = [n]

        def write(fd, data):
            if fd <= 2:
                return real(fd, data)
            if left[0] <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            k = min(len(data), left[0])
            left[0] -= k
            return real(fd, bytes(data[:k]))
        monkeypatch.setattr(os, "write", write)
    return arm


@pytest.mark.parametrize("after", [0, 100, 5000, 40000])
def test_enospc_at_the_lowest_layer(tmp_path, enospc_after, after):
    db = archive_of(tmp_path / "a.db", games=6, actions=120)
    out = tmp_path / "out"
    with Archive(db) as a:
        enospc_after(after)
        with pytest.raises(ChalkError, match="the disk is full"):
            export(a, (), all_games=True, fmt="jsonl", out=out)
        assert listing(tmp_path) == ["a.db", "a.db-shm", "a.db-wal"] or listing(tmp_path) == [
            "a.db"], listing(tmp_path)
        target = tmp_path / "one.csv"
        target.write_text("old")
        with pytest.raises(ChalkError, match="the disk is full"):
            export(a, [1], fmt="csv", out=target)
        assert target.read_text() == "old"  # as it was, whole
        assert not [p for p in tmp_path.iterdir() if "tmp" in p.name or "part" in p.name]


def test_ctrl_c_half_way_leaves_the_target_as_it_was(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    target.write_text("old")
    real = os.write
    calls = [0]

    def write(fd, data):
        calls[0] += 1
        if fd > 2 and calls[0] > 1:
            raise KeyboardInterrupt
        return real(fd, bytes(data[:10]))

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_file(target, "new " * 1000)
    assert target.read_text() == "old" and listing(tmp_path) == ["t.txt"]


def test_a_full_standard_output_is_one_line_naming_it(tmp_path):
    db = archive_of(tmp_path / "a.db", games=1, actions=20)
    with Archive(db) as a:
        def full(text):
            raise OSError(errno.ENOSPC, "No space left on device")
        with pytest.raises(ChalkError) as e:
            export(a, [1], fmt="jsonl", write=full)
    assert str(e.value.message) == "cannot write the standard output: the disk is full"


def test_the_key_store_and_key_files_are_whole_or_as_they_were(tmp_path, enospc_after,
                                                               monkeypatch):
    from chalk.chainhost import SoftKey
    from chalk.keys import KeyStore

    path = tmp_path / "keys.json"
    store = KeyStore(path)
    store.add_board("esp32-a1b2c3d4e5f6", SoftKey().pub, 1, "enrolled over USB")
    store.save()
    before = path.read_bytes()
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    store.add_board("esp32-0a0b0c0d0e0f", SoftKey().pub, 1, "enrolled over USB")
    enospc_after(100)  # the disk fills half way through the new store
    with pytest.raises(ChalkError, match="the key store: cannot write .*the disk is full"):
        store.save()
    monkeypatch.undo()
    assert path.read_bytes() == before and listing(tmp_path) == ["keys.json"]
    assert len(KeyStore(path).entries) == 1  # the old store, whole
    # A writer killed half way (kill -9 runs no clean-up) leaves its hidden file: the next
    # write of the store sweeps it.
    (tmp_path / ".keys.json.x1y2.chalk-tmp").write_text('{"chalk_keys": 2, "ke')
    store.save()
    assert listing(tmp_path) == ["keys.json"] and len(KeyStore(path).entries) == 2
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_key_file_on_a_full_disk_is_one_line_and_nothing_left(tmp_path):
    store = tmp_path / "keys.json"
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "keys", "league", "County League",
                        "--keys", store], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with small_disk(tmp_path, 16) as disk:
        if disk is None:
            pytest.skip("no tmpfs here: the test above covers it")
        fill(disk)
        for cmd in (["keys", "export", "-o", disk / "league-keys.json", "--keys", store],
                    ["keys", "league", "Another", "--keys", disk / "keys.json"]):
            r = subprocess.run([sys.executable, "-m", "chalk.cli"] + [str(c) for c in cmd],
                               capture_output=True, text=True)
            assert r.returncode == 1 and "the disk is full" in r.stderr, r.stderr
            assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 2
            assert listing(disk) == ["ballast"], listing(disk)
