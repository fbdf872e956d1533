"""Checkpoint files (scoreboard/spill.py): a long game keeps only its newest blocks of codes in
RAM, the rest on flash, and every undo, every state and every boot comes out as if all were in
RAM; a damaged file is refused plainly, and boot writes it again without rewriting what is
right."""

import random

import pytest

from chalk.randomgame import GAMES
from scoreboard.rules import RuleError, new_game
from scoreboard.rules.base import Codes
from scoreboard.spill import BlockStore, SpilledCodes, attach, clean, path_for
from tests.longgames import ALL, endless, long_config


def ram_blocks(g):
    return sum(1 for b in g._codes._blocks if b is not None)


def spill_to(g, store):
    attach(g, store.path)
    g._codes.store = store  # the test's own store object, to count its writes


def play_with_store(game_id, actions, store):
    g = new_game(game_id, long_config(game_id))
    spill_to(g, store)
    most = 0
    for a in actions:
        g.apply(a)
        while g.spill():
            pass
        most = max(most, ram_blocks(g))
    return g, most


@pytest.mark.parametrize("game_id", ALL)
def test_a_long_game_keeps_a_few_blocks_in_ram_and_undoes_to_the_start(game_id, tmp_path):
    _, actions = endless(game_id, 1500, seed=5)
    actions = [a for _, _, a in actions]
    store = BlockStore(str(tmp_path / "g00001.ckp"))
    g, most = play_with_store(game_id, actions, store)
    plain = new_game(game_id, long_config(game_id))
    for a in actions:
        plain.apply(a)
    assert g.state() == plain.state() and len(g) == len(plain)
    if len(g) > (SpilledCodes.RAM_BLOCKS + 1) * Codes._BLOCK:
        assert store.writes > 0
    assert most <= SpilledCodes.RAM_BLOCKS + 1  # + the block being filled before spill() runs
    assert list(g._codes) == list(plain._codes)  # read back from flash where needed
    # Undo all the way back: every state is the refold's, the blocks come back from flash.
    while len(plain):
        assert g.apply({"a": "undo"}) == plain.apply({"a": "undo"})
        assert ram_blocks(g) <= SpilledCodes.RAM_BLOCKS + 1


@pytest.mark.parametrize("game_id", ["five-pins", "domino-bingo", "tally"])
def test_undo_and_play_on_across_blocks_rewrites_what_changed(game_id, tmp_path):
    rng = random.Random(11)
    _, opening, make = GAMES[game_id]
    store = BlockStore(str(tmp_path / "g.ckp"))
    g = new_game(game_id, long_config(game_id))
    spill_to(g, store)
    plain = new_game(game_id, long_config(game_id))
    if opening is not None:
        g.apply(opening)
        plain.apply(opening)
    for _ in range(3000):
        if len(plain) > 1 and rng.random() < 0.2:
            for _ in range(rng.randint(1, 200)):  # long runs of undos cross blocks back
                if len(plain) <= 1:
                    break
                assert g.apply({"a": "undo"}) == plain.apply({"a": "undo"})
            continue
        action = make(rng, plain.state(), 0.3)
        try:
            want = plain.apply(action)
        except RuleError:
            continue
        if plain.outcome() is not None:
            plain.apply({"a": "undo"})
            continue
        assert g.apply(action) == want
        g.spill()
    assert list(g._codes) == list(plain._codes)
    for k in range(0, len(plain), 97):
        assert g.state_at(k) == plain.state_at(k)


def test_a_damaged_checkpoint_is_refused_plainly_and_nothing_changes(tmp_path):
    _, actions = endless("five-pins", 900, seed=2)
    path = tmp_path / "g00007.ckp"
    g, _ = play_with_store("five-pins", [a for _, _, a in actions], BlockStore(str(path)))
    data = bytearray(path.read_bytes())
    data[40] ^= 0x10  # a bit of block 0 flipped on flash
    path.write_bytes(bytes(data))
    before = g.state()
    n = len(g)
    with pytest.raises(RuleError) as e:
        while True:
            g.apply({"a": "undo"})
    assert "block 0" in str(e.value) and "damaged" in str(e.value) and "restart" in str(e.value)
    assert len(g) < n and g.state() != before  # undos up to the damaged block went through
    kept = g.state()
    with pytest.raises(RuleError):
        g.apply({"a": "undo"})
    assert g.state() == kept  # the refused undo changed nothing
    path.write_bytes(b"")  # the file cut short: refused the same way
    with pytest.raises(RuleError, match="cut short"):
        g.apply({"a": "undo"})


