"""chalk ports: the serial ports on this computer, likely Chalk boards first."""

from chalk import link
from chalk.errors import ChalkError

ORDER = 30


def table(listing):
    """The ports as table rows: device, description, USB bridge, likely a board."""
    rows = [("device", "description", "USB bridge", "board?")]
    for p in listing:
        rows.append((p.device, p.description or "-", p.bridge or "-",
                     "likely" if p.board else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return ["%-*s  %-*s  %-*s  %s" % (widths[0], r[0], widths[1], r[1], widths[2], r[2], r[3])
            for r in rows]


def run(args):
    """List the serial ports; exit 1 if there is none."""
    listing = link.ports()
    if not listing:
        raise ChalkError("no serial ports found",
                         "plug the board in with a data USB cable (charge-only cables have no "
                         "data lines) and check its USB-serial driver (CP210x, CH340); a "
                         "simulated board's port is the path `chalk sim` prints")
    print("\n".join(table(listing)))
    boards = [p for p in listing if p.board]
    if not boards:
        print("none of these looks like an ESP32 board (no CP210x, CH340, CH9102 or "
              "Espressif USB bridge); give the port with --port if yours is one of them")
    elif len(boards) == 1:
        print("chalk uses %s when no --port is given" % boards[0].device)
    else:
        print("%d likely boards: choose one with --port or $%s" % (len(boards), link.ENV_PORT))
    return 0


def register(sub):
    p = sub.add_parser("ports", help="list serial ports, likely boards first",
                       description="List the serial ports on this computer: device, "
                       "description, USB bridge, and whether it is likely a Chalk board (an "
                       "ESP32's USB bridge). Exits 1 when there is no serial port at all.")
    p.set_defaults(func=run)
