"""Match log v1: writer, lenient reader, round trips (docs/match-log.md)."""

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalk.randomgame import random_match
from scoreboard import matchlog

SHOVE_HEAD = {"chalk": 1, "game": "shove-hapenny", "config": {"sides": 2, "per_side": 1,
              "overflow": "auto"}, "players": ["Ann", "Bob"], "started": "2026-11-28T20:00:00Z"}


def lines(*objs):
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


def test_writer_puts_header_first_and_seq_t_before_action_keys():
    out = io.StringIO()
    matchlog.write(out, SHOVE_HEAD, [(1, 0, {"a": "start", "side": 0}),
                                     (2, 1500, {"a": "turn", "side": 0, "beds": [0] * 9})])
    text = out.getvalue().splitlines()
    assert json.loads(text[0]) == SHOVE_HEAD
    assert text[1] == '{"seq":1,"t":0,"a":"start","side":0}'
    assert text[2].startswith('{"seq":2,"t":1500,"a":"turn"')


def test_reader_reports_every_bad_line_by_number_and_keeps_the_good_ones():
    log = matchlog.read(lines(
        SHOVE_HEAD,
        {"seq": 1, "t": 0, "a": "start", "side": 0},
        "{not json",
        [1, 2],
        {"seq": 2, "t": 10},
        {"seq": 3, "t": 20, "a": "dance"},
        {"seq": 1, "t": 30, "a": "undo"},
        {"seq": 4, "t": "soon", "a": "undo"},
        "",
        {"seq": 5, "t": 50, "a": "turn", "side": 0, "beds": [1, 0, 0, 0, 0, 0, 0, 0, 0],
         "note": "unknown keys are ignored"},
    ))
    bad = dict(log.problems)
    assert sorted(bad) == [3, 4, 5, 6, 7, 8]
    assert "not valid JSON" in bad[3]
    assert "JSON object" in bad[4]
    assert 'no action kind ("a")' in bad[5]
    assert 'unknown action kind "dance"' in bad[6] and "start, turn, claim, undo" in bad[6]
    assert bad[7] == "seq 1 does not follow seq 1"  # lines 5 and 6 were refused
    assert '"t" must be' in bad[8]
    assert [n for n, _ in log.actions] == [2, 10]


@pytest.mark.parametrize("head, expect", [
    ({"game": "five-pins"}, 'no "chalk" version'),
    ({"chalk": 2, "game": "five-pins"}, "version 2 is newer"),
    ({"chalk": "1", "game": "five-pins"}, "positive integer"),
    ({"chalk": 1}, 'needs "game"'),
    ({"chalk": 1, "game": "croquet"}, "unknown game 'croquet'"),
    ({"chalk": 1, "game": "five-pins", "config": []}, '"config" must be'),
    ({"chalk": 1, "game": "five-pins", "players": "Ann"}, '"players" must be'),
])
def test_reader_names_what_is_wrong_with_a_header(head, expect):
    log = matchlog.read(lines(head))
    assert log.problems and log.problems[0][0] == 1
    assert expect in log.problems[0][1]


def test_empty_log_and_non_json_header_are_reported():
    assert matchlog.read([]).problems == [(1, "empty match log: no header line")]
    assert "the header is not valid JSON" in matchlog.read(["chalk!"]).problems[0][1]


def test_replay_names_the_line_and_rule_a_log_breaks():
    log = matchlog.read(lines(
        SHOVE_HEAD,
        {"seq": 1, "t": 0, "a": "turn", "side": 0, "beds": [0] * 9},
    ))
    with pytest.raises(matchlog.LineError) as e:
        matchlog.replay(log)
    assert e.value.line == 2 and e.value.rule == "SH-5"
    assert str(e.value).startswith("line 2: SH-5")


def test_replay_reports_a_bad_config_on_the_header_line():
    head = dict(SHOVE_HEAD, config={"overflow": "sometimes"})
    log = matchlog.read(lines(head))
    with pytest.raises(matchlog.LineError) as e:
        matchlog.replay(log)
    assert e.value.line == 1 and "overflow" in str(e.value)


@pytest.mark.parametrize("game", ["shove-hapenny", "five-pins"])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_round_trip_write_read_replay(game, seed):
    head, actions = random_match(game, seed=seed, max_actions=120)
    out = io.StringIO()
    matchlog.write(out, head, actions)
    log = matchlog.read(out.getvalue().splitlines())
    assert log.problems == []
    assert log.header == head
    assert [(r["seq"], r["t"], matchlog.strip_meta(r)) for _, r in log.actions] == actions
    replayed = matchlog.replay(log)
    streamed = matchlog.replay_lines(io.StringIO(out.getvalue()))
    assert replayed.state() == streamed.state()
    # Writing the replayed game's actions again gives the same final state (undos folded away).
    again = io.StringIO()
    matchlog.write(again, head, [(i + 1, 0, a) for i, a in enumerate(replayed.actions())])
    assert matchlog.replay(matchlog.read(again.getvalue().splitlines())).state() == \
        replayed.state()


def test_replay_lines_stops_at_the_first_bad_line():
    with pytest.raises(matchlog.LineError) as e:
        matchlog.replay_lines(lines(SHOVE_HEAD, {"seq": 1, "t": 0, "a": "start", "side": 0},
                                    "oops"))
    assert e.value.line == 3 and e.value.rule == "LOG"
