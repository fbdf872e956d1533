"""chalk flash: write a MicroPython firmware image to an ESP32 with esptool."""

import sys

from chalk import deploy, link
from chalk.commands import add_port

ORDER = 52


def run(args):
    """Check the image, then run esptool (erase first with --erase)."""
    deploy.check_image(args.firmware)
    port = link.resolve_port(args.port)

    def out(text):
        sys.stdout.write(text)
        sys.stdout.flush()

    deploy.flash(port, args.firmware, erase=args.erase, baud=args.baud, chip=args.chip,
                 connect_attempts=args.connect_attempts, out=out)
    print("MicroPython written to the board on %s; now `chalk deploy --port %s --board CONFIG`"
          % (port, port))
    return 0


def register(sub):
    p = sub.add_parser("flash", help="write a MicroPython firmware image (esptool)",
                       description="Write a MicroPython firmware image (.bin) to the ESP32 on "
                       "the port with esptool, showing its progress. Exits 1 if the file is "
                       "missing or not an ESP32 image, or if esptool fails (its error quoted).")
    add_port(p)
    p.add_argument("firmware", metavar="FIRMWARE.bin",
                   help="the MicroPython image, e.g. ESP32_GENERIC-*.bin from micropython.org")
    p.add_argument("--erase", action="store_true",
                   help="erase the whole flash first (also erases the journal and board.json)")
    p.add_argument("--baud", type=int, default=deploy.FLASH_BAUD,
                   help="baud rate while writing (default %(default)s; 115200 if it fails)")
    p.add_argument("--chip", default="esp32", choices=sorted(deploy.FLASH_OFFSETS),
                   help="the chip (default %(default)s; sets where the image goes)")
    p.add_argument("--connect-attempts", type=int, metavar="N",
                   help="how many times esptool tries to connect (its default: 7)")
    p.set_defaults(func=run)
