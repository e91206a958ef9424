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
from s2s_ad.verify import Verdict, check

__all__ = ["__version__", "checkpoint", "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "jacobian", "jvp_source", "hvp", "hessian", "gradient_source", "vjp_source",
           "source_of", "check", "Verdict", "lower", "graph_dot", "explain", "custom_vjp", "defvjp",
           "cache_info", "clear_cache", "CacheInfo", "S2SError", "SourceError", "TargetError",
           "WrtError", "RuleError"]
