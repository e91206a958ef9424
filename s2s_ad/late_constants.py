"""Constants read anew by the derivatives the API returns.

A module-level number, string, bool, ``None`` or list of numbers that a
function reads is inlined in its generated code, and so are the helpers a
global name gives (``act = other_act`` changes what it calls), and a string, bool or
``None`` a bound method reads from its object (``self.mode``,
``self.training``): each is part of the cache key (``s2s_ad.fingerprint``),
and ``s2s_ad.grad(f)`` asked again after it changed makes new code. The
function returned *before* the change must not keep running the old code,
since ``f`` itself reads the global or the attribute on every call (Python's
late binding; ``s2s_ad.vjp`` already sees it). :func:`seeing` puts such a
derivative behind a check that what decided its code is unchanged (each
global name and function's code the fingerprint read:
:func:`s2s_ad.fingerprint.watched`, and the object's static attributes) and
asks for it again when not; for a plain function the check is written out as
the derivative's own ``__call__`` (:class:`_OwnCall`, about 0.04 µs per read). Derivatives of functions
reading no such constant are returned as they are."""

from __future__ import annotations

import inspect
import types
import weakref
from typing import Callable

from s2s_ad import cache, fingerprint, signatures
from s2s_ad.errors import S2SError
from s2s_ad.frontend import methods

_NOT_CONSTANTS = frozenset(("module data", "captured object"))

