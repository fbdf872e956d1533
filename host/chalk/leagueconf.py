"""A league's rules: one JSON file (docs/league.md), checked whole before anything runs.

    {"chalk_league": 1, "id": "north", "name": "North Five-Pins League",
     "game": "<game id>", "config": {<that game's config>},
     "players": ["Ann", "Bob", "Cy"]            (or "teams": {"Crown": ["Ann", "Cy"], ...}),
     "points": {"win": 2, "draw": 1, "loss": 0},
     "tie_breaks": ["sets_difference", "head_to_head"],
     "rounds": {"start": "2026-09-07", "days": 7, "count": 12},
     "timezone": "Europe/London", "night_ends": "06:00",
     "legacy_keys": "pending",
     "venues": {"crown": {"name": "The Crown", "token": "..."}},
     "boards": {"esp32-0011aabbccdd": {"venue": "crown", "from_game": 1}},
     "keys": "keys.json", "broker": {"host": "localhost", "port": 1883}}
"""

import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

from chalk import mqttconf
from chalk.errors import ChalkError
from chalk.text import printable

TIE_BREAKS = {
    "legs_difference": "games (legs) won minus lost",
    "sets_difference": "sets won minus lost, over every game",
    "score_difference": "points scored minus conceded, over every game",
    "wins": "games (in a team league: matches) won",
    "head_to_head": "league points in the games between those still level",
}
KEYS = {"chalk_league", "id", "name", "game", "config", "players", "teams", "points",
        "tie_breaks", "rounds", "timezone", "night_ends", "legacy_keys", "venues", "boards",
        "keys", "broker"}


