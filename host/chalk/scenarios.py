"""Rule-level scenarios run against a board over the serial link (`chalk test`).

The scenario files are the ones the test suite runs in-process on CPython and on the
MicroPython unix port (format: firmware/scoreboard/scenario.py). Over the link each scenario
starts a new game with its config (`new`), then each step either applies its action (`act`)
or feeds input events (`inject`) as if they came from the sensors, and the state the board
reports is compared with the step's expectation by the same scoreboard.scenario.check_step.
`act` and `inject` need the board in test mode.

A step with input events instead of an action:

    {"events": [{"t": 0, "line": "btn.confirm", "v": 1}, {"t": 80, "line": "btn.confirm", "v": 0}],
     "expect": {"next": 0}, "wait_ms": 500}

The events are injected, then the runner waits until the board reports a new state or a refusal
after the last event's time (at most `wait_ms` more if given, else SETTLE_MS), and then reads
the state. `error` in such a step is the rule of a refusal reported by a `warn` frame.
"""

import json
import time
from pathlib import Path

from chalk.errors import ChalkError
from chalk.link import BoardError
from scoreboard import scenario as shared

SETTLE_MS = 5000  # how long input events may take to become an action (settle_ms is 2000)
EVENTS_MAX = 32  # input events per inject command (the board's limit)
TEST_MODE_HINT = ('enable test mode: set "link": {"test_mode": true} in the board config and '
                  '`chalk deploy --board CONFIG`, or run a simulated board with '
                  '`chalk sim --test-mode`')


class Result:
    """One scenario's outcome: status is "pass", "fail", "skip" or "error"."""

    def __init__(self, name, path, total, game=None, board_game=None):
        self.name = name
        self.path = path
        self.total = total
        self.game = game
        self.board_game = board_game
        self.passed = 0
        self.status = "pass"
        self.problems = []  # (step index or None, text)

    def first_problem(self):
        if not self.problems:
            return ""
        i, text = self.problems[0]
        return text if i is None else "step %d: %s" % (i + 1, text)


def find(paths):
    """Scenario files from files and directories (searched recursively), as (name, path):
    names are paths relative to the directory given, in a stable order."""
    found = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files = sorted(p.rglob("*.json"))
            if not files:
                raise ChalkError("no scenario files (*.json) in %s" % p)
            found += [(f.relative_to(p).as_posix(), f) for f in files]
        elif p.is_file():
            found.append((arg, p))
        else:
            raise ChalkError("no scenario file or directory %s" % p)
    return found


def load(path):
    """A scenario dict, checked enough to run: game, steps, each with do or events."""
    from scoreboard.safejson import loads

    try:
        sc = loads(Path(path).read_text(encoding="utf-8"))  # refuses "[" * 100000 before parsing
    except (OSError, ValueError) as e:
        raise ChalkError("cannot read scenario %s: %s" % (path, e))
    if type(sc) is not dict or type(sc.get("game")) is not str \
            or type(sc.get("steps")) is not list:
        raise ChalkError("%s is not a scenario: it needs \"game\" and a list of \"steps\""
                         % path, "see the files in tests/scenarios/ for the format")
    for i, step in enumerate(sc["steps"]):
        if type(step) is not dict or ("do" in step) == ("events" in step):
            raise ChalkError("%s step %d needs either \"do\" (an action) or \"events\" (input "
                             "events)" % (path, i + 1))
    return sc


def full_config(game, config):
    """The config with the rules' defaults filled in.

    A board given an empty config in `new` keeps the config of the game in progress, so an
    explicit, complete config makes each scenario start from exactly its own config. A config
    the host's rules refuse is sent as it is: the board refuses it with its own message."""
    from scoreboard.rules import ConfigError, rules_for

    try:
        return rules_for(game)(config).config
    except (ConfigError, ImportError, ValueError):
        return config


def _drain(board):
    while board.poll(0) is not None:
        pass


def _inject(board, step, timeout):
    """Feed a step's input events; return (state, rule of a refusal or None)."""
    events = step["events"]
    _drain(board)
    for i in range(0, len(events), EVENTS_MAX):
        board.request("inject", {"events": events[i:i + EVENTS_MAX]}, timeout=timeout)
    horizon = max([e.get("t", 0) for e in events if type(e) is dict] + [0]) / 1000.0
    start = time.monotonic()
    settle = step.get("wait_ms", SETTLE_MS) / 1000.0
    due = start + horizon + 0.05  # every injected line change has been applied
    cap = start + horizon + settle
    rule = None
    seen = False
    while time.monotonic() < cap:
        if seen and time.monotonic() >= due:
            break
        f = board.poll(0.05)
        if f is None:
            continue
        if f.type == "state":
            seen, rule = True, None
        elif f.type == "warn" and "refused" in f.payload:
            seen, rule = True, f.payload["refused"]
    return board.request("state", timeout=timeout)["state"], rule


