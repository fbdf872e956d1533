"""chalk keys: the key store that `chalk verify` checks the boards' signatures with
(docs/league.md)."""

import sys

ORDER = 36


def _describe(e):
    if e["kind"] == "board":
        text = "%s  board key %s  since game %s  %s, %s" % (
            e["device"], e["kid"], e.get("since"), e.get("how") or "?", e.get("added") or "?")
        if "replaced" in e:
            text += "  (replaced by %s on %s)" % (e.get("replaced_by"), e["replaced"])
        return text
    if e["kind"] == "legacy":
        return "%s  legacy key %s (the pub holds this key)  %s, %s" % (
            e.get("device") or "(device not known yet)", e["kid"], e.get("how") or "?",
            e.get("added") or "?")
    return "league %s  key %s%s  %s, %s" % (
        e["name"], e["kid"], " (this store's own: it signs exported key files)"
        if "priv" in e else " (trusted: board keys it signed are taken)", e.get("how") or "?",
        e.get("added") or "?")


def run(args):
    import json

    from chalk import keys
    from chalk.errors import ChalkError

    store = keys.KeyStore(args.keys)
    if args.action == "list":
        if not store.entries:
            print("no keys in %s" % store.path)
        for e in store.entries:
            print(_describe(e))
        return 0
    if args.action == "enrol":
        from chalk.link import resolve_port

        port = resolve_port(args.port)
        reply, lines = keys.enrol(port, args.keys, args.replace)
        for line in lines:
            print(line)
        return 0
    if args.action == "export":
        missing = [d for d in args.devices if not store.for_device(d)]
        if missing:
            raise ChalkError("no key for %s in %s" % (", ".join(missing), store.path),
                             "`chalk keys list` shows the boards whose keys are kept")
        data, chosen = store.export(args.devices)
        text = json.dumps(data, indent=1) + "\n"
        legacy = [e for e in chosen if e["kind"] == "legacy"]
        if args.output in (None, "-"):
            sys.stdout.write(text)
        else:
            keys.write_private(args.output, text, "the key file")
            print("%d key%s written to %s%s" % (
                len(chosen), "" if len(chosen) == 1 else "s", args.output,
                ", signed by league key %s" % data["signed"]["kid"] if "signed" in data
                else " (not signed: this store holds no league key)"))
        if legacy:
            print("warning: %d legacy key%s in it: secrets, anyone holding one can sign as "
                  "that board" % (len(legacy), "" if len(legacy) == 1 else "s"),
                  file=sys.stderr)
        return 0
    if args.action == "league":
        e = store.make_league(" ".join(args.name))
        store.save()
        print("league %s: key %s made and kept in %s; the key files `chalk keys export` "
              "writes are signed with it" % (e["name"], e["kid"], store.path))
        print("other computers trust it with `chalk keys trust FILE %s`: give them this key "
              "id apart from the file (on paper, by phone)" % e["kid"])
        return 0
    if args.action == "trust":
        e, new = store.trust(args.file, args.kid)
        if new:
            store.save()
            print("now trusting league key %s (%s) from %s: board keys in files it signed "
                  "are taken by `chalk keys import`" % (e["kid"], e["name"], args.file))
        else:
            print("league key %s is trusted already" % e["kid"])
        return 0
    out = []
    for path in args.files:
        out += store.import_file(path, args.replace, args.legacy)
    store.save()
    for line in out:
        print(line)
    return 0


def register(sub):
    from chalk.commands import add_port
    from chalk.keys import add_keys

    p = sub.add_parser("keys", help="the boards' keys that signed games are checked with",
                       description="Each board makes its own signing key pair at its first "
                       "boot and keeps the private half; a league checks the games it signs "
                       "(`chalk verify`) with its public half, kept in a key store. A board key "
                       "enters a store only from the board itself (enrol, over USB) or from a "
                       "file signed by a league key the store trusts. docs/league.md.")
    s = p.add_subparsers(dest="action", metavar="ACTION")
    s.required = True
    s.add_parser("list", help="the keys kept, by board")
    n = s.add_parser("enrol", help="read a board's key over USB (it signs a fresh challenge)")
    add_port(n)
    n.add_argument("--replace", metavar="KID",
                   help="the key the board signed with until now, if it has a new one")
    e = s.add_parser("export", help="write keys to a file (or stdout), signed by this store's "
                     "league key if it has one")
    e.add_argument("devices", nargs="*", metavar="DEVICE",
                   help="device id(s) of the boards (default: every key)")
    e.add_argument("-o", "--output", metavar="FILE", help="file to write (default: stdout)")
    i = s.add_parser("import", help="keep the keys of a file a trusted league signed")
    i.add_argument("files", nargs="+", metavar="FILE")
    i.add_argument("--replace", metavar="KID",
                   help="the key of a board the file gives a new key for")
    i.add_argument("--legacy", action="store_true",
                   help="keep legacy (host-made) keys from a file nobody signed")
    lg = s.add_parser("league", help="make this store's league key (signs exported files)")
    lg.add_argument("name", nargs="+", metavar="NAME", help="the league's name")
    t = s.add_parser("trust", help="trust a league's key: board keys it signed are taken")
    t.add_argument("file", metavar="FILE", help="a key file the league exported")
    t.add_argument("kid", metavar="KID", help="the league key's id, as its secretary gives it")
    for q in s.choices.values():
        add_keys(q)
    p.set_defaults(func=run)
