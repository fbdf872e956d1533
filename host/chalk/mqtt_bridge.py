"""Mosquitto configurations for a league: each venue's broker bridged to the league's broker.

A venue runs its own broker (Debian's mosquitto) on its PC, where `chalk serve` and the pub's
home automation connect; a bridge in it connects out to the league's broker (venues sit
behind a router; the league has an address) and carries only what the league needs:

    out: chalk/v1/venue/<venue>/game/#, .../dispute/#, .../status   (venue -> league)
    in:  chalk/v1/venue/<venue>/ack/#, chalk/v1/league/#             (league -> venue)

The league's broker lets each venue write under its own id only (an ACL keyed on the user
name, which is the venue id), so no venue can send games as another. These texts are what
`chalk league bridge-config` and `chalk league broker-config` print (docs/league.md).
"""

from chalk import mqttconf


def bridge_config(venue, host, port, username=None, password=None, ca=None, name=None,
                  live=False):
    """The lines to add to a venue's mosquitto.conf: one bridge to the league broker.
    `live`: also carry every table's state and actions (for a league's live page)."""
    mqttconf.check_name(venue, "the venue id")
    v = mqttconf.venue_topic(venue)
    lg = "/".join((mqttconf.ROOT, mqttconf.TOPIC_VERSION, "league"))
    lines = [
        "# Chalk: venue %s bridged to the league broker at %s:%d (docs/league.md)" % (
            venue, host, port),
        "connection %s" % (name or "chalk-league"),
        "address %s:%d" % (host, port),
        "remote_clientid chalk-bridge-%s" % venue,
    ]
    if username:
        lines.append("remote_username %s" % username)
    if password:
        lines.append("remote_password %s" % password)
    if ca:
        lines += ["bridge_cafile %s" % ca, "bridge_insecure false"]
    lines += [
        "# A persistent session at the league: acks sent while the link is down wait there.",
        "cleansession false",
        "start_type automatic",
        "restart_timeout 2 30",
        "keepalive_interval 20",
        "# The bridge's state (1 up, 0 down) on this broker only: chalk serve sends again",
        "# whatever the league has not acknowledged when it reads 1.",
        "notifications true",
        "notifications_local_only true",
        "topic %s/game/# out 1" % v,
        "topic %s/dispute/# out 1" % v,
        "topic %s/status out 1" % v,
    ]
    if live:
        lines.append("topic %s/table/# out 0" % v)
    lines += ["topic %s/ack/# in 1" % v, "topic %s/# in 1" % lg]
    return "\n".join(lines) + "\n"


def league_acl(league_user="league"):
    """The league broker's ACL file: the league reads every venue and writes acks and its own
    topics; each venue (user name = venue id) writes under its own id only."""
    v = "/".join((mqttconf.ROOT, mqttconf.TOPIC_VERSION, "venue"))
    lg = "/".join((mqttconf.ROOT, mqttconf.TOPIC_VERSION, "league"))
    return "\n".join([
        "# Chalk league broker ACL (docs/league.md). Venue user names are venue ids.",
        "user %s" % league_user,
        "topic read %s/+/game/#" % v,
        "topic read %s/+/dispute/#" % v,
        "topic read %s/+/status" % v,
        "topic read %s/+/table/#" % v,
        "topic write %s/+/ack/#" % v,
        "topic readwrite %s/#" % lg,
        "",
        "# every venue's bridge: its own topics, its acks, the league's news",
        "pattern write %s/%%u/game/#" % v,
        "pattern write %s/%%u/dispute/#" % v,
        "pattern write %s/%%u/status" % v,
        "pattern write %s/%%u/table/#" % v,
        "pattern read %s/%%u/ack/#" % v,
        "pattern read %s/#" % lg,
    ]) + "\n"


def league_broker_config(port, password_file, acl_file, persistence_dir=None,
                         bind="0.0.0.0", cert=None, key=None):
    """A mosquitto.conf for the league's broker: a listener, users, the ACL, persistence (so
    queued acks and games survive a restart of the broker)."""
    lines = ["# Chalk league broker (docs/league.md)",
             "per_listener_settings false",
             "listener %d %s" % (port, bind)]
    if cert and key:
        lines += ["certfile %s" % cert, "keyfile %s" % key]
    lines += ["allow_anonymous false",
              "password_file %s" % password_file,
              "acl_file %s" % acl_file]
    if persistence_dir:
        lines += ["persistence true", "persistence_location %s/" % str(persistence_dir)
                  .rstrip("/"), "autosave_interval 60"]
    lines += ["max_queued_messages 10000"]
    return "\n".join(lines) + "\n"