def test_boot_checks_the_file_and_writes_only_what_differs(tmp_path):
    _, actions = endless("shove-hapenny", 1300, seed=3)
    actions = [a for _, _, a in actions]
    path = str(tmp_path / "g00001.ckp")
    first = BlockStore(path)
    first.verify = True
    play_with_store("shove-hapenny", actions, first)
    assert first.writes >= 6
    again = BlockStore(path)
    again.verify = True
    g, _ = play_with_store("shove-hapenny", actions, again)
    assert again.writes == 0  # a second boot of the same journal rewrites nothing
    data = bytearray(open(path, "rb").read())
    data[700] ^= 1
    open(path, "wb").write(bytes(data))
    third = BlockStore(path)
    third.verify = True
    play_with_store("shove-hapenny", actions, third)
    assert third.writes == 1  # only the damaged slot


def test_stale_checkpoint_files_are_removed(tmp_path):
    for no in (1, 2, 3):
        (tmp_path / ("g%05d.ckp" % no)).write_bytes(b"x")
    (tmp_path / "g00002.jnl").write_bytes(b"")
    (tmp_path / "notes.ckp").write_bytes(b"")
    clean(str(tmp_path), keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g00002.ckp", "g00002.jnl",
                                                          "notes.ckp"]
    clean(str(tmp_path))
    assert not (tmp_path / "g00002.ckp").exists()
    assert path_for("/journal", 12) == "/journal/g00012.ckp"
    assert path_for("/", 3) == "/g00003.ckp"


def test_domino_bingo_hands_stand_alone_in_two_words():
    g = new_game("domino-bingo", {"big_points_to_win": 1000000})
    hands = [
        {"a": "hand", "trump": 0, "points": [143, 0], "declared": [0, 0], "big": [0, 0]},
        {"a": "hand", "trump": 6, "points": [70, 70], "declared": [60, 170], "big": [1, 3]},
        {"a": "hand", "trump": 5, "points": [0, 147], "declared": [10230, 10220],
         "big": [255, 254]},
    ]
    for h in hands:
        code = g.encode(h)
        assert new_game("domino-bingo", {}).decode(code) == h  # no table: a fresh game reads it
        assert 0 <= code < 1 << 60
        g.apply(h)
    assert g.encode(hands[0]) < 1 << 27  # a usual hand is a small int on a 32-bit board
    assert g.actions() == hands
    for bad, rule in (({"declared": [10240, 0]}, "DB-8"), ({"big": [0, 256]}, "DB-3")):
        h = dict(hands[0], **bad)
        with pytest.raises(RuleError) as e:
            g.apply(h)
        assert e.value.rule == rule and "more than one hand can give" in str(e.value)


def test_the_board_keeps_its_checkpoints_beside_the_journal_and_drops_them_at_the_end(tmp_path):
    from pathlib import Path

    from scoreboard.app import App
    from scoreboard.hal.sim import SimBoard, VirtualClock
    from tests.longgames import board_config, journal

    root = Path(__file__).resolve().parent.parent
    head, actions = endless("novuss", 1200, seed=4)
    flash = tmp_path / "flash"
    flash.mkdir()
    journal(flash, head, actions)
    (flash / "g00009.ckp").write_bytes(b"left by a game long gone")
    cfg = board_config(root, "novuss", head, tmp_path / "board.json")
    app = App(SimBoard(str(cfg), str(flash), VirtualClock()))
    app.boot()
    assert not (flash / "g00009.ckp").exists()
    assert (flash / "g00001.ckp").exists()
    assert ram_blocks(app.game) <= SpilledCodes.RAM_BLOCKS
    plain = new_game("novuss", head["config"])
    for _, _, a in actions:
        plain.apply(a)
    assert app.game.state() == plain.state()
    for _ in range(300):  # back across blocks that live on flash
        assert app.submit({"a": "undo"})
        plain.apply({"a": "undo"})
        for _ in range(3):
            app.tick()
    assert app.game.state() == plain.state()
    app.new_game()
    assert not (flash / "g00001.ckp").exists()
    # The board restarted: the new game boots, with no checkpoint file of its own yet.
    app2 = App(SimBoard(str(cfg), str(flash), VirtualClock()))
    app2.boot()
    assert app2.game_id == "novuss" and len(app2.game) == 0
    assert not list(flash.glob("*.ckp"))
