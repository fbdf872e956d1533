"""Hostile input from outside: each test feeds the input that once broke something (a traceback,
a silent wrong answer, a hang) and checks for the one clear line and the documented exit code.

Readers on the firmware side (match log, board config, sensor trace) run on MicroPython too, so
the depth and encoding limits are checked there as well.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scoreboard import boardconfig, matchlog
from scoreboard.hal.sim import TraceError, check_trace
from tests.mpy import run_mp

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ROOT / "firmware" / "boards"
FIVE = {"chalk": 1, "game": "five-pins", "config": {"target": 20, "sets": 1},
        "players": ["Ann", "Bob"]}
DEEP = "[" * 100000


def chalk(*args, stdin=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, input=stdin, timeout=timeout)


def one_line_error(r, code):
    """The process failed with `code`, no traceback, and said so on stderr as `chalk: ...`."""
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and r.stderr.startswith("chalk"), r.stderr
    return r.stderr


def log_file(tmp_path, lines, name="game.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n")
    return p


# -- deep nesting ---------------------------------------------------------------------------------

def test_matchlog_read_never_raises_on_deep_nesting():
    for lines in ([DEEP], [json.dumps(FIVE), DEEP], [json.dumps(FIVE), "{" * 5000]):
        log = matchlog.read(lines)
        assert log.problems and "nested deeper than" in log.problems[-1][1]


def test_matchlog_depth_limit_leaves_strings_alone():
    # Brackets inside strings are not nesting: a player named "[[[..." is a fine header.
    head = dict(FIVE, players=["[" * 200, "{" * 200], note="NaN Infinity")
    log = matchlog.read([json.dumps(head), '{"seq":1,"t":0,"a":"break","player":0}'])
    assert not log.problems and log.header["players"][0] == "[" * 200


def test_replay_of_deeply_nested_log_exits_2(tmp_path):
    for lines in ([DEEP], [json.dumps(FIVE), DEEP]):
        err = one_line_error(chalk("replay", log_file(tmp_path, lines)), 2)
        assert "nested deeper than 32 levels" in err and len(err) < 1000


def test_board_config_deep_nesting_is_refused(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    with pytest.raises(boardconfig.BoardConfigError, match="deep.json: not valid JSON .nested"):
        boardconfig.load(str(p))
    err = one_line_error(chalk("board", "check", p), 1)
    assert "nested deeper" in err and str(p) in err


def test_trace_deep_nesting_is_refused_naming_the_line():
    names = ["btn.confirm"]
    with pytest.raises(TraceError, match="trace line 2: bad JSON .nested deeper"):
        check_trace(['{"t":0,"line":"btn.confirm","v":1}', DEEP], names)


def test_limits_hold_on_micropython(tmp_path):
    # The same readers on the unix port: no MemoryError, no crash, a problem naming the line.
    deep = tmp_path / "deep.txt"
    deep.write_text(DEEP)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"board": "\xff\xfe"}')
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b'{"t":0,"line":"btn.confirm","v":1}\n\xff\xfe\n')
    code = """
import sys
from scoreboard import matchlog, boardconfig
from scoreboard.hal.sim import check_trace, TraceError
deep = open(sys.argv[1]).read()
log = matchlog.read(['{"chalk":1,"game":"five-pins"}', deep, '{"seq":1,"a":"break","player":NaN}',
                     '{"seq":2,"a":"break","player":"one"}'])
for n, p in log.problems:
    print("log", n, p[:40])
for path in (sys.argv[1], sys.argv[2]):
    try:
        boardconfig.load(path)
    except boardconfig.BoardConfigError as e:
        print("cfg", str(e).split(": ", 1)[1][:40])
try:
    check_trace(open(sys.argv[3], "rb"), ["btn.confirm"])
except TraceError as e:
    print("trace", e)
