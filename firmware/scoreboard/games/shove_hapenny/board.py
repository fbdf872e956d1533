# What a shove ha'penny board takes (docs/board-config.md): the peg holes of the nine beds, read
# through chained 74HC165s (SH-2), and buttons for what the pegs cannot tell: the end of a turn,
# a void turn (SH-17), one played out of turn (SH-18), undo and a claim (SH-15).

SENSOR = "pegs"
BUTTONS = ("done", "void", "out_of_turn", "undo", "claim", "menu")  # the lines' order
REQUIRED = ("done",)
