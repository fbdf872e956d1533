"""MicroPython interns every one-character str taken out of a str by its index, for good (its
qstr pool). The pool grows by doubling into one new block, and a block of 9-14 KB asked for late,
on a heap left in pieces by a long game, is not there: the board stops with a MemoryError. So
the names a board holds grow with its code, never with what a host, a player or a table sends:
hashing players' names into the chain, checking a game id or a frame type, encoding a frame."""

import re

import pytest

from tests.mpy import micropython_path, run_mp

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

CODE = r'''
import micropython
from scoreboard import chain, frames, games, rules


def work(names, game, typ):
    header = {"game": "five-pins", "players": names, "note": "a \"quote\"\n\ttab \x01"}
    chain.step(chain.ZERO, chain.record(1, "H", header))
    chain.canon(header)
    frames.encode(7, "rec", {"seq": 1, "type": "H", "header": header})
    games.module_name(game)
    try:
        rules.rules_for(game)
    except rules.ConfigError:
        pass
    frames._type_ok(typ)


work(["Ann", "Bob"], "five-pins", "rec")  # every code path once: its own names interned
print("BEFORE")
micropython.qstr_info()
work(["Zo\u00eb \u00c6r\u00f8", "\u0141ukasz \u674e", "\u00df\u0153\u20ac\u00a7"],
     "\u00c6\u00d8\u00c5-\u0133", "qwxyzjk9")
work(["Q", "V", "W"], "Xq-Zv", "vvzzqq")
print("AFTER")
micropython.qstr_info()
'''


def test_what_a_host_sends_is_never_interned_on_the_board():
    # (The firmware compiled from source here, which a board never does: more than its 96k.)
    out = run_mp(code=CODE, heap="160k").stdout
    counts = [int(n) for n in re.findall(r"n_qstr=(\d+)", out)]
    assert "BEFORE" in out and "AFTER" in out and len(counts) == 2, out
    assert counts[1] == counts[0], "the board's qstr pool grew by %d names" % (
        counts[1] - counts[0])