"""
    out = run_mp(code=code, args=(deep, bad, trace), heap="512k").stdout.splitlines()
    want = ["log 2 not valid JSON (nested deeper than 32",
            "log 3 not valid JSON (NaN and Infinity",
            'log 4 "player" must be an integer, not "one"',
            "cfg not valid JSON (nested deeper than 32",
            "cfg not UTF-8 text",
            "trace trace line 2: not UTF-8 text: a trace is JSON Lines"]
    assert len(out) == len(want) and all(o.startswith(w) for o, w in zip(out, want)), out


# -- match logs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("player", ['"one"', "1.5", "true", "null", "NaN", "Infinity"])
def test_wrong_types_are_unreadable_not_rule_breaks(tmp_path, player):
    p = log_file(tmp_path, [FIVE, '{"seq":1,"t":0,"a":"break","player":%s}' % player])
    err = one_line_error(chalk("replay", p), 2)
    assert "game.jsonl:2:" in err


def test_wrong_types_in_lists_are_unreadable(tmp_path):
    shove = {"chalk": 1, "game": "shove-hapenny"}
    p = log_file(tmp_path, [shove, {"seq": 1, "t": 0, "a": "start", "side": 0},
                            {"seq": 2, "t": 1, "a": "turn", "side": 0, "beds": [1, "2"]}])
    assert '"beds" must be a list of integers' in one_line_error(chalk("replay", p), 2)
    p = log_file(tmp_path, [FIVE, {"seq": 1, "t": 0, "a": "break", "player": 0},
                            {"seq": 2, "t": 1, "a": "shot", "player": 0, "pins": "", "fouls": [2]}])
    assert '"fouls" must be a list of strings' in one_line_error(chalk("replay", p), 2)


def test_a_value_out_of_range_is_still_a_rule_break(tmp_path):
    p = log_file(tmp_path, [FIVE, {"seq": 1, "t": 0, "a": "break", "player": 2}])
    assert "FP-1" in one_line_error(chalk("replay", p), 1)


def test_missing_log_exits_2(tmp_path):
    one_line_error(chalk("replay", tmp_path / "nope.jsonl"), 2)


def test_huge_number_is_not_echoed_whole(tmp_path):
    p = log_file(tmp_path, [FIVE, {"seq": 1, "t": 0, "a": "break", "player": 0},
                            '{"seq":2,"t":1,"a":"shot","player":0,"pins":"","carom":%s}'
                            % ("1" + "0" * 400)])
    err = one_line_error(chalk("replay", p), 1)
    assert "FP-10" in err and "0" * 400 not in err and len(err) < 1000


def test_utf8_bom_is_accepted(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(FIVE).encode() + b"\n"
                  + b'{"seq":1,"t":0,"a":"break","player":1}\n')
    r = chalk("replay", p)
    assert r.returncode == 0 and json.loads(r.stdout)["next"] == 1, r.stderr


def test_config_upper_bound(tmp_path):
    p = log_file(tmp_path, [dict(FIVE, config={"target": 10 ** 30})])
    err = one_line_error(chalk("replay", p), 1)
    assert "target" in err and "from 1 to" in err


# -- board configs and traces ---------------------------------------------------------------------

def test_non_utf8_board_config(tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes(b'{"board": "\xff"}')
    for args in (("board", "check", p), ("deploy", "--board", p, "--port", "/dev/null")):
        err = one_line_error(chalk(*args), 1)
        assert str(p) in err and "not UTF-8" in err


def test_huge_unknown_key_is_quick_and_clipped(tmp_path):
    cfg = json.loads((BOARDS / "five-pins.json").read_text())
    cfg["k" * 50000] = 1
    p = tmp_path / "key.json"
    p.write_text(json.dumps(cfg))
    start = time.monotonic()
    with pytest.raises(boardconfig.BoardConfigError) as e:
        boardconfig.load(str(p))
    assert time.monotonic() - start < 0.5  # the did-you-mean used to take ~2 s
    assert "unknown key" in str(e.value) and len(str(e.value)) < 400


def test_sim_refuses_bad_board_before_starting(tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes(b"\xff\xfe{}")
    err = one_line_error(chalk("sim", "--board", p, "--flash", tmp_path / "f"), 1)
    assert "not UTF-8" in err and str(p) in err and "simulated board on" not in err


@pytest.mark.parametrize("body, words", [
    (b'{"t":0,"line":"btn.confirm","v":1}\n\xff\xfe\n', "line 2: not UTF-8"),
    (b'{"t":0,"line":"btn.confirm","v":1}\n{"t":1e23,"line":"btn.confirm","v":0}\n', "line 2: t"),
    (b'{"t":100000000000000000000000,"line":"btn.confirm","v":0}\n', "line 1: t must"),
])
def test_sim_refuses_bad_trace_at_once(tmp_path, body, words):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(body)
    for extra in ((), ("--virtual",)):
        err = one_line_error(chalk("sim", "--trace", trace, "--flash", tmp_path / "f", *extra,
                                   timeout=60), 1)
        assert words in err and str(trace) in err and "simulated board on" not in err


def test_trace_player_names_the_non_utf8_line():
    with pytest.raises(TraceError, match="trace line 3: not UTF-8"):
        check_trace([b'{"t":0,"line":"btn.confirm","v":1}', b"", b"\xc3("], ["btn.confirm"])


# -- options --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("sim", "--heap", "abc"), "--heap: 'abc' is not a heap size"),
    (("service", "--every", "-1"), "--every: '-1': give a number of seconds above 0"),
    (("archive", "--idle", "0"), "--idle: '0'"),
])
def test_bad_option_values_are_usage_errors(args, words):
    r = chalk(*args)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr


# -- chalk sim stops its board --------------------------------------------------------------------

def _children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path("/proc/%s/stat" % d).read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == str(pid):
                out.append(int(d))
    return out


def _cmdline(pid):
    try:
        return Path("/proc/%d/cmdline" % pid).read_bytes()
    except OSError:
        return b""  # gone already (an mpy-cross of the install, say)


def _alive(pid):
    try:
        state = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_chalk_sim_stops_the_board_process(tmp_path, sig):
    p = subprocess.Popen([sys.executable, "-m", "chalk.cli", "sim", "--flash", tmp_path / "f"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = p.stdout.readline().strip()  # printed once the board's process is running
        assert port.startswith("/dev/"), p.stderr.read() if p.poll() is not None else port
        boards = [k for k in _children(p.pid) if b"micropython" in _cmdline(k)]
        assert len(boards) == 1
        p.send_signal(sig)
        assert p.wait(timeout=60) == 0
        # stop() waited for the board's process: it is gone (or a zombie already reaped by init)
        deadline = time.monotonic() + 30
        while _alive(boards[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(boards[0])
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


# -- chalk new and names on the terminal ----------------------------------------------------------

@pytest.fixture(scope="module")
def board(tmp_path_factory):
    from chalk.sim import Sim

    with Sim("five-pins", flash=tmp_path_factory.mktemp("flash"), test_mode=True) as sim:
        yield sim


def test_new_refuses_more_players_than_the_game_seats(board):
    err = one_line_error(chalk("new", "--players", "A", "B", "C", "--port", board.port), 1)
    assert "3 names" in err and "five-pins seats 2" in err


def test_new_refuses_control_characters_in_names(board):
    err = one_line_error(chalk("new", "--players", "\x1b[2JEvil", "Bob", "--port", board.port), 1)
    assert "control characters" in err and "\x1b" not in err


def test_new_refuses_a_config_past_the_rules_bounds(board):
    err = one_line_error(chalk("new", "--config", "target=" + "1" + "0" * 30,
                               "--port", board.port), 1)
    assert "target" in err and "from 1 to 10000" in err


def test_names_with_escape_sequences_never_reach_the_terminal_raw(board):
    from chalk import remote

    with remote.connect(board.port) as b:  # a name from elsewhere (another tool, an old board)
        b.request("new", {"game": "five-pins", "players": ["\x1b]0;pwned\x07Ann", "B\u202eob"]})
    r = chalk("watch", "--once", "--port", board.port)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\u202e" not in r.stdout
    assert "\\x1b]0;pwned\\x07Ann" in r.stdout and "B\\u202eob" in r.stdout


def test_deploy_unknown_arch_is_one_line():
    r = chalk("deploy", "--arch", "arm", "--port", "/dev/null")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "usage" not in r.stderr
    assert r.stderr.startswith("chalk: --arch arm is not") and "xtensawin" in r.stderr


def test_deep_scenario_file_and_config_option_are_refused(tmp_path):
    from chalk import scenarios
    from chalk.errors import ChalkError

    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    with pytest.raises(ChalkError, match="nested deeper than 32"):
        scenarios.load(p)
    err = one_line_error(chalk("new", "--config", "{" + "[" * 5000, "--port", "/dev/null"), 1)
    assert "--config is not valid JSON: nested deeper than 32 levels" in err


@pytest.mark.parametrize("game, config, line, words", [
    ("texas-42", {}, {"seq": 1, "t": 0, "a": "hand", "bidder": 0, "bid": 30, "took": "ten"},
     '"took" must be an integer, not "ten"'),
    ("domino-bingo", {}, {"seq": 1, "t": 0, "a": "hand", "trump": 0, "points": [1.5, 0],
                          "declared": [0, 0], "big": [0, 0]},
     '"points" must be a list of integers, not [1.5, 0]'),
    ("tally", {}, {"seq": 1, "t": 0, "a": "add", "player": 0, "n": True},
     '"n" must be an integer, not true'),
    ("seven-pins", {}, {"seq": 1, "t": 0, "a": "break", "player": "one"},
     '"player" must be an integer, not "one"'),
    ("novuss", {}, {"seq": 1, "t": 0, "a": "start", "side": 0.5},
     '"side" must be an integer, not 0.5'),
])
def test_wrong_types_in_the_other_games_are_unreadable(tmp_path, game, config, line, words):
    p = log_file(tmp_path, [{"chalk": 1, "game": game, "config": config}, line])
    assert words in one_line_error(chalk("replay", p), 2)


@pytest.mark.parametrize("game, config", [
    ("texas-42", {"target": 10 ** 30}), ("domino-bingo", {"big_points_to_win": 10 ** 30}),
    ("tally", {"target": 10 ** 400}), ("five-pins", {"sets": 10 ** 30}),
    ("five-pins", {"pin_foul_penalty": 10 ** 30}), ("seven-pins", {"start": 10 ** 30}),
    ("novuss", {"pucks": 10 ** 400}),
])
def test_game_configs_have_upper_bounds(tmp_path, game, config):
    p = log_file(tmp_path, [{"chalk": 1, "game": game, "config": config}])
    err = one_line_error(chalk("replay", p), 1)
    assert "config" in err and "0" * 70 not in err and len(err) < 600


def test_sigterm_to_a_virtual_run_stops_its_board_process(tmp_path):
    # A trace whose one press is 20 hours in: the virtual board runs long enough to be stopped.
    trace = tmp_path / "long.jsonl"
    trace.write_text('{"t": 72000000, "line": "btn.confirm", "v": 1}\n')
    p = subprocess.Popen([sys.executable, "-m", "chalk.cli", "sim", "--virtual", "--trace", trace,
                          "--flash", tmp_path / "f"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # an upper bound: waits for the board's process
        boards = []
        while not boards and time.monotonic() < deadline and p.poll() is None:
            boards = [k for k in _children(p.pid) if b"micropython" in _cmdline(k)]
            time.sleep(0.05)
        assert boards, p.communicate()
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 130
        assert not _alive(boards[0])
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
