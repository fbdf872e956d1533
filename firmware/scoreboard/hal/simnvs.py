# The simulated board's NVS: esp32.NVS's blob calls over files of its flash directory, one a
# key (<flash>/nvs/<key>, the raw bytes), so the signing key outlives a restart as it does in an
# ESP32's NVS partition. Loaded by hal.sim only; nothing of it stays in RAM between calls.
#
# Like the ESP32's, it sits apart from the journal and from what the app sends over the link;
# like the ESP32's too, whoever can run code on the board (the REPL, `mpremote`) can read it:
# docs/league.md.

import os


class SimNVS:
    def __init__(self, flash_dir):
        self._dir = flash_dir.rstrip("/") + "/nvs/"

    def get_blob(self, key, buf):
        try:
            with open(self._dir + key, "rb") as f:
                v = f.read()
        except OSError:
            raise OSError(2)  # ESP_ERR_NVS_NOT_FOUND
        if len(v) > len(buf):
            raise OSError(22)  # ESP_ERR_NVS_INVALID_LENGTH
        buf[:len(v)] = v
        return len(v)

    def set_blob(self, key, value):
        # Written aside, then renamed over: a power cut leaves the old value or the new one.
        try:
            os.mkdir(self._dir[:-1])
        except OSError:
            pass  # there already
        path = self._dir + key
        with open(path + ".tmp", "wb") as f:
            f.write(value)
        os.rename(path + ".tmp", path)

    def commit(self):
        pass  # set_blob has written it
