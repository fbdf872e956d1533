"""`chalk replay`, run as a user runs it: hand-written logs in, final state or a clear error out.

The expected states are worked out by hand from the digests, not taken from the engine.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "host" / "chalk" / "samples"


def chalk(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, input=stdin, timeout=60)


def write_log(tmp_path, head, actions, name="game.jsonl"):
    lines = [json.dumps(head)]
    for i, a in enumerate(actions):
        lines.append(json.dumps(dict({"seq": i + 1, "t": 1000 * i}, **a)))
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def shove(side, *beds, **extra):
    row = [0] * 9
    for b in beds:
        row[b - 1] += 1
    return dict({"a": "turn", "side": side, "beds": row}, **extra)


SHOVE = {"chalk": 1, "game": "shove-hapenny", "players": ["Ann", "Bob"],
         "config": {"sides": 2, "per_side": 1, "overflow": "auto"},
         "started": "2026-11-28T20:00:00Z"}

# SH-15 / worked example 3: A needs only bed 9; B's overflow into bed 9 would win it for A.
SHOVE_EXAMPLE_3 = [
    {"a": "start", "side": 0},
    shove(0, 1, 1, 1, 2, 2), shove(1, 9, 9, 9),
    shove(0, 2, 3, 3, 3, 4), shove(1),
    shove(0, 4, 4, 5, 5, 5), shove(1),
    shove(0, 6, 6, 6, 7, 7), shove(1),
    shove(0, 7, 8, 8, 8, 9), shove(1),
    shove(0, 9), shove(1, 9),
]


def test_replay_prints_the_final_state_sh15_example_3(tmp_path):
    r = chalk("replay", write_log(tmp_path, SHOVE, SHOVE_EXAMPLE_3))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"beds": [[3, 3, 3, 3, 3, 3, 3, 3, 2], [0] * 8 + [3]],
                                    "next": 0, "turns": 12, "skip": [0, 0], "winner": None}
    assert len(r.stdout.strip().splitlines()) == 1


def test_replay_a_win_by_own_coin_sh7(tmp_path):
    r = chalk("replay", write_log(tmp_path, SHOVE, SHOVE_EXAMPLE_3 + [shove(0, 9)]))
    state = json.loads(r.stdout)
    assert r.returncode == 0
    assert state["winner"] == 0 and state["beds"][0] == [3] * 9 and state["turns"] == 13


def test_replay_out_of_turn_and_void_sh17_sh18(tmp_path):
    actions = [{"a": "start", "side": 1},
               shove(0, 1, 1),                      # A out of turn: nothing, A misses next
               shove(1, 2, 2, 5),                   # B scores
               shove(1, 3, 3, 3),                   # B again: A misses its turn
               shove(0, 4, 4, void="touched"),      # void: nothing
               shove(1, 1)]
    r = chalk("replay", write_log(tmp_path, SHOVE, actions))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "beds": [[0] * 9, [1, 2, 3, 0, 1, 0, 0, 0, 0]],
        "next": 0, "turns": 5, "skip": [0, 0], "winner": None}


FIVE = {"chalk": 1, "game": "five-pins", "players": ["Ann", "Bob"],
        "config": {"target": 60, "sets": 3, "pin_foul_penalty": 0}}


def shot(p, pins="", carom=0, *fouls):
    return {"a": "shot", "player": p, "pins": pins, "carom": carom, "fouls": list(fouls)}


def test_replay_five_pins_set_win_with_cap_and_fouls(tmp_path):
    # FP-4 / worked example 7: 56 + 12 is capped at 60 and wins set 1; FP-5 the break passes
    # to Bob for set 2; then examples 4, 6 and 5 in turn.
    actions = [{"a": "break", "player": 0}]
    for pins in ("1234C", "1234C", "1234C", "1234C", "C"):
        actions += [shot(0, pins), shot(1)]
    actions += [shot(0, "1234C"),
                shot(1, "", 0, "miss"),          # Ann +2, ball in hand (FP-15)
                shot(0, "2C", 0, "pin"),         # Bob +6, no ball in hand (FP-14)
                shot(1, "1", 0, "red_first")]    # Ann +4 +2 (FP-15, FP-16)
    r = chalk("replay", write_log(tmp_path, FIVE, actions))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"scores": [8, 6], "sets": [1, 0], "set": 2, "next": 0,
                                    "breaker": 1, "ball_in_hand": True, "winner": None}


def test_replay_names_line_and_rule_of_a_refused_action_fp6(tmp_path):
    log = write_log(tmp_path, FIVE, [{"a": "break", "player": 0}, shot(0), shot(0)])
    r = chalk("replay", log)
    assert r.returncode == 1
    assert r.stdout == ""
    assert "line 4: FP-6" in r.stderr and str(log) in r.stderr
    assert '"player": 0' in r.stderr  # the offending action is quoted


def test_replay_lists_every_malformed_line_and_exits_2(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(FIVE) + '\n{"seq":1,"t":0,"a":"break","player":0}\n{oops\n'
                 '{"seq":3,"t":5,"a":"teleport"}\n')
    r = chalk("replay", p)
    assert r.returncode == 2
    assert "2 bad lines" in r.stderr and ":3: not valid JSON" in r.stderr
    assert ':4: unknown action kind "teleport"' in r.stderr
    r = chalk("replay", "--skip-bad", p)
    assert r.returncode == 0 and json.loads(r.stdout)["breaker"] == 0
    assert "skipped" in r.stderr


def test_replay_reads_standard_input():
    log = json.dumps(FIVE) + "\n" + json.dumps({"seq": 1, "t": 0, "a": "break", "player": 1})
    r = chalk("replay", "-", stdin=log)
    assert r.returncode == 0 and json.loads(r.stdout)["next"] == 1


@pytest.mark.parametrize("args, code, text", [
    (["replay", "/nonexistent/x.jsonl"], 2, "no such match log"),
    (["replay", "/"], 2, "is a directory"),
])
def test_replay_file_errors_are_one_clear_line(args, code, text):
    r = chalk(*args)
    assert r.returncode == code and r.stderr.startswith("chalk: ") and text in r.stderr


def test_replay_non_utf8_file(tmp_path):
    p = tmp_path / "bin.jsonl"
    p.write_bytes(b"\xff\xfe\x00junk")
    r = chalk("replay", p)
    assert r.returncode == 2 and "not UTF-8" in r.stderr


def test_scoresheet_shows_every_action_with_running_totals(tmp_path):
    r = chalk("replay", "--sheet", write_log(tmp_path, SHOVE, SHOVE_EXAMPLE_3))
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0].startswith("shove ha'penny  Ann v Bob")
    rows = [line for line in out if line[:4].strip().isdigit()]
    assert len(rows) == len(SHOVE_EXAMPLE_3)
    assert "Ann starts" in rows[0]
    assert "+5 Ann" in rows[1] and "320000000 000000000" in rows[1]
    # Each action in words, with what the rules made of it (SH-14, SH-15).
    assert rows[1].endswith("Ann: 3 in bed 1, 2 in bed 2 (bed 1 full)")
    assert rows[3].endswith("(beds 2 and 3 full)")
    # the lost overflow scores nothing: it would give Ann the winning score (SH-15)
    assert "+0" not in rows[-1] and rows[-1].endswith(
        "Bob: 1 in bed 9 (bed 9: 1 over, lost: an overflow may not give Ann the winning "
        "score, SH-15)")
    assert out[-1] == "no winner yet: Ann 26 of 27, Bob 3 of 27, 12 turns"


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_bundled_samples_replay_to_a_winner(sample):
    r = chalk("replay", sample)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["winner"] in (0, 1)
    sheet = chalk("replay", "--sheet", sample)
    assert sheet.returncode == 0 and sheet.stdout.splitlines()[-1].startswith("winner: ")


def test_the_complete_examples_in_docs_replay_to_the_states_shown(tmp_path):
    """docs/match-log.md: each complete log is followed by the state `chalk replay` prints."""
    import re
    doc = (SAMPLES.parent.parent.parent / "docs" / "match-log.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", doc, re.S)
    pairs = [(log, out) for log, out in zip(blocks, blocks[1:])
             if log.startswith('{"chalk":1') and "\n{" in log.strip()]
    assert len(pairs) >= 7
    games = {json.loads(log.splitlines()[0])["game"] for log, _ in pairs}
    assert {"seven-pins", "novuss", "texas-42", "domino-bingo", "tally"} <= games
    for i, (log, out) in enumerate(pairs):
        p = tmp_path / ("doc%d.jsonl" % i)
        p.write_text(log)
        r = chalk("replay", p)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == json.loads(out)


def test_scoresheet_of_a_log_with_a_bad_config_is_one_clear_line(tmp_path):
    p = write_log(tmp_path, dict(FIVE, config={"target": "x"}), [])
    for args in (["replay", p], ["replay", "--sheet", p]):
        r = chalk(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert r.stderr.startswith("chalk: %s line 1: config target=" % p)