def _act(board, action, timeout):
    """Apply one action; return (state, rule of a rule error or None)."""
    try:
        return board.request("act", {"action": action}, timeout=timeout)["state"], None
    except BoardError as e:
        if e.reason == "test_mode":
            raise ChalkError("the board on %s is not in test mode: it refuses actions from the "
                             "host" % board.port, TEST_MODE_HINT)
        if e.reason != "rule":
            raise
        return board.request("state", timeout=timeout)["state"], e.payload.get("rule")


def run_one(board, name, path, timeout=5.0):
    """Run one scenario file on the board; return its Result."""
    sc = load(path)
    steps = sc["steps"]
    game = (board.info or {}).get("game")
    res = Result(name, path, len(steps), sc["game"], game)
    # A scorepad says which games it can switch to ("games"); other boards play one.
    if game is not None and sc["game"] != game and sc["game"] not in (
            (board.info or {}).get("games") or ()):
        res.status = "skip"
        res.problems.append((None, "the board plays %s" % game))
        return res
    try:
        board.request("new", {"game": sc["game"], "config": full_config(sc["game"],
                                                                         sc.get("config") or {}),
                              "players": sc.get("players", [])}, timeout=timeout)
    except BoardError as e:
        res.status = "error"
        res.problems.append((None, e.message))
        return res
    for i, step in enumerate(steps):
        try:
            if "events" in step:
                state, rule = _inject(board, step, timeout)
            else:
                state, rule = _act(board, step["do"], timeout)
        except BoardError as e:
            if e.reason == "test_mode":
                raise ChalkError("the board on %s is not in test mode: it refuses input events "
                                 "from the host" % board.port, TEST_MODE_HINT)
            res.problems.append((i, e.message))
            continue
        problems = shared.check_step(step, state, rule)
        if problems:
            what = json.dumps(step.get("do") or {"events": len(step["events"])},
                              separators=(",", ":"))
            res.problems.append((i, "%s -> %s" % (what, "; ".join(problems))))
        else:
            res.passed += 1
    if res.problems:
        res.status = "fail"
    return res


def run(board, paths, timeout=5.0, progress=None):
    """Run every scenario found under `paths`; return the Results in order.

    The board must be in test mode (its hello says so): checked first, so a board at a real
    table never gets a new game it cannot play out."""
    found = find(paths)
    info = board.info or board.hello()
    if not info.get("test_mode"):
        raise ChalkError("the board on %s is not in test mode: `chalk test` needs it to take "
                         "actions and input events from the host" % board.port, TEST_MODE_HINT)
    results = []
    for name, path in found:
        res = run_one(board, name, path, timeout)
        results.append(res)
        if progress is not None:
            progress(res)
    return results


def table(results):
    """A readable table: scenario, steps passed/total, result, first problem; then a summary.
    Scenarios skipped (for another game than the board's) are only counted in the summary."""
    shown = [r for r in results if r.status != "skip"]
    name_w = max([len(r.name) for r in shown] + [8])
    rows = ["%-*s  %5s  %-6s  %s" % (name_w, "scenario", "steps", "result", "first problem")]
    for r in shown:
        steps = "-" if r.status == "error" else "%d/%d" % (r.passed, r.total)
        result = r.status.upper() if r.status != "pass" else r.status
        row = "%-*s  %5s  %-6s  %s" % (name_w, r.name, steps, result, r.first_problem())
        rows.append(row.rstrip())
        if r.status == "fail" and len(r.problems) > 1:
            rows.append("%-*s  %5s  %-6s  (%d more failing steps; -v lists them)"
                        % (name_w, "", "", "", len(r.problems) - 1))
    rows.append(summary(results))
    return rows


def summary(results):
    count = {s: sum(1 for r in results if r.status == s) for s in ("pass", "fail", "error",
                                                                     "skip")}
    text = "%d scenarios: %d passed, %d failed" % (len(results), count["pass"],
                                                   count["fail"] + count["error"])
    skipped = sorted(set(r.game for r in results if r.status == "skip"))
    if skipped:
        names = ", ".join(skipped[:-1]) + " and " + skipped[-1] if len(skipped) > 1 \
            else skipped[0]
        text += ", %d skipped (%s; the board plays %s)" % (
            count["skip"], names, results[0].board_game)
    return text


def all_passed(results):
    """True if every scenario run passed and at least one ran."""
    ran = [r for r in results if r.status != "skip"]
    return bool(ran) and all(r.status == "pass" for r in ran)
