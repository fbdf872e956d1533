# The board's main loop with the serial link: scan every scan_ms, answer the host's commands,
# mirror every action. Replies go out a bounded slice per scan (Link.pump), so a long reply
# (a resync of the whole journal) never keeps the loop from its scans.
#
# The port is shared with the REPL, and a byte of line noise must never stop play: the keyboard
# interrupt is off while the app runs (micropython.kbd_intr(-1)), so a Ctrl-C byte arrives as
# data. The app hands the port to the REPL (KeyboardInterrupt, keyboard interrupt back on) only
# for CR then Ctrl-C, what mpremote and `chalk deploy` send, or for two Ctrl-C in a row, what a
# person at a serial monitor presses: one stray byte is never either.

import gc
import select
import sys

from .app import App
from .link import Link, Refused
from .rules import ConfigError, RuleError


class Handler:
    """The app's side of each link command (see docs/serial-protocol.md)."""

    def __init__(self, app):
        self.app = app
        self.pending = []  # injected line changes: [due ticks, line name, v], in time order
        self._editing = False  # cmd_inject is changing `pending` (the sampling timer waits)
        self._gauge = None  # the gauge being measured for the `state` reply coming (gauge)

    def cmd_hello(self, args):
        return self.app.hello()

    def gauge(self):
        # Before a `state` reply, in a step of the link's own right after its collection (a
        # link without a budget: in the command's own): the heap gauge measured afresh, its
        # first probe here, the rest in the command's steps (cmd_state).
        self._gauge = self.app.heap_steps(collect=False)
        for _ in self._gauge:
            return

    def cmd_state(self, args):
        # The longest reply there is (state, screen, warnings): the link collects the heap
        # first (link._COLLECT), and measures the gauge (gauge() above), so that encoding the
        # reply finds whole blocks on a heap that play has left in pieces. In steps of the
        # link's: the gauge's probes, then the status a part a step.
        if self._gauge is None:
            self.gauge()
        for _ in self._gauge:
            yield
        self._gauge = None
        out = {}
        try:
            for _ in self.app.status_parts(out):
                yield
        except MemoryError:  # no whole block for the latest action's keys: the reply without
            gc.collect()
            out = self.app.status(spare=False)
        return out

    def cmd_new(self, args):
        # (The link collected the heap first: whole blocks for the end, its signature's queue,
        # the new header, links.)
        self.app.played = self.app.clock.ticks_ms()  # the signer waits for a quiet moment
        try:
            seq = self.app.new_game(args["config"] or None, args["players"], args["game"])
        except ConfigError as e:
            raise Refused(str(e))
        if seq is None:
            raise Refused(self.app.error)
        return {"game_no": self.app.journal.game_no(), "seq": seq,
                "state": self.app.game.state()}

    def cmd_undo(self, args):
        return self._submit({"a": "undo"})

    def cmd_act(self, args):
        return self._submit(args["action"])

    def _submit(self, action):
        # (The link collected the heap first, as for state: whole blocks for the action, its
        # record and its reply.) In steps of the link's (one a pass, between scans, on a
        # board: Link._run): the rules' check and the record made; its journal line and chain
        # link; the record journaled and applied; the reply.
        app = self.app
        app.played = app.clock.ticks_ms()  # the signer waits for a quiet moment
        game = app.game
        pending = game.prepare(action)  # a RuleError goes back to the host with its rule id
        made = app.record(action)
        done = game._gen
        yield
        line = None
        if made is not None and app.game is game and game._gen == done:
            try:
                line = yield from app.journal.make("A", made[0])
            except Exception:
                line = None  # (take() says why, when it writes it)
            yield
        if app.game is not game or game._gen != done:
            # The table took an action of its own between the steps (a sensor's): this one is
            # checked again against the state that made.
            game = app.game
            pending = game.prepare(action)
            made = app.record(action)
            line = None
        if made is None or not app.take(made, pending, line):
            raise Refused(app.error or "not accepted")
        yield
        return {"seq": app.journal.last_seq(), "state": game.state()}

    def cmd_sign(self, args):
        # The signed head of a game the board holds (default: the one in progress); signed
        # between scans, so the first reply may be {"pending": true}, the `sig` frame later.
        return self._signer("sign", lambda s: s.head(args.get("game_no")))

    def cmd_key(self, args):
        # Enrolment (chalk keys enrol): the public key and a signature of the host's challenge.
        return self._signer("key", lambda s: s.enrol(args["challenge"]))

    def _signer(self, cmd, fn):
        # In steps of the link's: the signer loaded (its key read from NVS), then asked.
        signer = self.app.signing()
        if signer is None:
            if self.app.board.nvs is None:
                raise Refused("this board keeps no signing key (no NVS)")
            raise Refused("not enough RAM to load the signer now: ask again in a moment")
        yield
        try:
            return fn(signer)
        except ValueError as e:  # not on the board, or busy signing
            signer.unload()  # (if it has nothing to do)
            raise Refused(str(e))

    def cmd_journal(self, args):
        app = self.app  # (the link collected the heap first)
        want = args.get("want")
        return journal_records(app.journal, args["after"], app.game, app.game_id,
                               int(str(want), 16) if want else 0, args.get("block"))

    def cmd_ack(self, args):
        try:
            gone = self.app.journal.acknowledge(args["seq"])
        except Exception as e:
            raise Refused(str(e))
        return {"acked": args["seq"], "rotated": gone}

    def cmd_clock(self, args):
        self.app.set_clock(args["ms"])  # its range checked by the link (link.CLOCK_MIN/MAX)
        return {"ms": args["ms"]}

    def cmd_service(self, args):
        # In steps of the link's (a few lines each: a scorepad has 30 keys and more), the view
        # switched at the first.
        app = self.app
        app.service = args["on"]
        app.dirty = True
        yield
        from .service import lines_parts  # (loaded while the view is used: a step of its own)

        lines = {}
        yield
        for _ in lines_parts(app, lines):
            yield
        return {"service": args["on"], "lines": lines, "gauge": app.gauge()}

    def cmd_record(self, args):
        app = self.app
        app.recorder = None
        gc.collect()  # the recorder's rings are a few whole blocks
        if args["on"]:  # a fresh recording: its changes count from the t returned here
            from .record import Recorder

            app.recorder = Recorder(app)
        return {"record": args["on"], "t": app.clock.ticks_ms(), "lines": app.lines_now()}

    def cmd_inject(self, args):
        from .inject import inject  # test mode only: a scoring board never loads it

        self._editing = True
        try:
            return inject(self, args)
        finally:
            self._editing = False

    def due(self, now):
        """Apply injected line changes that are due."""
        app = self.app
        while self.pending and app.clock.ticks_diff(now, self.pending[0][0]) >= 0:
            at, name, v = self.pending.pop(0)
            app.board.set_line(name, v, at)  # at its own ms, as a pin's interrupt stamps it

    def world(self):
        """The injected changes as part of the simulated table's world (hal.sim move_world):
        applied when due, whatever the loop is doing (not while cmd_inject edits them); the ms
        until the next, or None."""
        if self._editing:
            return 1
        clock = self.app.clock
        now = clock.ticks_ms()
        self.due(now)
        if not self.pending:
            return None
        wait = clock.ticks_diff(self.pending[0][0], now)
        return wait if wait > 0 else 0


