"""chalk: the host tool for Chalk scoreboards (replay, and more to come)."""

__version__ = "0.1.0"
