"""chalk dispute: a venue disputes one of its finished games at the league (docs/mqtt.md).

Through a running `chalk serve` (its API: the host itself, or its control token from another
machine); without one, straight into the archive's outbox, which the next `chalk serve`
with MQTT sends. The league records it as pending until it resolves it."""

ORDER = 39


def run(args):
    import json
    import os
    import urllib.error
    import urllib.request

    from chalk import mqtt, remote
    from chalk.errors import ChalkError
    from chalk.mqtt_outbox import check_note, queue_dispute
    from chalk.store import default_path

    note = check_note(args.note)
    try:
        with open(remote.serve_file()) as f:
            info = json.load(f)
        url = info["url"] if remote._alive(int(info["pid"])) else None
    except (OSError, ValueError, KeyError, TypeError):
        url = None
    if url and not args.db:
        headers = {"Content-Type": "application/json"}
        token = args.token or os.environ.get("CHALK_TOKEN")
        if token:
            headers["Authorization"] = "Bearer " + token
        req = urllib.request.Request(url + "/api/disputes", method="POST", headers=headers,
                                     data=json.dumps({"game": args.game,
                                                      "note": note}).encode())
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as e:
            try:
                body = json.loads(e.read())
            except ValueError:
                body = {}
            raise ChalkError(body.get("error") or "chalk serve refused (HTTP %d)" % e.code,
                             body.get("hint"))
        except OSError as e:
            raise ChalkError("cannot reach chalk serve at %s: %s" % (url, e))
        print("game %d disputed: queued as message %d for the league (chalk serve sends it)"
              % (args.game, body["result"]["outbox"]))
        return 0
    settings = mqtt.settings_from(args)
    if settings is None:
        raise ChalkError("chalk serve is not running here, and no --mqtt-config or --mqtt "
                         "says which venue this is", "give --mqtt-config FILE (the one chalk "
                         "serve uses)")
    mid = queue_dispute(args.db or str(default_path()), args.game, note, settings)
    print("game %d disputed: queued as message %d; the next chalk serve with MQTT sends it"
          % (args.game, mid))
    return 0


def register(sub):
    from chalk import mqtt
    from chalk.store import add_db

    p = sub.add_parser("dispute", help="dispute a finished game at the league (with a note)",
                       description="Mark one of this venue's finished games disputed at the "
                       "league, with a note saying what is wrong: the league shows it as "
                       "pending until it resolves it. Through the running chalk serve, or "
                       "queued in the archive's outbox.")
    p.add_argument("game", type=int, metavar="GAME", help="the game's id here (chalk games)")
    p.add_argument("--note", required=True, help="what is wrong with it")
    p.add_argument("--token", help="chalk serve's control token, from another machine "
                   "(default $CHALK_TOKEN)")
    add_db(p)
    mqtt.add_options(p)
    p.set_defaults(func=run)
