"""The one error type chalk shows to a user: `chalk: message`, a hint, a non-zero exit."""


class ChalkError(Exception):
    def __init__(self, message, hint=None, code=1):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code


class NotFound(Exception):
    """A page or API path of a web app (chalk/web.py, chalk/leagueweb.py) names nothing there:
    its app answers 404 with `text` (JSON under /api/, a page elsewhere)."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text
