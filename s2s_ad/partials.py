"""``functools.partial`` targets: ``s2s_ad.grad(partial(loss, X=X, y=y))``.

A partial is differentiated through the function it wraps: ``wrt`` names or
counts the partial's own parameters (those it leaves to its caller), which
are mapped to the wrapped function's names; the values the partial fixes are
passed on every call, as the partial passes them, and get no gradient (for
``wrt=None``, "every parameter" means every one the partial leaves free)."""

from __future__ import annotations

import functools
import inspect
import numbers
from typing import Callable

from s2s_ad import late_constants
from s2s_ad.pipeline import WrtError


def is_partial(fn) -> bool:
    return isinstance(fn, functools.partial)


def free_names(p: functools.partial) -> list[str]:
    """The partial's parameters, in order, those it fixes by keyword left out."""
    return [n for n in inspect.signature(p).parameters if n not in p.keywords]


def wrt_of(p: functools.partial, wrt):
    """``wrt`` on the partial's parameters, as names of the wrapped function's."""
    names = list(inspect.signature(p).parameters)

    def one(w):
        if isinstance(w, str):
            if w not in names:
                raise WrtError(f"the partial of {p.func.__name__} has no parameter {w!r} "
                               f"(parameters: {', '.join(names)})")
            return w
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) \
                or not -len(names) <= w < len(names):
            raise WrtError(f"wrt={w!r}: the partial of {p.func.__name__} has {len(names)} "
                           "parameter(s)")
        return names[w]

    if wrt is None:
        return tuple(free_names(p))
    if isinstance(wrt, (list, tuple)):
        return tuple(one(w) for w in wrt)
    return one(wrt)


def accepting(transform: Callable) -> Callable:
    """``transform`` (grad, jvp, hvp, ...: ``transform(fn, wrt, **options)``)
    taking a partial too."""
    default = inspect.signature(transform).parameters["wrt"].default

    @functools.wraps(transform)
    def call(fn, wrt=default, *args, **options):
        of = getattr(fn, "__s2s_ad_partial__", None)
        if of is not None:
            # a derivative of a partial (grad(grad(partial(f, y=y)))): the
            # same partial of the derivative of the wrapped function's
            p, made = of
            fn = functools.partial(made, *p.args, **p.keywords)
        if not is_partial(fn):
            return late_constants.seeing(fn, transform(fn, wrt, *args, **options),
                                         lambda: transform(fn, wrt, *args, **options))
        inner = wrt_of(fn, wrt)
        made = late_constants.seeing(fn.func, transform(fn.func, inner, *args, **options),
                                     lambda: transform(fn.func, inner, *args, **options))

        def through(*a, **k):
            return made(*fn.args, *a, **{**fn.keywords, **k})
        through.__name__ = getattr(made, "__name__", "derivative")
        through.__doc__ = made.__doc__
        through.__s2s_ad_partial__ = (fn, made)
        return through
    return call


def vjp_through(vjp: Callable, p: functools.partial, args: tuple, kwargs: dict):
    """``vjp(p, *args)``: the cotangents of the partial's own parameters."""
    inner = list(inspect.signature(p.func).parameters)
    own = list(inspect.signature(p).parameters)
    value, pull = vjp(p.func, *p.args, *args, **{**p.keywords, **kwargs})
    positions = [inner.index(n) for n in own]

    def pull_own(cotangent):
        out = pull(cotangent)
        return tuple(out[i] for i in positions)
    pull_own.__doc__ = pull.__doc__
    return value, pull_own
