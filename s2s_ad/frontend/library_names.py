"""Frontend: recognising another array library's modules and functions by
the object, shared by the JAX reading (:mod:`s2s_ad.frontend.jax_names`), the
PyTorch reading (:mod:`s2s_ad.frontend.torch_names`) and the TensorFlow
reading (:mod:`s2s_ad.frontend.tf_names`).

Contract: recognition is by the resolved object, never by the import's text.
A module belongs to a library when its ``__name__``'s first part is one of
the library's top-level packages (``jax.numpy`` → ``jax``, ``torch.special``
→ ``torch``); a function, class or other object when its ``__module__``'s
first part is (``torch.sum.__module__ == "torch"``). :func:`owner` tells
whether an object is a given module's attribute of a given name (found in
``sys.modules``, or by its ``__module__``); :func:`public_name` finds an
object's public name among a library's public modules; :func:`reads` tells
whether a function is written against a library. :func:`logsumexp` is
NumPy's computation of a library's ``logsumexp`` (``torch.logsumexp``,
``tf.reduce_logsumexp``): the rewrites call it, and the frontend lowers a call
to it as it lowers ``scipy.special.logsumexp`` (``m + log(sum(exp(x - m)))``),
so neither the frontend nor the generated code needs SciPy for it.

>>> import math
>>> belongs(math, ("math",)), belongs(math.sin, ("numpy",))
(True, False)
"""

from __future__ import annotations

import ast
import sys
import types

import numpy
from s2s_ad.syntax_walk import walk

LIBRARY_MODULES = {"math", "numpy", "builtins", "functools", "operator", "scipy", "s2s_ad",
                   "jax", "autograd", "torch", "tensorflow"}
"""The top-level packages whose functions s2s-ad reads as primitives or
library forms, never from their source (and whose attributes are not a
user's module data)."""


def belongs(obj, tops: tuple) -> bool:
    """Whether ``obj`` (a module, function or other object) comes from one of
    the top-level packages ``tops``."""
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", "") or ""
    else:
        name = getattr(obj, "__module__", "") or ""
    return isinstance(name, str) and name.split(".")[0] in tops


def owner(obj, name: str, module_name: str) -> bool:
    """Whether ``obj`` is the attribute ``name`` of the module ``module_name``."""
    module = sys.modules.get(module_name)
    if module is not None and getattr(module, name, None) is obj:
        return True
    return getattr(obj, "__module__", None) == module_name


_NAMES: dict = {}


def public_name(obj, tops: tuple, modules: tuple, strip=lambda name: name) -> str | None:
    """``"torch.sum"``, ``"tensorflow.math.log"``: the public name of a
    library's object, found by identity among the attributes of the library's
    public ``modules`` (``strip`` turns a module's ``__name__`` into its public
    path), else from its ``__module__`` and ``__name__``; None for anything
    that is not the library's."""
    if not belongs(obj, tops):
        return None
    if isinstance(obj, types.ModuleType):
        return strip(obj.__name__)
    for module_name in modules:
        module = sys.modules.get(module_name)
        if module is None or not belongs(module, tops):
            continue
        found = _attributes(module).get(id(obj))
        if found is not None:
            return f"{strip(module_name)}.{found}"
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


def reads(tree, names: dict, tops: tuple, methods=()) -> bool:
    """Whether the function ``tree`` (with globals ``names``) is written
    against the library ``tops``: it names one of its modules or functions,
    or its module imports the library and it names no NumPy but calls one of
    the library's tensor ``methods`` on a value (a helper of such code,
    ``s.clone()``, ``t.get_shape()``)."""
    used = {n.id for n in walk(tree) if isinstance(n, ast.Name)}
    if any(belongs(names.get(n), tops) for n in used if names.get(n) is not None):
        return True
    if not any(belongs(v, tops) for v in names.values() if isinstance(v, types.ModuleType)):
        return False
    if any(belongs_to_numpy(names.get(n)) for n in used):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in methods and not (isinstance(n.func.value, ast.Name)
                                                   and n.func.value.id in names)
               for n in walk(tree))


RANDOM_DRAWS = ("random numbers drawn inside the function differentiated are not supported "
                "(each call would draw others): draw them outside it and pass them in as an "
                "argument (`eps = rs.randn(n, d)`, then `loss(params, eps)`)")
"""The refusal of a random draw (a RandomState, a Generator, ``np.random``)."""
RANDOM_METHODS = frozenset(m for cls in (numpy.random.RandomState, numpy.random.Generator)
                           for m in dir(cls) if not m.startswith("_")) \
    - {"bit_generator", "get_state", "set_state", "seed", "spawn"}
"""The methods of NumPy's random states and generators that draw numbers."""


def is_random(obj) -> bool:
    """Whether ``obj`` is NumPy's random state, generator, or a function or
    method drawing from one (``np.random.randn``, ``rs.normal``)."""
    owner_ = getattr(obj, "__self__", None)
    return isinstance(obj, (numpy.random.RandomState, numpy.random.Generator)) \
        or isinstance(owner_, (numpy.random.RandomState, numpy.random.Generator)) \
        or (getattr(obj, "__module__", None) or "").startswith("numpy.random")


def belongs_to_numpy(obj) -> bool:
    """Whether ``obj`` is NumPy or SciPy (a module or a function of theirs)."""
    return obj is not None and (obj is numpy or belongs(obj, ("numpy", "scipy")))


def logsumexp(a, axis=None, keepdims=False):
    """A library's ``logsumexp(a, axis, keepdims)`` computed by NumPy (what
    the frontend lowers a call of this function to)."""
    a = numpy.asarray(a)
    top = numpy.max(a, axis=axis, keepdims=True)
    top = numpy.where(numpy.isfinite(top), top, 0.0)
    out = numpy.log(numpy.sum(numpy.exp(a - top), axis=axis, keepdims=True)) + top
    return out if keepdims else numpy.squeeze(out, axis=axis)