_memo: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""function -> (its fingerprint, the reads that computed it, whether it inlines
a module constant), valid while the reads are unchanged."""


def _inlines(fp: tuple) -> bool:
    """Does the fingerprint hold a module constant's value ``(name, type, value)``,
    the source of a function of yours besides the first (a helper, which a
    global name gives: `act = other_act` changes what the function calls), or
    a function's defaults (the generated signature repeats them: a function's
    ``__defaults__`` set anew changes what a call without them computes)?"""
    return any(len(e) == 3 and isinstance(e[0], str) and e[0] not in _NOT_CONSTANTS
               for e in fp) or sum(e[0] == "fn" for e in fp) > 1 or any(
        e[0] == "fn" and len(e) > 7 and (e[6] or e[7]) for e in fp)


def _function_watch(fn) -> tuple | None:
    """(the fingerprint, a test that it still holds, whether it inlines a
    constant, the reads the test checks) of a plain function; None where it
    cannot be watched."""
    hit = _memo.get(fn)
    if hit is not None and hit[1]():
        return hit
    fp, reads = fingerprint.watched(fn)
    if reads is None:
        return None
    hit = _memo[fn] = (fp, reads.unchanged, _inlines(fp), reads)
    return hit


_MISSING = object()


def _method_watch(method) -> tuple | None:
    """The same for a bound method: its functions' globals and code, and the
    static attributes (strings, bools, None) and functions it reads from its
    object (a staticmethod called as ``self.sm(x)``: a helper the code calls,
    its globals watched too)."""
    try:
        plan = methods.plan(method)
    except S2SError:
        return None
    watches = [_function_watch(f)
               for f in list(plan.methods.values()) + methods.static_functions(plan)]
    if any(w is None for w in watches):
        return None
    obj, constants = plan.obj, dict(plan.constants)
    tests = [w[1] for w in watches]

    def unchanged() -> bool:
        for test in tests:
            if not test():
                return False
        for name, was in constants.items():
            now = getattr(obj, name, _MISSING)
            if now is not was and (type(now) is not type(was) or now != was):
                return False
        return True
    inlines = any(w[2] for w in watches) or any(
        v is None or isinstance(v, (str, bool, types.FunctionType)) for v in constants.values())
    return fingerprint.fingerprint(method), unchanged, inlines, None


def _watch(base) -> tuple | None:
    try:
        if type(base) is types.FunctionType:
            return _function_watch(base)
        if isinstance(base, types.MethodType) and type(base.__func__) is types.FunctionType:
            return _method_watch(base)
    except TypeError:  # not weakly referable
        return None
    return None


def seeing(fn, made: Callable, again: Callable[[], Callable]) -> Callable:
    """``made`` (the derivative of ``fn`` the API made), or, where ``fn`` (or
    the function a generated ``fn`` came from) inlines a constant, a function
    that runs ``made`` while what decided its code is unchanged and
    ``again()`` (the same API call) once it changed."""
    base = fn
    origin = getattr(fn, "__s2s_ad_origin__", None)
    if isinstance(origin, tuple) and len(origin) > 1:
        base = origin[1]
    static = getattr(fn, "__s2s_ad_static_origin__", None)
    if origin is None and isinstance(static, tuple) and len(static) > 1:
        # grad(grad(f)), f taking a string, None or bool: what f reads decides
        # the code of both derivatives
        base = static[1]
    if not callable(made):
        return made
    hit = _watch(base)
    if hit is None:
        fp = fingerprint.fingerprint(base)
        # one that inlines a constant beside a read the check cannot hold by
        # identity (a dict of arrays, an object): checked by its fingerprint
        return _Fingerprinted(base, made, fp, again) if _inlines(fp) else made
    if not hit[2]:
        return made
    known = _seeing.get(id(made))
    if known is not None and known[0] is made and known[1]._base == base:
        return known[1]  # the same derivative asked again: the same function
    seeing = _OwnCall(base, made, hit[0], hit[1], again)
    seeing._own_call(hit[3])
    _seeing[id(made)] = (made, seeing)
    return seeing


_seeing: dict = {}
"""id of a derivative the API made -> (it, the :class:`Seeing` returned for it),
so that asking again returns the same function, as the cache does; emptied
with the cache (``s2s_ad.clear_cache``)."""
cache._memos.append(_seeing)


class Seeing:
    """A derivative of ``base`` that runs ``made`` while what decided its code
    is unchanged, and asks for it again (``again()``) once that changed.
    Every other attribute is the current derivative's (its source, its
    origin, ...), read when asked, as the code it runs may change."""

    __slots__ = ("_base", "_made", "_fingerprint", "_unchanged", "_again", "_renamed",
                 "__weakref__")
    __s2s_ad_rechecked__ = True
    """(Read by the frontend: a derivative whose code may change between calls,
    which a function it differentiates cannot call; docs/calls.md.)"""

    def __init__(self, base, made, fp, unchanged, again):
        self._base, self._made, self._fingerprint, self._unchanged, self._again = \
            base, made, fp, unchanged, again
        self._renamed: dict = {}

    def _remade(self) -> None:
        """Ask for the derivative again. Its seed may get another name: it is
        named after the returned value's SSA name (``ds_1``), which depends on
        what the code unrolls (a module-level list of numbers grown by one
        item adds one version of ``s``); a call made with the seed's old name
        (ours, passing it on, or the caller's) gives it to the new one."""
        old = self._made
        self._made = self._again()
        before, after = _seeds(self._base, old), _seeds(self._base, self._made)
        if len(before) == len(after) and before != after:
            moved = dict(zip(before, after))
            self._renamed = {k: moved.get(v, v) for k, v in self._renamed.items()}
            self._renamed.update((a, b) for a, b in moved.items() if a != b)
            for name in after:
                self._renamed.pop(name, None)

    def current(self) -> Callable:
        """The derivative for what the globals and the object hold now."""
        if not self._unchanged():
            hit = _watch(self._base)
            if hit is None:  # it cannot be watched any more: asked on every call
                return self._again()
            if hit[0] != self._fingerprint:
                self._remade()
                self._fingerprint = hit[0]
            self._unchanged = hit[1]
            self._own_call(hit[3])
        return self._made

    def _own_call(self, reads) -> None:
        """Nothing for a :class:`Seeing` (see :class:`_OwnCall`)."""

    def __call__(self, *args, **kwargs):
        made = self._made if self._unchanged() else self.current()
        if self._renamed:
            kwargs = {self._renamed.get(k, k): v for k, v in kwargs.items()}
        return made(*args, **kwargs)

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
        return f"<s2s-ad {getattr(self._made, '__name__', 'derivative')} of " \
               f"{getattr(self._base, '__qualname__', self._base)}>"


class _OwnCall(Seeing):
    """A :class:`Seeing` whose class is its own, so that its ``__call__`` can
    be a function written for it: the checks of what decided its code written
    out in one expression over the objects read (held, not behind weak
    references: this derivative keeps the function alive anyway), then the
    derivative called: about 0.4 µs for a function calling a helper, where
    ``Seeing.__call__`` calling the check took 1.2 µs. A failed check goes to
    ``Seeing.__call__``, which asks again and writes the call anew."""

    __slots__ = ()

    def __new__(cls, *args):
        own = type("Seeing", (cls,), {"__slots__": (), "__qualname__": "Seeing"})
        return object.__new__(own)

    def _own_call(self, reads) -> None:
        cls = type(self)
        held = reads.held_strongly() if reads is not None else None
        if held is None or self._renamed:
            # a bound method's check, or an object read is gone; or a seed
            # renamed (Seeing.__call__ gives the old name to the new seed)
            cls.__call__ = Seeing.__call__
            return
        terms, space = held
        check = " and ".join(terms) or "True"
        guard = getattr(self._made, "__s2s_guard__", None)
        space.update(_s2s_made=self._made, _s2s_again=Seeing.__call__)
        if guard is not None and _defaults_fixed(self._base, self._made) \
                and not (set(guard.space) & set(space)) - {"__builtins__"}:
            # the derivative's own check of its arguments' classes, in the same
            # test, and its generated code called directly: one call fewer
            space.update(guard.space)
            made = signatures.with_body(guard.space.get("_s2s_compiled"), "__call__",
                                        f"_s2s_self, {guard.params}", f"{check} and {guard.test}",
                                        f"_s2s_again(_s2s_self, {guard.passed})", space)
            if made is not None:  # the generated code's body in the call itself
                cls.__call__ = made
                return
            text = (f"def __call__(_s2s_self, {guard.params}):\n"
                    f"    if {check} and {guard.test}:\n"
                    f"        return _s2s_compiled({guard.passed})\n"
                    f"    return _s2s_again(_s2s_self, {guard.passed})\n")
        else:
            text = ("def __call__(_s2s_self, *args, **kwargs):\n"
                    f"    if {check}:\n"
                    "        return _s2s_made(*args, **kwargs)\n"
                    "    return _s2s_again(_s2s_self, *args, **kwargs)\n")
        cls.__call__ = signatures._define("__call__", text, space) or Seeing.__call__


class _Fingerprinted(Seeing):
    """A :class:`Seeing` whose check is the fingerprint itself, computed on
    every call (about 3–15 µs): for a function that inlines a constant and
    also reads something the identity check cannot hold (a module's dict of
    arrays, a tuple default among keyword-only ones of an object...). Asked
    for again when the fingerprint changed."""

    __slots__ = ()

    def __init__(self, base, made, fp: tuple, again):
        super().__init__(base, made, fp, self._same, again)

    def _same(self) -> bool:
        return fingerprint.fingerprint(self._base) == self._fingerprint

    def current(self) -> Callable:
        now = fingerprint.fingerprint(self._base)
        if now != self._fingerprint:
            self._remade()
            self._fingerprint = now
        return self._made


def _seeds(base, made) -> list[str]:
    """The keyword-only parameters of the derivative ``made`` that are no
    parameters of ``base``: its seeds (``ds_1``), in order."""
    try:
        own = inspect.signature(base).parameters
        params = inspect.signature(made).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in own]


def _defaults_fixed(base, made) -> bool:
    """Does no parameter of ``made`` that is one of ``base`` have a default?
    (A call binding the derivative's own signature would pass a default of
    ``base``'s on, explicitly, to the code asked for again after
    ``base.__defaults__`` changed; s2s-ad's own keywords, ``dout``, keep theirs.)"""
    try:
        own = inspect.signature(base).parameters
        params = inspect.signature(made).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.name in own and p.default is not inspect.Parameter.empty for p in params)
