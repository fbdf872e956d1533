"""A command sent from the venue's page waits out a restart of its table's session (the archive
locked by another program for a moment, a reconnection) within its own timeout, and then reaches
the board once; past its time it fails with a line saying so, and is never carried out late.
The table's queue is driven directly here (no board, no server): the cases are about order and
deadlines, which a live venue hits only by chance."""

import threading

import pytest

from chalk.errors import ChalkError
from chalk.serve import Table


class Venue:
    def __init__(self):
        self.stop = threading.Event()
        self.quiet = True

    def say(self, text):
        pass

    def changed(self, table):
        pass

    def frame(self, table, f):
        pass


class Link:
    def __init__(self):
        self.sent = []

    def request(self, cmd, args=None, timeout=5.0):
        self.sent.append((cmd, args))
        return {"done": cmd}


def table(tmp_path):
    t = Table(Venue(), "window", "/dev/null", tmp_path / "a.db")
    t.phase = "live"  # connected: submit() queues
    return t


def test_a_command_waiting_when_the_session_ends_reaches_the_next_session_once(tmp_path):
    t = table(tmp_path)
    fut = t.submit("undo", {}, timeout=5.0)
    t._fail_pending("lost the connection to the board of table window")  # a session ends
    assert not fut.done()
    link = Link()
    t._between(link)  # the next session's first quiet moment
    assert fut.result(timeout=0) == {"done": "undo"}
    assert link.sent == [("undo", {})]
    t._between(link)
    assert link.sent == [("undo", {})]  # carried out once


def test_a_command_past_its_time_fails_and_is_never_carried_out(tmp_path, monkeypatch):
    t = table(tmp_path)
    fut = t.submit("undo", {}, timeout=0.1)
    import chalk.serve as serve

    later = serve.time.monotonic() + 1.0
    monkeypatch.setattr(serve.time, "monotonic", lambda: later)
    link = Link()
    t._between(link)
    with pytest.raises(ChalkError, match="not reachable within 0.1 s"):
        fut.result(timeout=0)
    assert link.sent == []
    fut2 = t.submit("undo", {}, timeout=0.1)
    later += 1.0
    t._fail_pending("lost the connection to the board of table window")
    with pytest.raises(ChalkError, match="lost the connection"):
        fut2.result(timeout=0)


def test_a_server_stopping_fails_every_waiting_command(tmp_path):
    t = table(tmp_path)
    fut = t.submit("undo", {}, timeout=30.0)
    t.venue.stop.set()
    t._fail_pending("the table window is starting again")
    with pytest.raises(ChalkError, match="starting again"):
        fut.result(timeout=0)
