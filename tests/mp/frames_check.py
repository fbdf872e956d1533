# The frame codec and the board's Link on MicroPython (runs on CPython too), for comparison
# line by line with CPython. Usage: micropython frames_check.py CASES.json
# CASES: {"encode": [[n, type, payload], ...],   -> {"frame": line}
#         "decode": [hex, ...],                   -> {"decode": outcome}
#         "mutate": [[n, type, payload], ...],    -> {"mutate": counts}: every byte replaced by
#                                                    every other value, and every truncation
#         "link": [hex chunk, ...]}               -> {"link": [lines written], "stats": {...}}
# An outcome is ["frame", n, type, payload], ["noise"], ["corrupt"] or ["version", v, n].

import binascii
import json
import sys

from scoreboard import frames
from scoreboard.link import Link, Refused


def outcome(line):
    try:
        f = frames.decode(line)
    except frames.WrongVersion as e:
        return ["version", e.version, e.n]
    except frames.Corrupt:
        return ["corrupt"]
    if f is None:
        return ["noise"]
    return ["frame", f[0], f[1], f[2]]


def mutate(n, typ, payload):
    good = frames.encode(n, typ, payload).encode()
    counts = {"noise": 0, "corrupt": 0, "version": 0, "same": 0, "other": 0, "cut_accepted": 0}
    want = frames.decode(good)
    buf = bytearray(good)
    for i in range(len(good) - 1):  # the terminator is not part of the frame
        orig = buf[i]
        for v in range(256):
            if v == orig:
                continue
            buf[i] = v
            o = outcome(bytes(buf))
            if o[0] == "frame":
                counts["same" if tuple(o[1:]) == want else "other"] += 1
            else:
                counts[o[0]] += 1
        buf[i] = orig
    for cut in range(len(good) - 1):  # every proper prefix, with or without a newline after it
        for tail in (b"", b"\n"):
            if outcome(good[:cut] + tail)[0] == "frame":
                counts["cut_accepted"] += 1
    return counts


class Handler:
    def __init__(self):
        self.seq = 3

    def cmd_hello(self, args):
        return {"firmware": "0.1.0", "game": "five-pins", "board": "Zoë's table",
                "last_seq": self.seq}

    def cmd_state(self, args):
        return {"game": "five-pins", "state": {"scores": [0, 0], "next": 0},
                "last_seq": self.seq}

    def cmd_undo(self, args):
        if self.seq == 0:
            raise Refused("nothing to undo")
        self.seq -= 1
        return {"seq": self.seq}

    def cmd_journal(self, args):
        for s in range(args["after"] + 1, self.seq + 1):
            yield {"seq": s, "t": s * 100, "a": "shot", "player": s % 2, "pins": "1C"}


def run_link(chunks):
    out = []
    link = Link(out.append, Handler(), test_mode=False)
    link.emit("boot", {"firmware": "0.1.0", "board": "Zoë's table"})
    for h in chunks:
        link.feed(binascii.unhexlify(h))
    link.emit("warn", {"sensor": "pin.C", "problem": "stuck"})
    return out, link.stats()


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    for n, typ, payload in cases.get("encode", []):
        print(json.dumps({"frame": frames.encode(n, typ, payload)}))
    for h in cases.get("decode", []):
        print(json.dumps({"decode": outcome(binascii.unhexlify(h))}))
    for n, typ, payload in cases.get("mutate", []):
        print(json.dumps({"mutate": mutate(n, typ, payload)}))
    if cases.get("link"):
        out, stats = run_link(cases["link"])
        print(json.dumps({"link": out, "stats": stats}))


main()
