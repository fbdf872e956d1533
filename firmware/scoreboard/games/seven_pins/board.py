# What a seven-pins board takes (docs/board-config.md): a tilt switch in each of the seven pins
# (SP-2), buttons for what the switches cannot tell (a carom, a called one, the balls pocketed,
# the fouls, undo, who breaks), and optional beams across the six pockets: object balls
# pocketed (SP-10).

SENSOR = "pins"
BUTTONS = ("confirm", "carom", "called", "pocket", "foul", "undo", "break", "menu")
REQUIRED = ("confirm",)
PINS = ("K", "S1", "S2", "S3", "S4", "M1", "M3")  # tilt line i is pin PINS[i] (rules.PINS)
POCKETS = ("1", "2", "3", "4", "5", "6")
