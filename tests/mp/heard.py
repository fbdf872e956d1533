# What a board's write() sent, as frames (the scripts that play a simulated host).


def frames_in(lines, s):
    """Yield the frames (decoded) in `s`, what the board wrote, fed to `lines` (a
    frames.Lines); a line that is no frame (REPL text, a corrupt one) is skipped."""
    from scoreboard import frames

    for line in lines.feed(s.encode() if type(s) is str else s):
        try:
            f = frames.decode(line)
        except (frames.Corrupt, frames.WrongVersion):
            continue
        if f is not None:
            yield f
