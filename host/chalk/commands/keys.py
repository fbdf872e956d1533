"""chalk keys: the boards' signing keys a league needs to check match logs."""

import sys

ORDER = 36


def run(args):
    from chalk import keys
    from chalk.errors import ChalkError

    store = keys.KeyStore(args.keys)
    if args.action == "list":
        if not store.entries:
            print("no keys in %s" % store.path)
        for e in store.entries:
            print("%s  key %s  added %s" % (e.get("device") or "(device not known yet)",
                                            e["kid"], e.get("added") or "?"))
        return 0
    if args.action == "export":
        chosen = [e for e in store.entries
                  if not args.devices or e.get("device") in args.devices]
        missing = [d for d in args.devices if not store.for_device(d)]
        if missing:
            raise ChalkError("no key for %s in %s" % (", ".join(missing), store.path),
                             "`chalk keys list` shows the boards whose keys are kept")
        other = keys.KeyStore.__new__(keys.KeyStore)
        other.entries = chosen
        if args.output in (None, "-"):
            import json

            sys.stdout.write(json.dumps({"chalk_keys": keys.VERSION, "keys": chosen},
                                        indent=1) + "\n")
        else:
            from pathlib import Path

            other.path = Path(args.output)
            other.save()
            print("%d key%s written to %s" % (len(chosen), "" if len(chosen) == 1 else "s",
                                              args.output))
        return 0
    added = 0
    for path in args.files:
        for e in keys.read_file(path):
            if store.add(bytes.fromhex(e["key"]), e.get("device")):
                added += 1
    if added:
        store.save()
    print("%d new key%s kept in %s" % (added, "" if added == 1 else "s", store.path))
    return 0


def register(sub):
    from chalk.keys import add_keys

    p = sub.add_parser("keys", help="the boards' signing keys (list, export, import)",
                       description="Each board signs its games with a key of its own, made by "
                       "`chalk deploy` (or `chalk sim`) and kept in a key store on this "
                       "computer. A league imports the keys of the pubs' boards to check the "
                       "match logs they send in (`chalk verify FILE`). Exported keys are "
                       "secrets: anyone holding one can sign logs as that board.")
    s = p.add_subparsers(dest="action", metavar="ACTION")
    s.required = True
    s.add_parser("list", help="the keys kept, by board")
    e = s.add_parser("export", help="write keys to a file (or stdout) for a league")
    e.add_argument("devices", nargs="*", metavar="DEVICE",
                   help="device id(s) of the boards (default: every key)")
    e.add_argument("-o", "--output", metavar="FILE", help="file to write (default: stdout)")
    i = s.add_parser("import", help="keep the keys of a file from `chalk keys export`")
    i.add_argument("files", nargs="+", metavar="FILE")
    for q in (e, i, s.choices["list"]):
        add_keys(q)
    p.set_defaults(func=run)
