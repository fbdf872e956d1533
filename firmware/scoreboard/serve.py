# The board's main loop with the serial link: scan every scan_ms, answer the host's commands,
# mirror every action. The port is shared with the REPL: Ctrl-C stops the loop (on the ESP32 the
# UART raises KeyboardInterrupt; on the unix port the byte arrives as data and is raised here),
# so mpremote can take over.

import select
import sys

from . import pack
from .app import App
from .link import Link, Refused
from .rules import ConfigError, RuleError


class Handler:
    """The app's side of each link command (see docs/serial-protocol.md)."""

    def __init__(self, app):
        self.app = app
        self.pending = []  # injected line changes: [due ticks, line name, v], in time order

    def cmd_hello(self, args):
        return self.app.hello()

    def cmd_state(self, args):
        return self.app.status()

    def cmd_new(self, args):
        try:
            seq = self.app.new_game(args["config"] or None, args["players"], args["game"])
        except ConfigError as e:
            raise Refused(str(e))
        if seq is None:
            raise Refused(self.app.error)
        return {"game_no": self.app.journal.stats()["game_no"], "seq": seq,
                "state": self.app.game.state()}

    def cmd_undo(self, args):
        return self._submit({"a": "undo"})

    def cmd_act(self, args):
        return self._submit(args["action"])

    def _submit(self, action):
        app = self.app
        app.game.prepare(action)  # a RuleError goes back to the host with its rule id
        if not app.submit(action):
            raise Refused(app.error or "not accepted")
        return {"seq": app.journal.stats()["last_seq"], "state": app.game.state()}

    def cmd_journal(self, args):
        app = self.app
        return journal_records(app.journal, args["after"], app.game, app.game_id)

    def cmd_ack(self, args):
        try:
            gone = self.app.journal.acknowledge(args["seq"])
        except Exception as e:
            raise Refused(str(e))
        return {"acked": args["seq"], "rotated": gone}

    def cmd_clock(self, args):
        self.app.set_clock(args["ms"])
        return {"ms": args["ms"]}

    def cmd_service(self, args):
        self.app.service = args["on"]
        self.app.dirty = True
        return {"service": args["on"], "lines": self.app.lines_now()}

    def cmd_inject(self, args):
        app = self.app
        now = app.clock.ticks_ms()
        lines = 0
        for e in args["events"]:
            if "line" in e:
                if not hasattr(app.board, "set_line"):
                    raise Refused("line changes can be injected on a simulated board only; "
                                  "inject input events (kind, id, value) instead")
                app.board._locate(e["line"])  # unknown line -> ValueError, reported
                self.pending.append([app.clock.ticks_add(now, e.get("t", 0)), e["line"],
                                     e["v"]])
                lines += 1
            else:
                app.on_event(_kind(e["kind"]), e["id"], e["value"], now)
        self.pending.sort(key=lambda p: app.clock.ticks_diff(p[0], now))
        return {"events": len(args["events"]), "queued": lines}

    def due(self, now):
        """Apply injected line changes that are due."""
        app = self.app
        while self.pending and app.clock.ticks_diff(now, self.pending[0][0]) >= 0:
            _, name, v = self.pending.pop(0)
            app.board.set_line(name, v)


def _kind(k):
    from . import sense

    if type(k) is int:
        return k
    for i in range(1, 10):  # every kind sense.kind_name knows (KEY 8, POCKET 9)
        if sense.kind_name(i) == k:
            return i
    raise Refused("unknown input event kind %r" % (k,))


def journal_records(journal, after, game=None, game_id=None):
    """The journal as link `rec` payloads: actions like match-log lines, headers and ends
    under their own key. With the rules of the game in progress (`game`), its actions that
    pack (pack.pack_action) come as pack.Block runs instead, for compact `r` frames."""
    first = journal.game_first_seq() if game is not None else None
    block = None
    for seq, kind, payload in journal.records_after(after):
        if kind == "A":
            rec = dict(payload)
            rec["seq"] = seq  # the journal's number, whatever the payload carries
            if first is not None and seq > first:
                code = pack.pack_action(game, rec)
                if code is not None:
                    if block is not None and block.add(seq, rec["t"], code):
                        continue
                    if block is not None:
                        yield block
                    block = pack.Block(game_id, seq)
                    block.add(seq, rec["t"], code)
                    continue
        elif kind == "H":
            rec = {"seq": seq, "type": "H", "header": payload}
        else:
            rec = {"seq": seq, "type": "E", "end": payload}
        if block is not None:
            yield block
            block = None
        yield rec
    if block is not None:
        yield block


class Stdin:
    """Non-blocking reads of whatever the host sent."""

    def __init__(self):
        self.stream = getattr(sys.stdin, "buffer", sys.stdin)
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)

    def read(self, limit=256):
        """What is waiting, up to a Ctrl-C: the bytes after it (mpremote's Ctrl-A, say) stay
        unread for the REPL that takes over."""
        data = b""
        while len(data) < limit and self.poll.poll(0):
            b = self.stream.read(1)
            if not b:
                break
            data += b
            if b == b"\x03":
                break
        return data


def serve(board, trace=None, test_mode=None, stdin=None, write=None):
    out = write or sys.stdout.write
    app = App(board, test_mode=test_mode)
    handler = Handler(app)
    link = Link(out, handler, app.test_mode)
    app.emit = link.emit
    app.boot()
    stdin = stdin or Stdin()
    clock = board.clock
    step = board.cfg["timings"]["scan_ms"]
    next_tick = clock.ticks_ms()
    try:
        while True:
            data = stdin.read()
            if data:
                stop = data.endswith(b"\x03")  # Ctrl-C from the host: hand the port to the REPL
                try:
                    link.feed(data[:-1] if stop else data)
                except RuleError:
                    pass  # already answered as an err frame
                if stop:
                    raise KeyboardInterrupt
            now = clock.ticks_ms()
            if clock.ticks_diff(now, next_tick) >= 0:
                if trace is not None:
                    trace.poll()
                if handler.pending:
                    handler.due(now)
                app.tick()
                next_tick = clock.ticks_add(next_tick, step)
                if clock.ticks_diff(now, next_tick) > 10 * step:
                    next_tick = now  # fell behind (a long journal write): don't race to catch up
            else:
                clock.sleep_ms(1)
    finally:
        app.journal.close()
    return app
