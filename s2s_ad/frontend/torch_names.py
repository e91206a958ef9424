"""Frontend: PyTorch's names, recognised by the object, and the NumPy each
one is read as.

Contract: :func:`reads_torch` tells whether a function is written against
``torch`` (it names a torch module or function, or its module imports torch
and it names no NumPy); :func:`torch_name` gives a torch object's public name
(``torch.sum``, ``torch.nn.functional.pad``, ``torch.special.multigammaln``),
found by identity among the attributes of torch's public modules, else from
its ``__module__`` and ``__name__`` (recognition shared with JAX's, in
:mod:`s2s_ad.frontend.library_names`). :data:`DTYPES` and :data:`CONSTANTS`
are torch's dtypes and numbers by their NumPy names. The calls themselves are
rewritten by :mod:`s2s_ad.frontend.torch_forms`.

``logsumexp`` here is NumPy's computation of ``torch.logsumexp``
(:func:`s2s_ad.frontend.library_names.logsumexp`).
"""

from __future__ import annotations

import numpy

from s2s_ad.frontend import library_names
from s2s_ad.frontend.library_names import belongs

TORCH_TOPS = ("torch",)
PUBLIC = ("torch", "torch.nn.functional", "torch.special", "torch.linalg")
"""torch's modules whose functions have public names the rewrite knows."""

DTYPES = {"float64": "float64", "double": "float64", "float32": "float32", "float": "float32",
          "float16": "float16", "half": "float16", "int64": "int64", "long": "int64",
          "int32": "int32", "int": "int32", "int16": "int16", "int8": "int8",
          "uint8": "uint8", "bool": "bool_"}
"""``torch.float64`` → ``np.float64``, ...: torch's dtypes by NumPy's names."""
CONSTANTS = {"pi": "pi", "e": "e", "inf": "inf", "nan": "nan"}


def is_torch(obj) -> bool:
    """Whether ``obj`` is one of torch's modules, functions or objects."""
    return belongs(obj, TORCH_TOPS)


FRESH = frozenset({"torch.eye", "torch.zeros", "torch.ones", "torch.full", "torch.zeros_like",
                   "torch.ones_like", "torch.full_like", "torch.tensor", "torch.stack",
                   "torch.cat", "torch.arange", "torch.linspace"})
"""torch functions that return a new tensor, never (a view of) an argument
(:func:`s2s_ad.frontend.aliasing.returns_fresh` reads a helper's source)."""


def torch_name(obj) -> str | None:
    """``"torch.sum"``, ``"torch.nn.functional.pad"``: the public name of a
    torch object; None for anything that is not torch's."""
    return library_names.public_name(obj, TORCH_TOPS, PUBLIC)


def reads_torch(tree, names: dict, methods=()) -> bool:
    """Whether the function ``tree`` (with globals ``names``) is written
    against torch: it names a torch module or function, or its module
    imports torch and it names no NumPy but calls a tensor method (one of
    ``methods``) on a value (a helper of torch code, ``s.clone()``)."""
    return library_names.reads(tree, names, TORCH_TOPS, methods)


belongs_to_numpy = library_names.belongs_to_numpy
logsumexp = library_names.logsumexp


def detached(x):
    """``x.clone().detach()`` computed by NumPy: a copy, with no derivative
    (the frontend lowers a call to it as the rule ``array.detach``)."""
    return numpy.copy(x)
