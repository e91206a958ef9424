"""The source lines of a function or code object, as :mod:`inspect` gives them, read faster.

``inspect.getsourcelines`` looks for the module of the object on every call
(``inspect.getmodule`` walks ``sys.modules`` for a file it has not seen, about
a millisecond) and tokenizes the file from the function's first line to find
where it ends. s2s-ad reads the same functions many times per transform (the
target, its helpers, s2s-ad's own pairs read back): here the lines come from
:mod:`linecache` directly (checked against the file first, as ``inspect``
does) and a function's block is kept while the file's cached lines are the
same object (``linecache`` makes a new list when the file changed). Anything
this path does not cover (a wrapper, a class, a file ``linecache`` cannot
read) goes to :mod:`inspect`, which raises as it would.
"""

from __future__ import annotations

import inspect
import linecache
import os
import re
import types

_START = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")
"""The line a code object's source starts on, as ``inspect.findsource`` looks for it."""

_blocks: dict = {}
"""(file, first line index) -> (the file's cached lines, the block starting there)."""


def _plain(obj) -> tuple[types.CodeType, dict | None] | None:
    """(code, module globals) of a plain function or code object of a readable
    file, else None."""
    if type(obj) is types.FunctionType:
        if getattr(obj, "__wrapped__", None) is not None:
            return None
        return obj.__code__, obj.__globals__
    if type(obj) is types.CodeType:
        return obj, None
    return None


def _file_lines(code: types.CodeType, module_globals) -> list[str] | None:
    file = code.co_filename
    if file not in linecache.cache:
        if file.startswith("<") or not os.path.exists(file):
            return None
    linecache.checkcache(file)
    lines = linecache.getlines(file, module_globals)
    return lines or None


def file_lines(obj) -> list[str]:
    """The lines of the file ``obj`` is defined in (``inspect.findsource(obj)[0]``)."""
    plain = _plain(obj)
    lines = _file_lines(*plain) if plain is not None else None
    if lines is None:
        return inspect.findsource(obj)[0]
    return lines


def lines(obj) -> tuple[list[str], int]:
    """``inspect.getsourcelines(obj)``: the lines of ``obj``'s definition and
    the number of the first."""
    plain = _plain(obj)
    all_lines = _file_lines(*plain) if plain is not None else None
    if all_lines is None:
        return inspect.getsourcelines(obj)
    lnum = plain[0].co_firstlineno - 1
    while lnum > 0:
        if lnum >= len(all_lines):
            raise OSError("lineno is out of bounds")
        if _START.match(all_lines[lnum]):
            break
        lnum -= 1
    key = (plain[0].co_filename, lnum)
    hit = _blocks.get(key)
    if hit is None or hit[0] is not all_lines:
        if len(_blocks) >= 4096:
            _blocks.clear()
        hit = _blocks[key] = (all_lines, inspect.getblock(all_lines[lnum:]))
    return list(hit[1]), lnum + 1


def text(obj) -> str:
    """``inspect.getsource(obj)``."""
    return "".join(lines(obj)[0])