def journal_records(journal, after, game=None, game_id=None, want=0, limit=None):
    """The journal as link `rec` payloads: actions like match-log lines, headers and ends
    under their own key. Actions that pack (pack.pack_action, with the rules of their own game,
    finished games' as well as the one in progress) come as pack.Block runs instead, for
    compact `r` frames of at most `limit` bytes (pack.Block.LIMIT). `want` (journal's bitmap, bit
    i for seq after + 1 + i; 0: all): only those seqs, none past the highest bit, so a block
    never carries a record the host did not ask for.

    A step of work is a record read, or a record packed: after each it yields None, so the link
    bounds the work of one pass of the main loop whatever the record or the block's size.
    (`game`, `game_id`: kept for callers; every game's rules are made from its own header;
    without `game` every record goes as JSON, as protocol 1 sent.)"""
    from . import pack  # loaded when a stream first needs it, not at boot
    from .rules import rules_for

    rules = None  # the rules of the game whose records come
    rules_id = None  # its id
    open_no = journal.game_no()
    block = None
    if game is not None:
        yield None  # (the modules loaded: a step of its own)
    for item in _records_after(journal, after):
        if type(item) is int:  # the records of game file `item` follow
            rules = rules_id = None
            if game is None:
                continue  # protocol 1's stream: every record as JSON
            if item == open_no:
                rules, rules_id = game, game_id  # the game in progress: the app's own rules
                yield None  # (its file opened next: a step of its own)
                continue
            gc.collect()  # a finished game's rules: one more small instance, from its header
            yield None  # (the collection is a step of its own)
            head = journal.header(item)
            try:
                rules = rules_for(head["game"])(head.get("config") or {})
                rules_id = head["game"]
            except Exception:
                pass  # a header these rules cannot read: its records go as JSON
            yield None
            continue
        seq, kind, payload = item
        if want:
            bits = want >> (seq - after - 1)
            if not bits:
                break  # past the highest seq asked for
            if not bits & 1:
                continue  # one the host has: the block in hand ends at the next add
        if kind == "A":
            rec = payload  # (the journal's read made it: ours to change)
            rec["seq"] = seq  # the journal's number, whatever the payload carries
            if rules is not None:
                yield None  # the record read: its packing is a step of its own
            code = pack.pack_action(rules, rec) if rules is not None else None
            if code is not None:
                if block is not None and block.game == rules_id and block.add(seq, rec["t"],
                                                                              code):
                    yield None
                    continue
                if block is not None:
                    yield block
                    block = None
                b = pack.Block(rules_id, seq, limit)
                if b.add(seq, rec["t"], code):
                    block = b
                    yield None
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


