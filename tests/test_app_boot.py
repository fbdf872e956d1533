"""The app's own edges, on CPython with the simulated hal and a virtual clock: overflow claims
through the pegs (SH-15), what boot does with a journal it cannot play on, a journal that refuses
to write, and an action that carries a seq of its own."""

import json
from pathlib import Path

import pytest

from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, VirtualClock
from scoreboard.journal import Journal

BOARDS = Path(__file__).resolve().parent.parent / "firmware" / "boards"


def make(flash, name="shove-hapenny", **game_config):
    cfg = json.loads((BOARDS / (name + ".json")).read_text())
    cfg["game_config"].update(game_config)
    board = SimBoard(cfg, str(flash), VirtualClock())
    app = App(board)
    return board, app


def run(board, app, ms):
    for _ in range(ms // 5):
        board.clock.advance(5)
        app.tick()


def press(board, app, button, hold=100):
    board.set_line("btn." + button, 1)
    run(board, app, hold)
    board.set_line("btn." + button, 0)
    run(board, app, 100)


def peg(board, app, side, bed, hole):
    board.set_line("peg.%d.%d.%d" % (side, bed, hole), 1)
    run(board, app, 400)  # past the peg debounce


def test_sh15_claim_mode_overflow_pegs_are_claimed_with_the_claim_button(tmp_path):
    board, app = make(tmp_path, overflow="claim")
    app.boot()
    press(board, app, "done")  # A starts
    for hole in (1, 2, 3):
        peg(board, app, 0, 1, hole)
    press(board, app, "done")  # A fills bed 1
    press(board, app, "done")  # B: nothing
    peg(board, app, 1, 1, 1)  # A's next coin in bed 1 overflows: its peg goes in B's square
    press(board, app, "done")
    st = app.game.state()
    assert st["beds"][1][0] == 0 and st["next"] == 1  # not credited: B may claim it
    assert app.game.view()["claimable"][1][0] == 1
    press(board, app, "claim")
    st = app.game.state()
    assert st["beds"] == [[3, 0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0]]
    assert app.warnings() == []
    assert [a["a"] for a in app.journal.actions()] == ["start", "turn", "turn", "turn", "claim"]


def test_a_journal_game_of_another_kind_is_closed_and_a_new_game_starts(tmp_path):
    _, five = make(tmp_path, "five-pins")
    five.boot()
    assert five.submit({"a": "break", "player": 0})
    five.journal.close()
    board, app = make(tmp_path)  # the same flash, now under a shove ha'penny board
    app.boot()
    app.tick()  # the screen draws: the game is shove ha'penny's
    assert app.game_id == "shove-hapenny" and app.game.state()["next"] is None
    assert any("is five-pins; this board plays shove-hapenny: closed" in p for p in app.problems)
    j = Journal(str(tmp_path))
    j.boot()
    assert j.header(1)["game"] == "five-pins"  # kept for the host
    assert j.header(2)["game"] == "shove-hapenny"


def test_an_action_refused_at_boot_closes_that_game_so_later_play_survives(tmp_path):
    j = Journal(str(tmp_path))
    j.boot()
    j.new_game({"chalk": 1, "game": "shove-hapenny", "config": {}, "players": []})
    j.append({"a": "start", "side": 0, "t": 0})
    j.append({"a": "start", "side": 1, "t": 5})  # no rules accept a second start
    j.close()
    board, app = make(tmp_path)
    app.boot()
    assert any("journal action refused" in p for p in app.problems)
    assert app.journal.stats()["game_no"] == 2
    press(board, app, "done")  # A starts the new game
    app.journal.close()
    board, again = make(tmp_path)
    again.boot()
    assert again.game.state()["next"] == 0  # what was played after the refusal is still there
    assert again.journal.stats()["game_no"] == 2


def test_a_journal_that_cannot_write_is_shown_and_play_does_not_crash(tmp_path, monkeypatch):
    board, app = make(tmp_path)
    app.boot()

    def full(*args, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(app.journal, "new_game", full)
    assert app.new_game() is None
    assert app.error.startswith("journal: ") and "No space left" in app.error
    run(board, app, 50)
    assert "journal: [Errno 28] No space left on device" in app.warnings()


def test_an_action_carrying_a_seq_gets_the_journal_s_number(tmp_path):
    sent = []
    board, app = make(tmp_path)
    app.emit = lambda kind, payload: sent.append((kind, payload))
    app.boot()
    assert app.submit({"a": "start", "side": 0, "seq": 99})
    kind, p = sent[-1]  # one compact action frame: the record packs (protocol v2)
    assert kind == "a" and p["seq"] == 2 and app.game.decode(p["code"]) == {"a": "start",
                                                                          "side": 0}
    assert "seq" not in list(app.journal.actions())[-1]


def test_a_fraction_in_an_action_is_never_journaled(tmp_path):
    # It was journaled, then the hash chain refused it: the live state left it out, the journal
    # kept it, and the board never booted again (ValueError in ChainedJournal.boot).
    from scoreboard.link import Refused
    from scoreboard.serve import Handler

    board, app = make(tmp_path, "five-pins")
    app.boot()
    h = Handler(app)

    def act(action):  # the command's steps, as the board's link takes them (Link._run)
        steps = h.cmd_act({"action": action})
        try:
            while True:
                next(steps)
        except StopIteration as e:
            return e.value

    before = app.journal.stats()["last_seq"]
    try:
        act({"a": "break", "player": 0, "x": 1.5})
        raise AssertionError("taken")
    except Refused as e:
        assert "cannot be chained" in str(e) and "not written" in str(e)
    assert app.journal.stats()["last_seq"] == before and app.game.state()["next"] is None
    assert act({"a": "break", "player": 0})["seq"] == before + 1
    app.journal.close()
    _, again = make(tmp_path, "five-pins")
    again.boot()
    assert again.game.state()["next"] == 0 and not again.problems


def test_a_journal_the_app_cannot_read_boots_into_a_new_game(tmp_path):
    # Older firmware journaled a fraction: the chain cannot be rebuilt from it. The board boots,
    # says which game it stopped, and plays on in a new one; the old file stays as it was.
    j = Journal(str(tmp_path))
    j.boot()
    j.new_game({"chalk": 1, "game": "five-pins", "config": {}, "players": ["A", "B"]})
    j.append({"a": "break", "player": 0, "t": 0})
    j.append({"a": "shot", "player": 0, "pins": "1", "carom": 0, "fouls": [], "x": 1.5,
              "t": 9})
    j.close()
    old = (tmp_path / "g00001.jnl").read_bytes()
    board, app = make(tmp_path, "five-pins")
    app.boot()
    assert any("journal game 1 could not be read" in p and "a new game started" in p
               for p in app.problems), app.problems
    assert app.journal.stats()["game_no"] == 2 and app.game.state()["next"] is None
    assert app.submit({"a": "break", "player": 1})
    app.journal.close()
    assert (tmp_path / "g00001.jnl").read_bytes() == old
    board, again = make(tmp_path, "five-pins")
    again.boot()  # and again, and again: the new game resumes, the old one is reported
    assert again.journal.stats()["game_no"] == 2 and again.game.state()["next"] == 1
    assert any("no end record, a later game exists" in p for p in again.problems)


def test_an_action_too_long_for_a_frame_is_refused_before_it_is_written(tmp_path):
    board, app = make(tmp_path, "five-pins")
    app.boot()
    before = app.journal.stats()["last_seq"]
    assert not app.submit({"a": "break", "player": 0, "note": "x" * 1000})
    assert "too long for a frame" in app.error
    assert app.journal.stats()["last_seq"] == before


def test_a_heap_too_short_to_measure_is_said_low_and_the_board_plays_on(tmp_path, monkeypatch):
    # The gauge probes the largest block by allocating, and loads its module first: on a heap in
    # pieces either may fail. That is the answer (the heap is low), never a crash of the loop.
    from scoreboard import gauge

    board, app = make(tmp_path)
    sent = []
    app.emit = lambda typ, payload: sent.append((typ, payload))
    app.boot()

    def short(out):
        raise MemoryError("memory allocation failed, allocating 1280 bytes")
        yield
    monkeypatch.setattr(gauge, "measuring", short)
    app.check_heap()  # no MemoryError out of it
    assert app.heap_low and app.heap[1] == 0
    assert [p["warning"] for t, p in sent if t == "warn"][-1].startswith("heap low")
    run(board, app, 100)  # the loop goes on
    press(board, app, "done")
    assert [a["a"] for a in app.journal.actions()] == ["start"]


def test_a_boot_short_of_heap_never_closes_the_game_in_progress(tmp_path, monkeypatch):
    # A MemoryError while the journal is folded is the heap's, not the journal's: the game in
    # progress must not be stopped as unreadable (a new game started over it).
    board, app = make(tmp_path)
    app.boot()
    press(board, app, "done")
    app.journal.close()
    board, app = make(tmp_path)
    real = app.journal.boot

    def boot(on_action=None):
        def act(action):
            raise MemoryError("memory allocation failed")
        return real(act)
    monkeypatch.setattr(app.journal, "boot", boot)
    try:
        app.boot()
    except MemoryError:
        pass
    else:
        raise AssertionError("a boot out of heap must not go on as if the journal were bad")
    monkeypatch.undo()
    board, app = make(tmp_path)
    app.boot()  # the next boot (more heap) resumes the same game, untouched
    assert [a["a"] for a in app.journal.actions()] == ["start"] and not app.problems


def test_a_header_that_fits_a_frame_only_without_its_link_to_the_game_before_is_refused(
        tmp_path):
    # The journal adds "prev" (the board's game before: its number, seq and link) to every
    # header: a header checked without it fitted, was journaled, then did not fit its frame.
    from scoreboard.link import Link
    from scoreboard.rules import ConfigError
    from scoreboard.serve import Handler

    board, app = make(tmp_path, "five-pins")
    sent = []
    link = Link(sent.append, Handler(app), True)
    app.emit = link.emit
    app.boot()
    refused = taken = 0
    for length in range(30, 41):
        for count in range(6, 10):
            before = app.journal.stats()
            try:
                app.new_game(players=["\u00e9" * length] * count)
            except ConfigError as e:
                assert "does not fit in a frame" in str(e)
                assert app.journal.stats() == before  # nothing written
                refused += 1
                continue
            taken += 1
            link.pump(None)
    assert refused and taken  # both sides of the limit were tried
    assert not any("internal" in line or "too_long" in line for line in sent)


def test_an_action_whose_frame_the_heap_has_no_room_for_is_journaled_and_play_goes_on(
        tmp_path, monkeypatch):
    # An `a` frame's encoding ran out of heap (the qstr pool's growth on a heap in pieces) after
    # the action was journaled: the board stopped at the REPL, the record never sent. Now the
    # frame is dropped with its number spent: the host sees the gap and resyncs it.
    import serial

    from chalk.link import BoardLink
    from scoreboard import frames
    from scoreboard.link import Link
    from scoreboard.serve import Handler

    board, app = make(tmp_path)
    out = []
    link = Link(out.append, Handler(app), test_mode=True)
    app.emit = link.emit
    app.boot()
    press(board, app, "done")  # A starts: seq 2 (after the header)
    real = frames.encode
    failed = []

    def encode(n, typ, payload, *args, **kw):
        if typ == "a" and not failed:
            failed.append(n)
            raise MemoryError("memory allocation failed, allocating 1280 bytes")
        return real(n, typ, payload, *args, **kw)

    monkeypatch.setattr(frames, "encode", encode)
    peg(board, app, 0, 2, 1)
    press(board, app, "done")  # A's turn: journaled, its frame not made
    press(board, app, "done")  # B's turn: sent
    assert failed and link.stats()["dropped"] == 1
    assert [a["a"] for a in app.journal.actions()] == ["start", "turn", "turn"]
    assert app.game.state()["beds"][0][1] == 1 and app.game.state()["next"] == 0
    ser = serial.serial_for_url("loop://", timeout=0.01)
    host = BoardLink(ser, "loop://")
    for line in out:
        ser.write(line.encode())
    seqs = [f.payload["seq"] for f in host.frames(timeout=0.2) if f.type == "rec"]
    assert seqs == [1, 2, 4] and host.stats()["lost"] == 1  # the gap that makes it resync
    assert app.journal.stats()["last_seq"] == 4


@pytest.mark.parametrize("game,gap", [("five-pins", 1), ("shove-hapenny", 1),
                                      ("five-pins", 2), ("shove-hapenny", 2)])
def test_an_undo_from_the_host_done_in_steps_checks_again_after_an_action_of_the_table(
        tmp_path, game, gap):
    # The host's undo (and act) runs in steps of the board's link, between scans (the rules'
    # check and its record; its journal line and chain link; written and applied; the reply);
    # an action the table takes after the first or the second (a sensor's, from the loop's
    # tick) is the latest when the undo is written: the undo takes that one back (its line and
    # link worked out again), and the journal, booted again, gives the state the board shows.
    import random

    from chalk.randomgame import GAMES
    from scoreboard import frames
    from scoreboard.link import Link
    from scoreboard.serve import Handler

    board, app = make(tmp_path, game)
    out = []
    link = Link(out.append, Handler(app), budget=57)
    app.emit = link.emit
    app.boot()
    _, opening, make_action = GAMES[game]
    rng = random.Random(3)
    if opening is not None:
        assert app.submit(opening)

    def legal():  # an action the rules take, by the random player (it may try a wrong one)
        for _ in range(20):
            a = make_action(rng, app.game.state(), 0.3)
            try:
                app.game.prepare(a)
                return a
            except Exception:
                continue
        raise AssertionError("no legal action found")

    for _ in range(6):
        assert app.submit(legal())
    n = len(app.game)
    link.feed(frames.encode(7, "undo", {}).encode())
    while not (link._doing is not None and link._ready is None):
        link.step()  # the line, the collection, the command
    for _ in range(gap):
        assert link.step() == "command"  # the rules' check, its record (and its line, link)
    assert link._doing is not None and len(app.game) == n
    assert app.submit(legal())  # the table's action, between two steps of the host's undo
    assert len(app.game) == n + 1
    while link.busy():
        link.pump()
    ok = [frames.decode(line.encode()) for line in "".join(out).splitlines(True)]
    ok = [f for f in ok if f is not None and f[1] in ("ok", "err") and f[2]["id"] == 7]
    assert [f[1] for f in ok] == ["ok"], ok
    assert len(app.game) == n  # the table's action taken back, the others kept
    assert ok[0][2]["result"]["state"] == app.game.state()
    app.journal.close()
    _, again = make(tmp_path, game)
    again.boot()
    assert again.game.state() == app.game.state() and not again.problems
