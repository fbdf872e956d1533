"""The scorepad board: its config and pin rules, and the key entry of each game on a simulated
scorepad (texas-42, domino-bingo, tally): every entry shown before it is confirmed, an illegal
entry refused on the screen with its rule id, undo, the next game, switching games."""

import json

import pytest

from scoreboard import boardconfig
from scoreboard.app import App
from scoreboard.boardconfig import BoardConfigError
from scoreboard.hal.sim import SimBoard, VirtualClock
from scoreboard.rules import ConfigError
from tests.mpy import ROOT

PAD = ROOT / "firmware" / "boards" / "scorepad.json"


def raw():
    return json.loads(PAD.read_text())


def refused(cfg, *words):
    with pytest.raises(BoardConfigError) as e:
        boardconfig.load(cfg)
    for w in words:
        assert w in str(e.value), str(e.value)
    return e.value


# -- the config ------------------------------------------------------------------------------------

def test_scorepad_config_loads_with_its_key_lines():
    cfg = boardconfig.load(str(PAD))
    assert cfg["game"] == "texas-42" and cfg["game_config"] == {"target": 250}
    assert cfg["buttons"] == {}
    assert cfg["keypad"] == {"rows": [13, 14, 16, 17], "cols": [18, 19, 23, 25],
                             "keys": "123A456B789C*0#D", "pull": "up", "strapping_ok": False}
    assert boardconfig.line_names(cfg) == ["key." + k for k in "123A456B789C*0#D"]
    assert boardconfig.load(cfg) == cfg
    rows = {r[1]: r for r in boardconfig.pin_map(cfg)}
    assert rows["keypad.row1"][:4] == (13, "keypad.row1", "out", "none")
    assert rows["keypad.col4"][:4] == (25, "keypad.col4", "in", "up")
    assert "keys A B C D" in rows["keypad.col4"][4]


@pytest.mark.parametrize("game", ["domino-bingo", "tally"])
def test_every_keypad_game_loads(game):
    cfg = dict(raw(), game=game, game_config={})
    assert boardconfig.load(cfg)["game"] == game


@pytest.mark.parametrize("change, words", [
    (lambda c: c["keypad"]["rows"].__setitem__(0, 34), ("keypad.rows[0]", "GPIO 34",
                                                         "input-only")),
    (lambda c: c["keypad"]["cols"].__setitem__(2, 36), ("keypad.cols[2]", "GPIO 36",
                                                         "no internal pull-up")),
    (lambda c: c["keypad"]["cols"].__setitem__(1, 6), ("keypad.cols[1]", "GPIO 6", "flash")),
    (lambda c: c["keypad"]["rows"].__setitem__(1, 2), ("keypad.rows[1]", "strapping")),
    (lambda c: c["keypad"]["rows"].__setitem__(3, 18), ("GPIO 18 is used twice",)),
    (lambda c: c["keypad"]["cols"].__setitem__(0, 21), ("GPIO 21 is used twice",)),
    (lambda c: c["keypad"].__setitem__("rows", [13, 14, 16]), ("keypad.rows must be a list of 4",)),
    (lambda c: c["keypad"].__setitem__("keys", "123A456B789C*0#"), ("keypad.keys",)),
    (lambda c: c["keypad"].__setitem__("keys", "113A456B789C*0#D"), ("appears twice",)),
    (lambda c: c["keypad"].__setitem__("keys", "123X456B789C*0#D"), ("must hold the legends",)),
    (lambda c: c["keypad"].__setitem__("colz", [1]), ("keypad.colz", "unknown key")),
    (lambda c: c.pop("keypad"), ("missing required key \"keypad\"",)),
    (lambda c: c.__setitem__("game", "five-pins"), ("keypad: a five-pins board has no keypad",)),
    (lambda c: c.__setitem__("game_config", {"target": 0}), ("game_config", "target=0")),
])
def test_bad_keypad_configs_are_refused_naming_key_and_pin(change, words):
    cfg = raw()
    change(cfg)
    if cfg["game"] == "five-pins":
        cfg["buttons"] = {"confirm": {"pin": 4}}
        cfg["pins"] = {p: {"pin": g, "active": 1} for p, g in zip("1234C", (26, 27, 32, 33, 5))}
        cfg["pins"]["C"]["strapping_ok"] = True
        cfg["game_config"] = {}
    refused(cfg, *words)


def test_columns_on_34_39_with_external_pull_ups():
    cfg = raw()
    cfg["keypad"]["cols"] = [34, 35, 36, 39]
    cfg["keypad"]["pull"] = "none"
    loaded = boardconfig.load(cfg)
    assert "external 10 kOhm pull-up" in {r[1]: r for r in boardconfig.pin_map(loaded)}[
        "keypad.col1"][4]


# -- key entry on a simulated scorepad ------------------------------------------------------------

