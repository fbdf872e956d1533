"""Reading protocol 2's compact frames back into the `rec` and `state` payloads of protocol 1,
with the rules of the board's game (docs/serial-protocol.md). The board only writes them
(scoreboard/frames.py); this side runs on the host, so it does not take the board's RAM."""

import binascii

from scoreboard.pack import _NULL, UNDO
from scoreboard.safejson import loads as _loads  # depth-limited: a frame is no stack bomb


def _parse(text, like):
    t = type(like)
    if text == _NULL:
        return None
    if t is bool:
        if text not in ("y", "n"):
            raise ValueError("not y/n")
        return text == "y"
    if t is list and like and type(like[0]) is list:
        if text[:1] == "[":
            return _loads(text)
        return [_parse(x, like[0]) for x in text.split("/")]
    if t is list:
        if text[:1] == "[":
            return _loads(text)
        if text == ".":
            return []
        if "." in text:
            return [int(x) for x in (text[:-1] if text[-1] == "." else text).split(".")]
        if len(text) > len(like):
            raise ValueError("%d digits for a list of %d" % (len(text), len(like)))
        return [int(c) for c in text] + [0] * (len(like) - len(text))
    if t is int or like is None:
        if text[:1] in "-0123456789":
            return int(text)
    return _loads(text)


def parse_state(text, keys, like):
    """The state dict of state_text(): `keys` sorted, `like` a state of the same game (its
    shapes)."""
    parts = text.split(",")
    if len(parts) != len(keys):
        raise ValueError("%d state values, the game has %d" % (len(parts), len(keys)))
    out = {}
    for i in range(len(keys)):
        out[keys[i]] = _parse(parts[i], like[keys[i]])
    return out


def unpack_block(text):
    """(game id, [(seq, t, code), ...]) of an `r` payload; ValueError if malformed."""
    parts = text.split(" ")
    if len(parts) != 3:
        raise ValueError("an r frame is GAME SEQ0 DATA")
    game, first, data = parts
    if not first.isdigit() or len(first) > 16:
        raise ValueError("an r frame's SEQ0 is a decimal seq")
    seq = int(first)
    if not data or len(data) % 4:
        raise ValueError("block data is not base64")
    for c in data:
        if not ("A" <= c <= "Z" or "a" <= c <= "z" or "0" <= c <= "9" or c in "+/="):
            raise ValueError("block data is not base64")
    raw = binascii.a2b_base64(data)
    out = []
    t = 0
    i = 0
    n = len(raw)
    while i < n:
        vals = []
        for _ in range(2):
            v = 0
            shift = 0
            while True:
                if i >= n:
                    raise ValueError("a record is cut short")
                c = raw[i]
                i += 1
                v |= (c & 0x7F) << shift
                shift += 7
                if not c & 0x80:
                    break
            vals.append(v)
        d = vals[0]
        t += (d >> 1) if not d & 1 else -((d + 1) >> 1)
        out.append((seq, t, vals[1] - 1))
        seq += 1
    return game, out


class Unpacker:
    """Turns compact frames back into the `rec` and `state` payloads of version 1, with the
    rules of the board's game (learned from hello/boot results and header records)."""

    def __init__(self):
        self._rules = {}
        self.game = None
        self.config = {}

    def learn(self, game, config=None):
        """The board's current game (hello or boot payload, or a header record)."""
        if type(game) is str:
            self.game = game
            self.config = config if type(config) is dict else {}
            self._rules.pop(game, None)

    def rules(self, game):
        r = self._rules.get(game)
        if r is None:
            from scoreboard.rules import rules_for

            r = rules_for(game)(self.config if game == self.game else {})
            like = r.export(r.initial())
            keys = sorted(like)
            r = (r, keys, like)
            self._rules[game] = r
        return r

    def expand(self, typ, payload):
        """[(type, payload dict), ...] that a compact frame stands for; a JSON frame as is.
        ValueError if it cannot be read (no game known, a bad value)."""
        if typ == "rec" and type(payload) is dict and payload.get("type") == "H":
            head = payload.get("header")
            if type(head) is dict:
                self.learn(head.get("game"), head.get("config"))
        if typ == "a":
            if self.game is None:
                raise ValueError("an action frame before the board said its game")
            parts = payload.split(" ")
            if len(parts) != 4:
                raise ValueError("an a frame is SEQ T CODE STATE")
            if not (parts[0].isdigit() and parts[1].isdigit() and len(parts[0]) <= 16
                    and len(parts[1]) <= 16):
                raise ValueError("an a frame's SEQ and T are decimal numbers")
            seq, t = int(parts[0]), int(parts[1])
            code = UNDO if parts[2] == "u" else int(parts[2])
            game, keys, like = self.rules(self.game)
            rec = self._action(game, code)
            rec["seq"] = seq
            rec["t"] = t
            return [("rec", rec), ("state", {"seq": seq,
                                             "state": parse_state(parts[3], keys, like)})]
        if typ == "r":
            gid, recs = unpack_block(payload)
            game = self.rules(gid)[0]
            out = []
            for seq, t, code in recs:
                rec = self._action(game, code)
                rec["seq"] = seq
                rec["t"] = t
                out.append(("rec", rec))
            return out
        return [(typ, payload)]

    def _action(self, game, code):
        if code == UNDO:
            return {"a": "undo"}
        if code < 0:
            raise ValueError("bad action code %d" % code)
        return game.decode(code)
