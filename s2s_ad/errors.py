"""Errors that point at the user's source, compiler style::

    examples/bad.py:3:9: error: `try` is not supported; move it outside the function you differentiate
        y = try_this(x)
            ^
"""

from __future__ import annotations


class S2SError(Exception):
    """Base class of every error s2s-ad raises on purpose."""


class SourceError(S2SError):
    """The user's code is outside what s2s-ad can differentiate, or cannot be
    found or parsed. ``str(err)`` is ``file:line:col: error: message``, then the
    offending line and a caret under the column."""

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.col = col  # 0-based, in characters
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self) -> str:
        if self.line <= 0:
            where = "" if self.file == "<unknown>" else f"{self.file}: "
            return f"{where}error: {self.message}"
        head = f"{self.file}:{self.line}:{self.col + 1}: error: {self.message}"
        if self.source_line is None:
            return head
        text = self.source_line.rstrip("\n").expandtabs(1)
        return f"{head}\n    {text}\n    {' ' * self.col}^"


class IntegerUse(SourceError):
    """The refusal of a gradient with respect to a parameter the code uses as
    an integer (a ``range`` bound, an index, a size), located where it is so
    used, with ``use`` saying how (``"a `range` bound"``, ``"passed to `h`,
    whose `n` is used as an integer"``) for the tools that report it
    (:func:`s2s_ad.verify.check`)."""

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None, use: str = "used as an integer"):
        self.use = use
        super().__init__(message, file, line, col, source_line)

    @classmethod
    def at(cls, err: SourceError, use: str) -> "IntegerUse":
        """``err`` (a located refusal) with its ``use``."""
        return cls(err.message, err.file, err.line, err.col, err.source_line, use)


class TargetError(S2SError):
    """A command-line target (``file.py:fn``, ``pkg.mod.fn``) that does not
    name a Python function with source."""