def norm(name):
    """A name as the league compares it: Unicode NFC, case folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", str(name)).casefold().split())


@dataclass
class Round:
    name: str
    first: date
    last: date  # inclusive


@dataclass
class League:
    path: Path
    id: str
    name: str
    game: str
    config: dict
    mode: str  # "players" or "teams"
    players: dict  # norm(name) -> name as the league writes it
    teams: dict  # team name -> [player names]; {} for a players' league
    team_of: dict  # norm(player) -> team
    points: dict
    tie_breaks: list
    rounds: list
    tz: object
    night_ends: time
    legacy: str
    venues: dict
    boards: dict
    keys: Path
    broker: object = None
    extra: dict = field(default_factory=dict)

    def entrant(self, name):
        """The league's own spelling of a player's name, or None if not in the league."""
        return self.players.get(norm(name))

    def round_of(self, when):
        """The Round a moment (aware datetime) falls in, or None (outside the season). A night
        belongs to the day it began: before `night_ends` is still the day before."""
        if not self.rounds:
            return Round("Season", date.min, date.max)
        local = when.astimezone(self.tz)
        day = (local - timedelta(hours=self.night_ends.hour,
                                 minutes=self.night_ends.minute)).date()
        for r in self.rounds:
            if r.first <= day <= r.last:
                return r
        return None


def _err(where, text, hint=None):
    return ChalkError("%s: %s" % (where, text), hint or "docs/league.md shows a whole league "
                      "config")


def _date(where, key, text):
    try:
        return date.fromisoformat(text)
    except (TypeError, ValueError):
        raise _err(where, "\"%s\" must be a date YYYY-MM-DD, not %s" % (
            key, json.dumps(text)[:40]))


def load(path):
    """The League of a config file; ChalkError naming the file and the key otherwise."""
    from scoreboard.rules import ConfigError, new_game, rules_for

    path = Path(path)
    data = mqttconf.read_json(path, "league config")
    where = str(path)
    extra = sorted(set(data) - KEYS)
    if extra:
        raise _err(where, "unknown key \"%s\" (known: %s)" % (printable(extra[0])[:40],
                                                             ", ".join(sorted(KEYS))))
    if data.get("chalk_league") != 1:
        raise _err(where, "\"chalk_league\": 1 is missing (the version of this file's format)")
    lid = mqttconf.check_name(data.get("id"), "%s: the league \"id\"" % where)
    name = data.get("name", lid)
    if type(name) is not str or not name.strip():
        raise _err(where, "\"name\" must be the league's name")
    game = data.get("game")
    try:
        rules_for(game)
    except ConfigError:
        raise _err(where, "\"game\" must be one of %s, not %s" % (", ".join(known_games()),
                                                                 json.dumps(game)[:40]))
    cfg = data.get("config", {})
    if type(cfg) is not dict:
        raise _err(where, "\"config\" must be the game's config, e.g. {\"target\": 60}")
    try:
        rules = new_game(game, cfg)
    except (ConfigError, ValueError, TypeError) as e:
        raise _err(where, "\"config\" is not a %s config: %s" % (game, e))
    cfg = {k: v for k, v in rules.config.items() if k in cfg}  # as the header will say it
    state = rules.state()
    players, teams, team_of = {}, {}, {}

    def add_player(p, team=None):
        if type(p) is not str or not p.strip() or p != p.strip():
            raise _err(where, "a player's name must be text without spaces around it, not %s"
                       % json.dumps(p)[:40])
        if norm(p) in players:
            raise _err(where, "%s is named twice among the players" % json.dumps(p))
        if p.upper() in ("A", "B") or re.match(r"^[PS]\d+$", p.upper()):
            raise _err(where, "%s is a board's default name, not a person's" % json.dumps(p),
                       "give every player their own name")
        players[norm(p)] = p
        if team is not None:
            team_of[norm(p)] = team
    if "players" in data and "teams" in data:
        raise _err(where, "give \"players\" (a players' league) or \"teams\", not both")
    if "teams" in data:
        mode = "teams"
        if type(data["teams"]) is not dict or len(data["teams"]) < 2:
            raise _err(where, "\"teams\" must be {\"Team\": [\"player\", ...], ...} with two "
                       "teams or more")
        for team, members in data["teams"].items():
            if not team.strip() or type(members) is not list or not members:
                raise _err(where, "team %s needs a list of its players" % json.dumps(team))
            teams[team] = list(members)
            for p in members:
                add_player(p, team)
    else:
        mode = "players"
        if type(data.get("players")) is not list or len(data.get("players")) < 2:
            raise _err(where, "\"players\" must list the league's players (two or more), or "
                       "give \"teams\"")
        for p in data["players"]:
            add_player(p)
    pts = data.get("points", {"win": 2, "draw": 1, "loss": 0})
    if type(pts) is not dict or set(pts) - {"win", "draw", "loss"} or \
            not all(type(v) in (int, float) and -100 <= v <= 100 for v in pts.values()):
        raise _err(where, "\"points\" must be {\"win\": N, \"draw\": N, \"loss\": N}")
    points = {"win": 2, "draw": 1, "loss": 0}
    points.update(pts)
    tbs = data.get("tie_breaks", ["legs_difference"] if mode == "teams" else ["wins"])
    if type(tbs) is not list or not all(t in TIE_BREAKS for t in tbs) or len(set(tbs)) != len(
            tbs):
        raise _err(where, "\"tie_breaks\" must be a list from: %s" % ", ".join(TIE_BREAKS))
    if "sets_difference" in tbs and type(state.get("sets")) is not list:
        raise _err(where, "tie-break sets_difference needs a game played in sets; %s has none"
                   % game, "use score_difference or legs_difference")
    tz = timezone.utc
    if "timezone" in data:
        try:
            from zoneinfo import ZoneInfo

            tz = ZoneInfo(data["timezone"])
        except Exception:
            raise _err(where, "\"timezone\" %s is not a time zone name (e.g. Europe/London)"
                       % json.dumps(data["timezone"])[:40])
    ne = data.get("night_ends", "06:00")
    try:
        night_ends = time.fromisoformat(ne)
    except (TypeError, ValueError):
        raise _err(where, "\"night_ends\" must be a time HH:MM, not %s" % json.dumps(ne)[:30])
    rounds = _rounds(where, data.get("rounds"))
    legacy = data.get("legacy_keys", "pending")
    if legacy not in ("pending", "count", "refuse"):
        raise _err(where, "\"legacy_keys\" must be pending, count or refuse")
    venues = {}
    raw = data.get("venues", {})
    if type(raw) is not dict or not raw:
        raise _err(where, "\"venues\" must name the league's venues: {\"crown\": {\"name\": "
                   "\"The Crown\", \"token\": \"...\"}}")
    for vid, v in raw.items():
        mqttconf.check_name(vid, "%s: venue id" % where)
        if type(v) is not dict or set(v) - {"name", "token"}:
            raise _err(where, "venue %s must be {\"name\": ..., \"token\": ...}" % vid)
        tok = v.get("token")
        if tok is not None and (type(tok) is not str or len(tok) < 16):
            raise _err(where, "venue %s: a token is at least 16 characters (`chalk league "
                       "token` makes one)" % vid)
        venues[vid] = {"name": v.get("name") or vid, "token": tok}
    boards = {}
    raw = data.get("boards", {})
    if type(raw) is not dict:
        raise _err(where, "\"boards\" must be {\"DEVICE\": {\"venue\": ID}, ...}")
    for dev, b in raw.items():
        if type(b) is not dict or b.get("venue") not in venues or \
                set(b) - {"venue", "from_game", "name"}:
            raise _err(where, "board %s must be {\"venue\": one of the venues, \"from_game\": N}"
                       % json.dumps(dev)[:60])
        fg = b.get("from_game", 1)
        if type(fg) is not int or fg < 1:
            raise _err(where, "board %s: \"from_game\" must be a game number (1 or more)" % dev)
        boards[dev] = {"venue": b["venue"], "from_game": fg, "name": b.get("name") or dev}
    keys = data.get("keys", "keys.json")
    if type(keys) is not str:
        raise _err(where, "\"keys\" must be the path of the league's key store")
    keys = Path(keys).expanduser()
    if not keys.is_absolute():
        keys = path.parent / keys
    broker = None
    if "broker" in data:
        broker = mqttconf.broker_from(data["broker"], where, path.parent)
    return League(path, lid, name.strip(), game, cfg, mode, players, teams, team_of, points,
                  tbs, rounds, tz, night_ends, legacy, venues, boards, keys, broker)


def known_games():
    from scoreboard import games  # the board's registry of games

    return sorted(games.IDS)


def _rounds(where, raw):
    if raw is None:
        return []
    out = []
    if type(raw) is dict:
        if set(raw) - {"start", "days", "count", "name"}:
            raise _err(where, "\"rounds\" must be {\"start\": DATE, \"days\": N, \"count\": N} "
                       "or a list of {\"name\", \"from\", \"to\"}")
        start = _date(where, "rounds.start", raw.get("start"))
        days, count = raw.get("days", 7), raw.get("count")
        if type(days) is not int or not 1 <= days <= 366 or type(count) is not int or \
                not 1 <= count <= 1000:
            raise _err(where, "\"rounds\" needs \"days\" (1-366) and \"count\" (1-1000)")
        label = raw.get("name", "Round")
        for i in range(count):
            first = start + timedelta(days=i * days)
            out.append(Round("%s %d" % (label, i + 1), first, first + timedelta(days=days - 1)))
        return out
    if type(raw) is not list or not raw:
        raise _err(where, "\"rounds\" must be {\"start\", \"days\", \"count\"} or a list")
    for i, r in enumerate(raw):
        if type(r) is not dict or set(r) - {"name", "from", "to"}:
            raise _err(where, "rounds[%d] must be {\"name\", \"from\", \"to\"}" % i)
        first = _date(where, "rounds[%d].from" % i, r.get("from"))
        last = _date(where, "rounds[%d].to" % i, r.get("to", r.get("from")))
        if last < first:
            raise _err(where, "rounds[%d] ends before it starts" % i)
        if out and first <= out[-1].last:
            raise _err(where, "rounds[%d] overlaps the round before it" % i)
        out.append(Round(str(r.get("name") or "Round %d" % (i + 1)), first, last))
    return out


def parse_time(text):
    """An ISO 8601 time from a header ("2026-11-28T20:00:00Z") as an aware datetime, or None."""
    if type(text) is not str:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
