"""Module constants read anew by the functions the API returns.

A module-level number, string, bool, ``None`` or list of numbers that a
function reads is inlined in its generated code (part of the cache key:
``s2s_ad.fingerprint``). ``s2s_ad.grad(f)`` asked again after the constant
changed makes new code; the function returned *before* the change must not
keep running the old code, since ``f`` itself reads the global on every call
(Python's late binding; ``s2s_ad.vjp`` already sees it). :func:`seeing` puts
such a function behind a check of what the fingerprint read (each global
name, each function's code: :func:`s2s_ad.fingerprint.watched`, about 0.2 µs),
and asks for the derivative again when it changed. Functions reading no such
constant are returned as they are."""

from __future__ import annotations

import inspect
import types
import weakref
from typing import Callable

from s2s_ad import cache, fingerprint

_NOT_CONSTANTS = frozenset(("module data", "captured object"))

_memo: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""function -> (its fingerprint, the reads that computed it, whether it inlines
a module constant), valid while the reads are unchanged."""


def _inlines(fp: tuple) -> bool:
    """Does the fingerprint hold a module constant's value ``(name, type, value)``?"""
    return any(len(e) == 3 and isinstance(e[0], str) and e[0] not in _NOT_CONSTANTS
               for e in fp)


def _watch(fn) -> tuple | None:
    hit = _memo.get(fn)
    if hit is not None and hit[1].unchanged():
        return hit
    fp, reads = fingerprint.watched(fn)
    if reads is None:
        return None
    hit = _memo[fn] = (fp, reads, _inlines(fp))
    return hit


def seeing(fn, made: Callable, again: Callable[[], Callable]) -> Callable:
    """``made`` (the derivative of ``fn`` the API made), or, where ``fn`` (or
    the function a generated ``fn`` came from) inlines a module constant, a
    function that runs ``made`` while what its fingerprint read is unchanged
    and ``again()`` (the same API call) once it changed."""
    base = fn
    origin = getattr(fn, "__s2s_ad_origin__", None)
    if isinstance(origin, tuple) and len(origin) > 1:
        base = origin[1]
    if type(base) is not types.FunctionType or not callable(made):
        return made
    try:
        hit = _watch(base)
    except TypeError:  # not weakly referable
        return made
    if hit is None or not hit[2]:
        return made
    known = _seeing.get(id(made))
    if known is not None and known[0] is made and known[1]._base is base:
        return known[1]  # the same derivative asked again: the same function
    seeing = Seeing(base, made, hit[0], hit[1], again)
    _seeing[id(made)] = (made, seeing)
    return seeing


_seeing: dict = {}
"""id of a derivative the API made -> (it, the :class:`Seeing` returned for it),
so that asking again returns the same function, as the cache does; emptied
with the cache (``s2s_ad.clear_cache``)."""
cache._memos.append(_seeing)


class Seeing:
    """A derivative of ``base`` that runs ``made`` while what ``base``'s
    fingerprint read is unchanged, and asks for it again (``again()``) once
    that changed. Every other attribute is the current derivative's (its
    source, its origin, ...), read when asked, as the code it runs may
    change."""

    __slots__ = ("_base", "_made", "_fingerprint", "_reads", "_again", "__weakref__")

    def __init__(self, base, made, fp, reads, again):
        self._base, self._made, self._fingerprint, self._reads, self._again = \
            base, made, fp, reads, again

    def current(self) -> Callable:
        """The derivative for what the globals hold now."""
        if not self._reads.unchanged():
            now, reads = fingerprint.watched(self._base)
            if reads is None:  # it cannot be watched any more: asked on every call
                return self._again()
            if now != self._fingerprint:
                self._made, self._fingerprint = self._again(), now
            self._reads = reads
        return self._made

    def __call__(self, *args, **kwargs):
        if self._reads.unchanged():
            return self._made(*args, **kwargs)
        return self.current()(*args, **kwargs)

    def __getattr__(self, name):
        if name in Seeing.__slots__:  # not set yet (a copy being made)
            raise AttributeError(name)
        if name == "__wrapped__":  # the code itself, as the derivative's own __wrapped__
            made = self.current()
            return getattr(made, "__wrapped__", made)
        return getattr(self.current(), name)

    @property
    def __doc__(self):
        return getattr(self.current(), "__doc__", None)

    @property
    def __signature__(self):
        return inspect.signature(self.current())

    def __repr__(self):
        return f"<s2s-ad {getattr(self._made, '__name__', 'derivative')} of {self._base.__qualname__}>"
