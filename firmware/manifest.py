# MicroPython manifest: freezes the Chalk app into a custom ESP32_GENERIC image.
#
# Frozen bytecode runs from flash, so the app's code costs the ESP32 almost no heap and the board
# boots without compiling anything. Build from a MicroPython checkout (ESP-IDF set up):
#
#     make -C ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=/abs/path/to/firmware/manifest.py
#
# then flash build-ESP32_GENERIC/firmware.bin with esptool as for the stock image. Relative paths
# below are relative to this file. This is run by MicroPython's build tools on CPython; it is not
# firmware and is never copied to the board.
#
# Board configs are data, not code, and are not frozen: copy the chosen one onto the board's
# filesystem as /board.json, the file main.py loads at boot:
#
#     mpremote cp firmware/boards/<the board's>.json :/board.json
#
# With this image, do not also copy scoreboard/ onto the filesystem: the board searches '' (the
# filesystem root) before '.frozen', so a stale copy there would shadow the frozen package.

# Everything the stock image freezes: _boot.py (mounts the LittleFS filesystem the journal lives
# on), asyncio, the networking and driver modules.
include("$(PORT_DIR)/boards/manifest.py")  # noqa: F821 (the build tool defines these)

# The app: firmware/scoreboard/**.py, frozen as scoreboard/...
package("scoreboard")  # noqa: F821

# The boot script. A frozen main.py runs in preference to a /main.py on the filesystem, so the
# scoreboard starts on every boot; mpremote (CR Ctrl-C) or Ctrl-C pressed twice over USB still
# reaches the REPL (one stray Ctrl-C byte does not: see docs/serial-protocol.md).
module("main.py")  # noqa: F821
