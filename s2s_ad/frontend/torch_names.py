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

``logsumexp`` here is NumPy's computation of ``torch.logsumexp``: the
rewrite calls it, and the frontend lowers a call to it as it lowers
``scipy.special.logsumexp`` (``m + log(sum(exp(x - m)))``), so neither the
frontend nor the generated code needs SciPy for it.
"""

from __future__ import annotations

import ast
import sys
import types

import numpy

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

_NAMES: dict = {}


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
    if not is_torch(obj):
        return None
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    for module_name in PUBLIC:
        module = sys.modules.get(module_name)
        if module is None or not belongs(module, TORCH_TOPS):
            continue
        found = _attributes(module).get(id(obj))
        if found is not None:
            return f"{module_name}.{found}"
    name = getattr(obj, "__name__", None)
    return f"{obj.__module__}.{name if isinstance(name, str) else '?'}"


def _attributes(module) -> dict:
    """id(attribute) -> its name, for the public attributes of ``module``."""
    key = id(module)
    if key not in _NAMES:
        found = {}
        for name in dir(module):
            if not name.startswith("_"):
                try:
                    found.setdefault(id(getattr(module, name)), name)
                except Exception:  # noqa: BLE001 (a lazy attribute that fails to load)
                    continue
        _NAMES[key] = found
    return _NAMES[key]


def reads_torch(tree, names: dict, methods=()) -> bool:
    """Whether the function ``tree`` (with globals ``names``) is written
    against torch: it names a torch module or function, or its module
    imports torch and it names no NumPy but calls a tensor method (one of
    ``methods``) on a value (a helper of torch code, ``s.clone()``)."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if any(is_torch(names.get(n)) for n in used):
        return True
    if not any(is_torch(v) for v in names.values() if isinstance(v, types.ModuleType)):
        return False
    if any(belongs_to_numpy(names.get(n)) for n in used):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in methods and not (isinstance(n.func.value, ast.Name)
                                                   and n.func.value.id in names)
               for n in ast.walk(tree))


def belongs_to_numpy(obj) -> bool:
    """Whether ``obj`` is NumPy or SciPy (a module or a function of theirs)."""
    return obj is not None and (obj is numpy or belongs(obj, ("numpy", "scipy")))


def detached(x):
    """``x.clone().detach()`` computed by NumPy: a copy, with no derivative
    (the frontend lowers a call to it as the rule ``array.detach``)."""
    return numpy.copy(x)


def logsumexp(a, axis=None, keepdims=False):
    """``torch.logsumexp(a, dim, keepdim)`` computed by NumPy (what the
    frontend lowers a call of this function to)."""
    a = numpy.asarray(a)
    top = numpy.max(a, axis=axis, keepdims=True)
    top = numpy.where(numpy.isfinite(top), top, 0.0)
    out = numpy.log(numpy.sum(numpy.exp(a - top), axis=axis, keepdims=True)) + top
    return out if keepdims else numpy.squeeze(out, axis=axis)
