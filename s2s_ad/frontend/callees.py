"""Helpers lowered at their call sites, once per lowering session.

Contract: while a function is lowered, each call to a user function lowers
that function for the call's arguments (:meth:`lower_callee` of the
lowering), so the caller learns what it returns — a dict, a NamedTuple, a
dataclass or nested tuples, read leaf by leaf (:mod:`s2s_ad.frontend.passing`)
— and :func:`s2s_ad.frontend.calls.collect` reuses that lowering instead of
lowering the helper again. :func:`lower_once` keeps one lowering per
*specialisation* (the function, the parameters receiving arrays, the static
values, the structures passed whole) for the whole session, the outermost
:func:`session`; a specialisation being lowered (recursion) or whose
lowering fails gives None: ``collect`` lowers it again and reports the
failure where it belongs (the helper's own line, with the call that passed
an array).

Before → after, for ``d = stats(x)`` with ``stats`` returning ``{"s": ..., "p": ...}``::

    lower_once((stats, ...), ...)  ->  func stats(x): ... returns ("dict", ...)
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import passing
from s2s_ad.frontend.param_uses import SequenceParameter

_STATE: dict = {"depth": 0, "done": {}, "active": set(), "failed": {}}


@contextmanager
def session():
    """One lowering (and every helper it lowers at its call sites)."""
    _STATE["depth"] += 1
    try:
        yield
    finally:
        _STATE["depth"] -= 1
        if not _STATE["depth"]:
            _STATE["done"].clear()
            _STATE["failed"].clear()


def lower_once(fixed: tuple, lower):
    """``lower()`` once per specialisation ``fixed`` in this session, or None
    (while it is being lowered, or when it fails)."""
    done, active = _STATE["done"], _STATE["active"]
    if fixed in done:
        return done[fixed]
    if fixed in active or any(a[0] is fixed[0] and passing.spec_size(a[3]) <= passing.spec_size(
            fixed[3]) and a[3] for a in active):
        # recursion: the same specialisation, or one passing a structure no
        # smaller than an enclosing call of the function did (collect says why)
        return None
    active.add(fixed)
    try:
        func = lower()
    except SourceError as problem:
        func = None
        _STATE["failed"][fixed] = problem
    finally:
        active.discard(fixed)
    done[fixed] = func
    return func


def recursing(op: ir.Op) -> bool:
    """Is the call ``op`` to a function being lowered (a recursion), whose
    lowering the caller cannot read yet?"""
    return any(a[0] is op.callee.fn for a in _STATE["active"])


def failure(fixed: tuple) -> SourceError | None:
    """Why lowering the specialisation ``fixed`` failed in this session."""
    return _STATE["failed"].get(fixed)


def for_call(lo, op: ir.Op, lower) -> ir.Function | None:
    """The callee of the call ``op`` lowered for its arguments by
    ``lower(fixed)`` (once per session), kept on the op for the call graph;
    why it failed is kept by the lowering ``lo`` for the call's result."""
    fixed = (op.callee.fn, passing.array_arguments(op),
             tuple(passing.static_arguments(op).items()), op.callee.passed)
    op.callee.lowered_for = fixed
    op.callee.lowered = lower_once(fixed, lambda: lower(fixed))
    if op.callee.lowered is None and failure(fixed) is not None:
        # the caller reading the result as a list would otherwise be told it is a number
        lo.call_failures[id(op.out)] = passed_on(op, getattr(lo, "params_so_far", ()),
                                                 lo.src.fn, failure(fixed), lo.src)
    return op.callee.lowered


def passed_on(op: ir.Op, params, fn, exc: SourceError, src) -> SourceError:
    """``exc``, when it says the callee of ``op`` uses its parameter as a
    list not given a length, said instead of the caller's own parameter
    (``params``: the caller ``fn``'s, ``src`` its source) where ``op`` passes
    that parameter on unchanged: so that the function differentiated, told
    which of its parameters is a list, lowers it as a list of any length (or
    asks for its length). ``exc`` itself otherwise."""
    if not isinstance(exc, SequenceParameter) or op.callee.passed \
            or getattr(exc, "owner", None) is not op.callee.fn:
        return exc
    try:
        names = list(inspect.signature(op.callee.fn).parameters)
    except (TypeError, ValueError):
        return exc
    k = names.index(exc.param) if exc.param in names else len(op.args)
    arg = op.args[k] if k < len(op.args) else None
    kinds = ("float", "array") if getattr(exc, "array_list", False) else ("float",)
    if not (isinstance(arg, ir.Value) and arg.kind in kinds
            and any(p.value is arg for p in params)):
        return exc
    out = SequenceParameter(
        arg.var, f"parameter {arg.var!r} is passed to `{op.callee.name}`, which uses it as a "
        f"list or tuple ({exc.file}:{exc.line}); give its length (lengths={{{arg.var!r}: N}}, "
        f"--length {arg.var}=N), or say it receives a NumPy array (arrays=[{arg.var!r}], "
        f"--array {arg.var}), or call the gradient with a list or an array, which does this "
        f"for you (for a list of dicts, tuples or other structures, or give an example of it: "
        f"--like {arg.var}=EXAMPLE)", op.loc.file, op.loc.line, op.loc.col, src.line(op.loc.line))
    out.owner = fn
    return out