def _records_after(journal, seq):
    """journal.records_after(seq), with the number of each game file before its records."""
    from array import array

    from .journal import _END, _LAST, _W

    rows = array("i", journal._t)  # a copy: rotation may replace the table meanwhile
    for b in range(0, len(rows), _W):
        if rows[b + _LAST] > seq:
            yield rows[b]
            for rec in journal._records(rows[b], rows[b + _END], seq):
                seq = rec[0]
                yield rec


class Stdin:
    """Non-blocking reads of whatever the host sent; `stop` is set once the REPL is asked for."""

    def __init__(self):
        self.stream = getattr(sys.stdin, "buffer", sys.stdin)
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)
        self.prev = b""
        self.stop = False
        self.woken = None
        self._sleep = self.poll  # what wait() sleeps on: the host's bytes, and `woken`

    def watch(self, woken):
        """Wake the sleep below when `woken` (wake.Woken) is set too (a poll of its own: a
        read must only ever ask for the host's bytes)."""
        sleep = select.poll()
        sleep.register(sys.stdin, select.POLLIN)
        if not woken.register(sleep):
            return False
        self.woken = woken
        self._sleep = sleep
        return True

    def wait(self, ms):
        """Sleep up to `ms`, or until the host sends something or an input changes (the port's
        own poll: a real sleep, during which interrupts and the board's timer still run). True
        if an input changed."""
        self._sleep.poll(ms)
        woken = self.woken
        if woken is not None and woken.flag:
            woken.flag = 0
            return True
        return False

    def read(self, limit=256):
        """What is waiting, up to the REPL's sequence (CR Ctrl-C, or Ctrl-C Ctrl-C): the bytes
        after it (mpremote's CR Ctrl-A, say) stay unread for the REPL that takes over."""
        data = b""
        while len(data) < limit and self.poll.poll(0):
            b = self.stream.read(1)
            if not b:
                break
            data += b
            if b == b"\x03" and self.prev in (b"\r", b"\x03"):
                self.stop = True
                break
            self.prev = b
        return data


