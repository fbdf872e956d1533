# What a novuss board takes (docs/board-config.md): the pucks pocketed are counted on buttons
# (own, opp) or by optional sensors in the four corner pockets: a beam, and a colour sensor that
# tells a red puck from a black one and the striker (NV-3).

SENSOR = "none"
BUTTONS = ("confirm", "own", "opp", "foul", "undo", "start", "menu")  # the lines' order
REQUIRED = ("confirm",)
POCKETS = ("1", "2", "3", "4")
COLOUR = ("1", "2", "3", "4")  # pockets that may carry a colour sensor
