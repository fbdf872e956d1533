# The simulated board's NVS: esp32.NVS's blob calls over one file of its flash directory,
# <flash>/nvs ("key hex" lines), so the signing key outlives a restart as it does in an ESP32's
# NVS partition. Loaded by hal.sim only; nothing of it stays in RAM between calls.
#
# Like the ESP32's, it sits apart from the journal and from what the app sends over the link;
# like the ESP32's too, whoever can run code on the board (the REPL, `mpremote`) can read it:
# docs/league.md.

import binascii
import os


class SimNVS:
    def __init__(self, flash_dir):
        self._path = flash_dir.rstrip("/") + "/nvs"

    def _lines(self):
        try:
            with open(self._path) as f:
                return f.read().split("\n")
        except OSError:
            return []

    def get_blob(self, key, buf):
        for line in self._lines():
            k, _, v = line.partition(" ")
            if k == key:
                try:
                    v = binascii.unhexlify(v)
                except ValueError:
                    break  # a damaged line: that value is gone, as a torn NVS entry is
                if len(v) > len(buf):
                    raise OSError(22)  # ESP_ERR_NVS_INVALID_LENGTH
                buf[:len(v)] = v
                return len(v)
        raise OSError(2)  # ESP_ERR_NVS_NOT_FOUND

    def set_blob(self, key, value):
        # Written aside, then renamed over: a power cut leaves the old values or the new ones.
        keep = [ln for ln in self._lines() if ln and ln.partition(" ")[0] != key]
        keep.append(key + " " + binascii.hexlify(value).decode())
        tmp = self._path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(keep) + "\n")
        os.rename(tmp, self._path)

    def commit(self):
        pass  # set_blob has written it
