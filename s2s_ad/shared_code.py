"""Generated code shared by functions with one fingerprint, each its own origin.

The cache hands one generated function to every function whose fingerprint
is the same: closures from one factory capturing the same strings, bools or
``None`` (``make("sq")`` called twice). The code is the same, but where it
came from (``__s2s_ad_origin__``, which a second derivative differentiates
again) is the function asked about: ``grad(grad(f2))`` must read ``f2``'s
captured values as they are now, not those of the closure the code was first
made for (which may have changed since: a wrong second derivative).
"""

from __future__ import annotations

from typing import Callable

_COPIED = ("__name__", "__qualname__", "__doc__", "__s2s_ad_source__", "__s2s_ad_by_shape__")


def for_function(fn: Callable, compiled: Callable) -> Callable:
    """``compiled`` where it came from ``fn`` (or is not a gradient that
    says where it came from), else a function calling it whose origin is
    ``fn``."""
    origin = getattr(compiled, "__s2s_ad_origin__", None)
    if not isinstance(origin, tuple) or len(origin) < 2 or origin[1] is fn:
        return compiled

    def call(*args, **kwargs):
        return compiled(*args, **kwargs)

    for name in _COPIED:
        if hasattr(compiled, name):
            setattr(call, name, getattr(compiled, name))
    # the code itself: its signature, and what a derivative of it reads
    call.__s2s_ad_compiled__ = getattr(compiled, "__s2s_ad_compiled__", compiled)
    call.__wrapped__ = getattr(compiled, "__wrapped__", compiled)
    call.__s2s_ad_origin__ = (origin[0], fn, *origin[2:])
    return call
