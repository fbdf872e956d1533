# What a scorepad board takes for this game (docs/scorepad.md): the 4x4 keypad and the OLED at
# the table's edge; the keypad does everything, so no button is needed (a menu button may be
# fitted).

SENSOR = "keypad"
BUTTONS = ("menu",)
REQUIRED = ()
