"""Chalk scoreboard firmware package (runs on MicroPython and CPython)."""
