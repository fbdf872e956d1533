# A stand-in for MicroPython's `network` module, for tests only: the Wi-Fi radio's on/off state
# (hal.esp32 turns it on while it draws the signing key, for a true random number). `fail`: the
# next WLAN() raises, as on a firmware built without networking.

STA_IF = 0
radio = {"active": False, "on": 0, "off": 0}
fail = [False]


class WLAN:
    def __init__(self, interface):
        if fail[0]:
            raise OSError(-1, "no Wi-Fi in this firmware")

    def active(self, on=None):
        if on is None:
            return radio["active"]
        if on and not radio["active"]:
            radio["on"] += 1
        if not on and radio["active"]:
            radio["off"] += 1
        radio["active"] = bool(on)
