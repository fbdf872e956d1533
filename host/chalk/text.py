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
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8, kept by Python as a surrogate
        return "\\x%02x" % (o - 0xDC00)
    if 0xD800 <= o <= 0xDFFF:
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


def text_problem(text):
    """Why `text` (a name, from a terminal or a web request) cannot go to a board, or None.

    A name is any Unicode text; what is refused: bytes that were not UTF-8 (Python keeps them
    as lone surrogates, U+DC80..U+DCFF: a terminal set to Latin-1 typing "Zoë"), any other
    lone surrogate (only a hostile or broken client sends one), and control characters (an
    escape sequence would reach every terminal and screen that shows the name). Bidi controls
    are text: terminals are shown them escaped (printable) and pages isolate them (isolate)."""
    text = str(text)
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            return ("byte 0x%02x is not UTF-8 text (is the terminal set to UTF-8? `locale` "
                    "should say UTF-8)" % (o - 0xDC00))
        if 0xD800 <= o <= 0xDFFF:
            return "U+%04X is half of a character (a lone surrogate), not text" % o
    bad = sorted({_escape(c) for c in text if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0})
    if bad:
        return "control characters (%s) are not allowed in a name" % ", ".join(bad)
    return None


# Bidi classes that reorder the text around them: explicit embeddings, overrides and isolates,
# and right-to-left letters (whose neutral neighbours follow them).
_REORDERS = ("R", "AL", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI")
FSI, PDI = "\u2068", "\u2069"


def isolate(name):
    """`name` as a bidi isolate (FSI ... PDI), when it holds anything that could reorder the
    text around it: a right-to-left override in a player's name must not reverse the rest of
    the line it is quoted in. A PDI in the name that closes nothing opened inside it is dropped
    (it would end the isolate early); the closing PDI ends every embedding the name opened."""
    import unicodedata

    name = str(name)
    if not any(unicodedata.bidirectional(c) in _REORDERS for c in name):
        return name
    out, depth = [], 0
    for c in name:
        if c in "\u2066\u2067\u2068":
            depth += 1
        elif c == PDI:
            if not depth:
                continue
            depth -= 1
        out.append(c)
    return FSI + "".join(out) + PDI * (depth + 1)


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