def _budget(board, step):
    """Characters the link may write per scan: what the UART carries in one scan period (8N1:
    ten bits a byte). None for a board without a baud rate (a simulated board's pty takes what
    it is given at once: nothing waits in RAM)."""
    baud = board.baud
    if not baud:
        return None
    return max(16, baud * step // 10000)


HEARTBEAT_MS = 1000  # a `beat` after this long without a frame (docs/serial-protocol.md)
SIGN_QUIET_MS = 300  # the signer's work waits this long after the host's last act or new
REST_MS = 1000  # a table at rest: a pass this often at least (the heartbeat's)
NO_WAKE_MS = 100  # ... where the sleep cannot be woken by an input (edges wait for the pass)


def _kbd_intr(c):
    try:
        import micropython

        micropython.kbd_intr(c)
    except (ImportError, AttributeError):
        pass  # CPython, or a port without it


def serve(board, trace=None, test_mode=None, stdin=None, write=None, stretch=1):
    # Off from the start: a stray byte during a long boot (the journal replayed) must not stop
    # the app either. Back on whatever ends this.
    _kbd_intr(-1)
    try:
        return _serve(board, trace, test_mode, stdin, write, stretch)
    finally:
        _kbd_intr(3)


def _stepped(app, clock, start, slow, t0, s0):
    """The end of one pass of the loop: the gauge's longest step, then a slowed board's wait."""
    spent = clock.ticks_diff(clock.ticks_ms(), start)
    if spent > app.step_ms:
        app.step_ms = spent
    if slow is not None:
        slow.wait(t0, s0)


def _serve(board, trace, test_mode, stdin, write, stretch):
    out = write or sys.stdout.write
    app = App(board, test_mode=test_mode)
    handler = Handler(app)
    clock = board.clock
    step = board.cfg["timings"]["scan_ms"]
    budget = _budget(board, step)
    link = Link(out, handler, app.test_mode, budget=budget)
    app.emit = link.emit
    app.played = clock.ticks_add(clock.ticks_ms(), -SIGN_QUIET_MS)
    app.boot()
    if budget is not None and globals().get("__file__", "")[:5] == "/rom/":
        # From a ROMFS partition a module's code stays in flash and its import costs only its
        # objects (1 to 5 KB): the link's stepwise work, the coder of a noisy line, the heap
        # gauge, the compact frames (the first action's, a resync's), the service view and the
        # signer's work are loaded now, not in a step of the first command that needs them
        # (the host's `hello`, `parity`, `journal`, `service`, `sign`), where an import is a
        # long step on the chip (2 to 4 ms a KB). Elsewhere (.mpy in the filesystem, twice the
        # heap) each is loaded when first needed, and the signer's let go when it has no work.
        from . import fec, gauge, linkwork, p256, pack, service, sign, signwork  # noqa: F401
    # The lines are sampled by the board's timer from now on, whatever the loop is doing (a
    # simulated board's trace and injected changes move with it); else each pass scans them.
    slow = None
    if stretch > 1:
        from .stretch import Stretch  # a simulated board slowed to a chip's pace only

        slow = Stretch(stretch, app.sample)
    app.start_sampling(slow.sample if slow is not None else None)
    # A simulated board's table moves on its own (its trace, injected changes), on the main
    # thread between two bytecodes as an interrupt would (where it cannot, on CPython, only
    # the loop moves it); each pass brings it up to now before it looks at the lines.
    world = None
    move_world = None
    if type(getattr(board, "world", None)) is list:
        from .hal.simtimer import move_world, start_world, trace_world

        if trace is not None:
            if getattr(trace, "applied", None) == 0:
                # The table's time starts when the board looks at its lines: after a boot a busy
                # machine made slow, the trace's first seconds would else be due at once, more
                # changes than the ring of samples holds between two passes (presses lost).
                trace.start = clock.ticks_ms()
            board.world.append(lambda: trace_world(trace))
        board.world.append(handler.world)
        world = start_world(board)
    stdin = stdin or Stdin()
    wdt_ms = board.cfg["timings"].get("watchdog_ms", 0)
    dog = board.watchdog(wdt_ms) if wdt_ms else None
    # Asleep between passes until the host sends a byte, an input changes (the edge handler or
    # the sampling timer sets `woken`) or the next pass is due; where the poll cannot watch the
    # flag (CPython, a test's own stdin), a table at rest is looked at every NO_WAKE_MS.
    rest = NO_WAKE_MS
    if hasattr(stdin, "watch"):
        from .wake import Woken

        woken = Woken()
        if stdin.watch(woken):
            app.woken = woken
            rest = REST_MS if not wdt_ms or wdt_ms // 2 > REST_MS else wdt_ms // 2
    next_tick = clock.ticks_ms()
    next_beat = next_tick
    beat_n = -1
    beat_mode = None
    t0 = s0 = 0
    if slow is not None:
        import time

        t_us = time.ticks_us
    try:
        while True:
            if slow is not None:
                t0 = t_us()
                s0 = slow.sampled
            start = clock.ticks_ms()
            data = stdin.read()
            if data:
                stop = stdin.stop
                try:
                    link.feed(data[:-1] if stop else data)
                except RuleError:
                    pass  # already answered as an err frame
                except MemoryError:
                    gc.collect()  # a command the heap had no room for: the host sends it again
                if stop:
                    raise KeyboardInterrupt
                next_tick = clock.ticks_ms()  # what the host asked may change the table: a pass
            now = clock.ticks_ms()
            if clock.ticks_diff(now, next_tick) >= 0:
                late = clock.ticks_diff(now, next_tick)
                if late + step > app.gap_ms:
                    app.gap_ms = late + step  # the gauge: the longest a look at the lines waited
                if move_world is not None:
                    # The simulated table brought up to now before the loop looks at it: its
                    # thread may be late on a busy machine, and a change it applied after
                    # this look, stamped with its own earlier time, would reach the sensing
                    # layer after a look it came before (a real board's lines are never late).
                    move_world(board)
                app.tick()
                app.display.step()  # a redraw goes out a page a scan
                if dog is not None:
                    dog.feed()
                if app.recorder is not None and link.room() > 512:
                    app.recorder.drain(link.emit)  # else the ring holds them until the wire
                # The heartbeat: after HEARTBEAT_MS with nothing else sent (any frame shows the
                # loop runs), and at once when the mode changes.
                mode = "service" if app.service else "scoring"
                if link.count() != beat_n:
                    beat_n = link.count()
                    next_beat = clock.ticks_add(now, HEARTBEAT_MS)
                if mode != beat_mode or (clock.ticks_diff(now, next_beat) >= 0
                                         and not link.streaming()):
                    link.emit("beat", {"mode": mode})
                    beat_mode = mode
                    beat_n = link.count()
                    next_beat = clock.ticks_add(now, HEARTBEAT_MS)
                # What is left of this scan period goes to the wire (a scan's worth at most).
                spent = clock.ticks_diff(clock.ticks_ms(), now)
                if budget is not None:
                    link.pump(max(16, budget * (step - spent) // step))
                signer = app.signer
                if signer is None and app.keyless:  # the first boot: a key pair of its own
                    app.keyless = False
                    signer = app.signing()
                # A signature, a slice a scan, once the host's play commands (a scenario, a
                # test) and the link (a resync's stream, replies on their way) leave the heap a
                # quiet moment: the signer's work needs RAM of its own.
                if signer is not None and signer.busy() and not link.busy() and \
                        clock.ticks_diff(now, app.played) >= SIGN_QUIET_MS:
                    signer.run(clock, max(1, step - clock.ticks_diff(clock.ticks_ms(), now) - 2))
                # The state an undo would go back to, worked out a slice a pass beforehand.
                game = app.game
                filling = game is not None and not link.busy() and game.refill()
                if link.count() != beat_n:  # a frame sent after the heartbeat's look (a `sig`)
                    beat_n = link.count()
                    next_beat = clock.ticks_add(clock.ticks_ms(), HEARTBEAT_MS)
                next_tick = clock.ticks_add(next_tick, step)
                if clock.ticks_diff(now, next_tick) > 10 * step:
                    next_tick = now  # fell behind (a long journal write): don't race to catch up
                nap = app.rest_ms()
                if (nap and not link.busy() and not app.display._todo and app.recorder is None
                        and not handler.pending and not (signer is not None and signer.busy())
                        and not filling):
                    # A table at rest, or only waiting for a timer: nothing to look at until an
                    # input changes or the host sends (either ends the sleep), the sensing
                    # layer's timer, or the heartbeat.
                    beat = clock.ticks_diff(next_beat, now)
                    beat = beat if beat > step else step
                    nap = nap if nap < beat else beat
                    next_tick = clock.ticks_add(now, nap if nap < rest else rest)
                _stepped(app, clock, start, slow, t0, s0)
            else:
                _stepped(app, clock, start, slow, t0, s0)
                if link.prepare():
                    continue  # a stream's next records, between the scans
                # Asleep until the next pass (the sampling timer runs meanwhile); bytes from the
                # host wait in the UART's buffer (a scan period's worth: 57 at 115200 baud).
                wait = clock.ticks_diff(next_tick, clock.ticks_ms())
                if wait > 0:
                    wait = wait if wait < rest else rest
                    if hasattr(stdin, "wait"):
                        # Asleep, woken at once by a byte from the host (read at the top of the
                        # next pass) or by an input that changed: then the lines' turn is now.
                        if stdin.wait(wait):
                            next_tick = clock.ticks_ms()
                    else:
                        clock.sleep_ms(wait)
    except BaseException as e:
        # The app's last word: the host (and the simulator's watchdog) learn that it stopped.
        mode = "repl" if isinstance(e, KeyboardInterrupt) else "stopped"
        try:
            link.halt()
            link.emit("beat", {"mode": mode})
            link.flush()
        except Exception:
            pass
        raise
    finally:
        app.stop_sampling()
        if world is not None:
            world.deinit()
        if dog is not None:
            dog.release()
        app.journal.close()
    return app
