# The keypad checks of tests/mp/keypad_cases.py on MicroPython.
import keypad_cases

keypad_cases.run_cases()
