"""What you differentiate: a function, a closure, or a bound method.

Contract: :func:`locate` is :func:`s2s_ad.frontend.source.locate` for the
function given to ``grad``/``vjp``/the CLI, where a bound method is lifted
first (:mod:`s2s_ad.frontend.methods`); :func:`captured_values` gives the
data its gradient takes besides its parameters (a closure's captured
numbers and arrays, a method's ``self`` attributes), read now.
"""

from __future__ import annotations

from s2s_ad.frontend import methods, source


def locate(fn) -> source.Source:
    if methods.is_bound(fn):
        return methods.lift(fn).__s2s_source__
    return source.locate(fn)


def captured_values(fn) -> dict:
    if methods.is_bound(fn):
        return methods.attribute_values(fn)
    return source.captured_values(fn)
