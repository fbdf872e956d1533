# What a five-pins board takes (docs/board-config.md): a tilt switch in each of the five pins
# (FP-2, FP-18) and buttons for what the switches cannot tell: the carom (FP-10), the fouls and
# the rulings (the foul list), undo and who breaks (FP-7).

SENSOR = "pins"
BUTTONS = ("confirm", "carom3", "carom4", "foul", "undo", "break", "menu")  # the lines' order
REQUIRED = ("confirm",)
PINS = ("1", "2", "3", "4", "C")  # tilt line i is pin PINS[i]: the rules' order (rules.PINS)
