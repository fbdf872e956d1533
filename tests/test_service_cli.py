"""`chalk service`: the board's service view from the computer (bring-up, finding a bad switch).

Against a simulated board over its pseudo-terminal: line changes are injected (test mode), and
the command must show each line's level and edge count, and each peg present.
"""

import time

from chalk import cli
from chalk.remote import connect
from chalk.sim import Sim


def chalk(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def inject(port, events):
    with connect(port) as board:
        board.request("inject", {"events": events})


def row(out, name):
    return [line.split() for line in out.splitlines() if line.split()[:1] == [name]][0]


def reading(capsys, port, done, timeout=60.0):
    """`chalk service --once` until done(output) holds (the board plays injected changes in its
    own time; a busy machine may take a while)."""
    deadline = time.monotonic() + timeout
    while True:
        code, out, _ = chalk(capsys, "service", "--once", "--port", port)
        assert code == 0
        if done(out) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def test_service_shows_levels_and_edge_counts_of_switch_lines(tmp_path, capsys):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        code, out, _ = chalk(capsys, "service", "--once", "--port", sim.port)
        assert code == 0
        assert row(out, "btn.foul") == ["btn.foul", "0", "0"]
        with connect(sim.port) as board:
            board.request("service", {"on": True})  # as entered at the table: --once keeps it
        # A pin tipped and stood up again, then tipped and left lying; foul and confirm pressed.
        inject(sim.port, [{"t": 0, "line": "pin.3", "v": 1}, {"t": 100, "line": "pin.3", "v": 0},
                          {"t": 200, "line": "pin.3", "v": 1},
                          {"t": 0, "line": "btn.foul", "v": 1},
                          {"t": 80, "line": "btn.foul", "v": 0},
                          {"t": 0, "line": "btn.confirm", "v": 1},
                          {"t": 90, "line": "btn.confirm", "v": 0}])
        out = reading(capsys, sim.port, lambda o: row(o, "pin.3")[2] == "3"
                      and row(o, "btn.confirm")[2] == "2")
        assert row(out, "pin.3") == ["pin.3", "1", "3"]
        assert row(out, "btn.foul") == ["btn.foul", "0", "2"]
        assert row(out, "pin.C") == ["pin.C", "0", "0"]
        with connect(sim.port) as board:
            st = board.request("state")
            assert st["screen"][0].startswith("SERVICE")
            # In the service view a press acts on nothing: confirm did not take the break.
            assert st["state"]["next"] is None
        code, out, _ = chalk(capsys, "service", "--off", "--port", sim.port)
        assert code == 0
        deadline = time.monotonic() + 60  # an upper bound only
        with connect(sim.port) as board:
            while board.request("state")["screen"][0].startswith("SERVICE"):
                assert time.monotonic() < deadline, "the service view stayed on"
                time.sleep(0.05)


def test_service_once_leaves_a_scoring_board_scoring(tmp_path, capsys):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        code, out, _ = chalk(capsys, "service", "--once", "--port", sim.port)
        assert code == 0 and row(out, "btn.foul") == ["btn.foul", "0", "0"]
        with connect(sim.port) as board:
            st = board.request("state")
            assert st["mode"] == "scoring"
            # The screen is redrawn a page a scan after the view ends: wait for that redraw.
            deadline = time.monotonic() + 60  # an upper bound only
            while st["screen"][0].startswith("SERVICE"):
                assert time.monotonic() < deadline, "the service view stayed on the screen"
                time.sleep(0.05)
                st = board.request("state")
            deadline = time.monotonic() + 10
            while board.beat is None and time.monotonic() < deadline:  # the heartbeat too
                board.poll(0.1)
            assert board.beat[1] == {"mode": "scoring"}
            # And it scores: confirm takes the break (FP-7).
            board.request("inject", {"events": [{"t": 0, "line": "btn.confirm", "v": 1},
                                                {"t": 90, "line": "btn.confirm", "v": 0}]})
            f = board.poll(10)
            while f is not None and f.type != "rec":
                f = board.poll(10)
            assert f is not None and f.payload["a"] == "break"


def test_service_draws_the_pegs_present(tmp_path, capsys):
    with Sim("shove-hapenny", flash=tmp_path / "flash", test_mode=True) as sim:
        inject(sim.port, [{"t": 0, "line": "peg.0.2.1", "v": 1},
                          {"t": 0, "line": "peg.1.9.3", "v": 1}])
        def sides_of(out):
            return [line.split()[2:] for line in out.splitlines()
                    if line.strip().startswith("side")]

        out = reading(capsys, sim.port, lambda o: sum(r.count("o..") + r.count("..o")
                                                      for r in map(" ".join, sides_of(o))) == 2)
        sides = [["side", str(i)] + r for i, r in enumerate(sides_of(out))]
        assert sides[0][2:] == ["..."] + ["o.."] + ["..."] * 7
        assert sides[1][2:] == ["..."] * 8 + ["..o"]


def test_service_shows_pocket_beams_and_colour_readings(tmp_path, capsys):
    # A novuss board: each pocket's beam is a line with edges; each colour sensor an analog
    # reading, to set pocket_sensing's thresholds at bring-up.
    with Sim("novuss", flash=tmp_path / "flash", test_mode=True) as sim:
        inject(sim.port, [{"t": 0, "line": "colour.2", "v": 2100},
                          {"t": 0, "line": "pocket.2", "v": 1},
                          {"t": 40, "line": "pocket.2", "v": 0}])
        out = reading(capsys, sim.port, lambda o: row(o, "pocket.2")[2] == "2")
        assert row(out, "pocket.2") == ["pocket.2", "0", "2"]
        assert row(out, "colour.2") == ["colour.2", "2100"]
        assert row(out, "colour.1") == ["colour.1", "0"]
