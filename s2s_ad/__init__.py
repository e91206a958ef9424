"""s2s-ad: source-to-source reverse-mode automatic differentiation for Python.

>>> import s2s_ad
>>> def f(a, x):
...     b = x * x
...     return a * b
>>> s2s_ad.grad(f, wrt=("a", "x"))(3.0, 2.0)   # doctest: +SKIP
(4.0, 12.0)
"""

from s2s_ad._version import __version__
from s2s_ad.api import (CacheInfo, checkpoint, WrtError, cache_info, clear_cache, explain, gradient_source, grad, graph_dot, hessian, hvp, jacfwd, jacobian, jacrev, jvp, jvp_source, lower, source_of, value_and_grad, vjp, vjp_source)
from s2s_ad.errors import S2SError, SourceError, TargetError
from s2s_ad.rules.user import RuleError, custom_vjp, defvjp


def __getattr__(name):
    """``check`` and ``Verdict`` come from :mod:`s2s_ad.verify`, imported on
    first use: it imports sympy, which generating a gradient never needs (the
    ``s2s-ad grad`` command starts in about half the time without it)."""
    if name in ("check", "Verdict"):
        from s2s_ad import verify
        return getattr(verify, name)
    raise AttributeError(f"module 's2s_ad' has no attribute {name!r}")

__all__ = ["__version__", "checkpoint", "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "jacobian", "jvp_source", "hvp", "hessian", "gradient_source", "vjp_source",
           "source_of", "check", "Verdict", "lower", "graph_dot", "explain", "custom_vjp", "defvjp",
           "cache_info", "clear_cache", "CacheInfo", "S2SError", "SourceError", "TargetError",
           "WrtError", "RuleError"]
