"""The one error type chalk shows to a user: `chalk: message`, a hint, a non-zero exit."""


class ChalkError(Exception):
    def __init__(self, message, hint=None, code=1):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code