class Pad:
    def __init__(self, tmp_path, game=None, config=None, players=None):
        self.clock = VirtualClock()
        self.board = SimBoard(str(PAD), str(tmp_path / "flash"), self.clock)
        self.app = App(self.board)
        self.app.boot()
        self.sent = []
        self.app.emit = lambda kind, payload: self.sent.append((kind, payload))
        if game is not None or config is not None or players is not None:
            self.app.new_game(config=config, players=players, game=game)
        self.wait(50)

    def wait(self, ms):
        for _ in range(ms // 5):
            self.clock.advance(5)
            self.app.tick()

    def keys(self, text):
        for k in text:
            self.board.set_line("key." + k, 1)
            self.wait(60)
            self.board.set_line("key." + k, 0)
            self.wait(60)
        return self.screen()

    def screen(self):
        return self.app.display.rows

    def state(self):
        return self.app.game.state()

    def actions(self):
        # protocol 2: an action that packs is sent as one compact `a` frame (code + state)
        from scoreboard import pack

        out = []
        for k, p in self.sent:
            if k == "rec" and "a" in p:
                out.append(p)
            elif k == "a":
                a = {"a": "undo"} if p["code"] == pack.UNDO else self.app.game.decode(p["code"])
                out.append(dict(a, seq=p["seq"], t=p["t"]))
        return out


def test_texas_42_hand_shown_then_scored(tmp_path):
    pad = Pad(tmp_path, players=["Ann", "Bob", "Cy", "Di"])
    assert pad.screen()[:3] == ["to 250  hand 1", "Ann&Cy       0", "Bob&Di       0"]
    assert pad.screen()[3] == "side 1/2?"
    assert pad.keys("2")[3] == "side 2_"
    assert pad.keys("#34")[3] == "side 2 bid 34_"
    assert pad.keys("#3") [3:5] == ["side 2 bid 34", "took 3_"]
    assert pad.keys("0#")[3:5] == ["S2 34 took 30", "SET #=ok"]
    assert pad.state()["hands"] == 0  # shown, not yet scored
    pad.keys("#")
    assert pad.state() == {"scores": [46, 0], "hands": 1, "winner": None}  # T42-6 set
    assert [a["a"] for a in pad.actions()] == ["hand"]
    assert pad.actions()[0]["bidder"] == 1 and pad.actions()[0]["took"] == 30
    assert pad.screen()[3] == "last +46/+0"


@pytest.mark.parametrize("typed, rule", [("3#", "T42-1"), ("1#29#", "T42-2"), ("1#85#", "T42-2"),
                                         ("1#30#43#", "T42-3")])
def test_texas_42_illegal_entry_refused_on_screen_with_its_rule(tmp_path, typed, rule):
    pad = Pad(tmp_path)
    screen = pad.keys(typed)
    assert any(r.startswith("!" + rule) for r in screen), screen
    assert pad.state()["hands"] == 0
    # The field stays open: put it right and go on.
    pad.keys("*" * 3)
    assert not any(r.startswith("!") for r in pad.screen())


def test_texas_42_back_and_undo(tmp_path):
    pad = Pad(tmp_path)
    pad.keys("1#35#")
    assert pad.screen()[-1].startswith("took")
    pad.keys("*")  # back to the bid, its digits kept for correction
    assert pad.screen()[3] == "side 1 bid 35_"
    pad.keys("*6#40##")
    assert pad.state()["scores"] == [40, 2]
    assert pad.keys("D")[4:6] == ["undo last? #=yes", "*=no"]
    pad.keys("*")
    assert pad.state()["hands"] == 1  # kept
    pad.keys("D#")
    assert pad.state() == {"scores": [0, 0], "hands": 0, "winner": None}
    pad.keys("D#")
    assert any(r.startswith("!LOG") for r in pad.screen()), pad.screen()  # nothing to undo


def test_texas_42_win_then_next_game(tmp_path):
    pad = Pad(tmp_path, config={"target": 40})
    pad.keys("1#42#42##")
    assert pad.state()["winner"] == 0
    assert "WINNER S1" in pad.screen() and "# = next game" in pad.screen()
    pad.keys("230*")  # entry is closed after the winner
    assert pad.state()["hands"] == 1
    pad.keys("#")
    assert pad.state() == {"scores": [0, 0], "hands": 0, "winner": None}
    assert pad.app.game.config == {"target": 40}


def test_domino_bingo_entry(tmp_path):
    pad = Pad(tmp_path, game="domino-bingo", players=["Lena", "Oleg"])
    assert pad.app.game_id == "domino-bingo" and pad.app.game.config == {"big_points_to_win": 7}
    assert pad.screen()[3] == "trump 0-6? _"
    pad.keys("5#80#52#")
    assert pad.screen()[3] == "T5 P80/52 D_"
    pad.keys("20#0#")
    assert pad.screen()[3] == "T5 P80/52 D20/0"
    pad.keys("0#0#")
    assert pad.screen()[3:5] == ["T5 P80/52 D20/0", "B0/0 #=ok"]
    pad.keys("#")
    assert pad.state() == {"big": [1, 0], "hands": 1, "winner": None}
    screen = pad.keys("0#100#44#")  # 144 > 143 in play with blanks trumps
    assert any(r.startswith("!DB-6") for r in screen), screen
    screen = pad.keys("**43#30#")  # a declaration of 30 is no sum of 20/40/50/60
    assert any(r.startswith("!DB-8") for r in screen), screen
    pad.keys("**40#0#1#0##")
    assert pad.state() == {"big": [3, 0], "hands": 2, "winner": None}
    assert pad.actions()[-1] == dict(pad.actions()[-1], trump=0, points=[100, 43],
                                     declared=[40, 0], big=[1, 0])


def test_tally_entry_add_take_away_and_finish(tmp_path):
    pad = Pad(tmp_path, game="tally", config={"players": 3, "kind": "caps"},
              players=["Ann", "Bob", "Cy"])
    assert pad.screen()[0] == "caps"
    assert pad.screen()[4] == "player 1-3? _"
    pad.keys("2#5#")
    assert pad.screen()[4] == "P2 +5 #=ok"
    pad.keys("#")
    assert pad.state()["counts"] == [0, 5, 0]
    pad.keys("2#B2##")
    assert pad.state()["counts"] == [0, 3, 0]
    screen = pad.keys("4#")
    assert any(r.startswith("!TL-5") for r in screen), screen
    pad.keys("*3#A3##")
    assert pad.state()["counts"] == [0, 3, 3]
    assert pad.keys("C")[-2:] == ["finish game?", "#=yes *=no"]
    pad.keys("#")
    assert pad.state() == {"counts": [0, 3, 3], "winner": "draw"}
    assert "DRAW" in pad.screen()
    pad.keys("D#")
    assert pad.state()["winner"] is None


def test_a_scorepad_switches_games_and_resumes_the_one_in_progress(tmp_path):
    pad = Pad(tmp_path, game="tally", config={"players": 2, "target": 3})
    pad.keys("1#2##")
    assert pad.state()["counts"] == [2, 0]
    # Power cut: the board boots as a texas-42 scorepad and resumes the tally game.
    board = SimBoard(str(PAD), str(tmp_path / "flash"), VirtualClock())
    app = App(board)
    app.boot()
    assert app.game_id == "tally" and app.game.state()["counts"] == [2, 0]
    assert app.hello()["game"] == "tally"
    app.new_game(game="texas-42")
    assert app.game_id == "texas-42" and app.game.config == {"target": 250}
    with pytest.raises(ConfigError):
        app.new_game(game="five-pins")  # no keypad game


# -- hardware --------------------------------------------------------------------------------------

@pytest.mark.parametrize("parts", [1, 2, 3])
def test_a_game_switched_while_the_screen_is_redrawn_part_by_part(tmp_path, parts):
    # The screen is redrawn a part a pass (App._draw); a scorepad may switch games between two
    # parts (the host's `new`): the redraw under way shows the game it began with, whole, and
    # the next one the new game. Before, the old game's state met the new game's rows.
    pad = Pad(tmp_path, players=["Ann", "Bob", "Cy", "Di"])
    pad.app.dirty = True
    for _ in range(parts):
        assert pad.app._draw()  # a part of a redraw of texas-42's screen, not the last
    pad.app.new_game(game="domino-bingo", players=["Ann", "Bob"])
    while pad.app._draw():
        pass
    assert pad.screen()[1].startswith("Ann&Cy")  # texas-42's, whole
    assert not pad.app.error
    pad.wait(100)  # the next redraw: the new game's
    assert pad.app.game_id == "domino-bingo" and "Ann&Cy" not in " ".join(pad.screen())
    assert pad.screen() == pad.app.status()["screen"] and not pad.app.error


def test_bom_agrees_with_the_scorepad_config():
    import csv

    cfg = boardconfig.load(str(PAD))
    with open(ROOT / "hardware" / "scorepad" / "bom.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["part", "quantity", "example part number", "rough cost EUR", "notes"]

    def qty(pattern):
        found = [int(r[1]) for r in rows[1:] if pattern.lower() in r[0].lower()]
        assert len(found) == 1, pattern
        return found[0]
    assert qty("matrix keypad 4x4") == 1
    assert qty("jumper wires") >= len(cfg["keypad"]["rows"]) + len(cfg["keypad"]["cols"])
    assert qty("ESP32-DevKitC") == 1 and qty("SSD1306") == 1
    assert not any("resistor" in r[0].lower() for r in rows[1:])  # internal pull-ups
    text = (ROOT / "hardware" / "README.md").read_text()
    for name in ("bom.csv", "pinmap.md", "wiring.svg"):
        assert "scorepad/%s" % name in text
    assert "docs/scorepad.md" in (ROOT / "README.md").read_text()
