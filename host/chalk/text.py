"""Text from a board, a match log or an archive on its way to the terminal or a spreadsheet.

Player names and log lines come from outside: an escape sequence in a name must not reach the
terminal raw (it could clear the screen, retitle the window or hide text). printable() shows
control characters (and the bidi overrides that reorder text) as escapes instead. csv_safe()
writes CSV whose text cells a spreadsheet cannot run as formulas (OWASP: CSV injection).
"""

_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def _escape(ch):
    o = ord(ch)
    if o < 0x20 or 0x7F <= o < 0xA0:
        return "\\x%02x" % o
    if o in _BIDI:
        return "\\u%04x" % o
    return ch


def printable(text, keep_newlines=False):
    """`text` with every control character escaped (newlines kept if asked)."""
    text = str(text)
    if text.isprintable() and not any(ord(c) in _BIDI for c in text):
        return text
    if keep_newlines:
        return "\n".join(printable(line) for line in text.split("\n"))
    return "".join(_escape(c) for c in text)


def control_chars(text):
    """The control characters in `text` (for refusing them in names), as escapes."""
    return sorted({_escape(c) for c in str(text) if _escape(c) != c})


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection, OWASP):
# such a text cell gets a leading ' so it stays text. Numbers are left alone (-6 is a number).
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_cell(value):
    """One CSV cell from outside data made safe: control characters (and bidi overrides)
    escaped, a formula-looking text neutralised with a leading quote (OWASP's advice)."""
    if value is None:
        return ""
    if type(value) in (int, float):
        return value
    text = printable(value)
    if text.startswith(_FORMULA):
        text = "'" + text
    return text


def csv_safe(rows):
    """Rows as CSV text (one line a row, \\n), every cell through csv_cell()."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in rows:
        w.writerow([csv_cell(c) for c in row])
    return buf.getvalue()
