"""Loader: generated source → a live module, or a file on disk.

Contract: :func:`load` compiles source text into a fresh module object and
registers its text with :mod:`linecache`, so tracebacks and debuggers show
the generated lines. :func:`write` writes a file atomically: a temporary file
in the target folder, then a rename, so a failure never leaves a partial or
clobbered file.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import tempfile
import types


def load(text: str, name: str) -> types.ModuleType:
    filename = shown(text, name)
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(text, filename, "exec"), module.__dict__)
    return module


def shown(text: str, label: str) -> str:
    """A file name for ``text`` (``<s2s-ad label digest>``) under which
    :mod:`linecache` holds its lines, so that tracebacks and debuggers show
    them; compile ``text`` with it."""
    filename = f"<s2s-ad {label} {hashlib.sha1(text.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return filename


def write(text: str, path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".s2s-ad-", suffix=".py", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        # mkstemp creates the file private (0600); give it the mode a plain
        # open() would, or keep the mode of the file it replaces.
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
