"""s2s-ad: source-to-source reverse-mode automatic differentiation for Python.

>>> import s2s_ad
>>> def f(a, x):
...     b = x * x
...     return a * b
>>> s2s_ad.grad(f, wrt=("a", "x"))(3.0, 2.0)   # doctest: +SKIP
(4.0, 12.0)
"""

from ._version import __version__
from .api import (WrtError, explain, gradient_source, grad, graph_dot, lower, source_of,
                  value_and_grad)
from .errors import S2SError, SourceError, TargetError
from .verify import Verdict, check

__all__ = ["__version__", "grad", "value_and_grad", "gradient_source", "source_of", "check",
           "Verdict", "lower", "graph_dot", "explain", "S2SError", "SourceError", "TargetError", "WrtError"]
