# A stand-in for MicroPython's `esp32` module, for tests only (beside the fake `machine`): NVS
# kept in RAM by namespace, with esp32.NVS's blob calls and its errors (OSError for a key that is
# missing or longer than the buffer). Helpers: stores (namespace -> {key: bytes}), commits.

stores = {}
commits = [0]


class NVS:
    def __init__(self, namespace):
        self._d = stores.setdefault(namespace, {})

    def get_blob(self, key, buf):
        v = self._d.get(key)
        if v is None:
            raise OSError(-4354)  # ESP_ERR_NVS_NOT_FOUND
        if len(v) > len(buf):
            raise OSError(-4364)  # ESP_ERR_NVS_INVALID_LENGTH
        buf[:len(v)] = v
        return len(v)

    def set_blob(self, key, value):
        self._d[key] = bytes(value)

    def commit(self):
        commits[0] += 1
