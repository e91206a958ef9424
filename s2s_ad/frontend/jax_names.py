"""Frontend: JAX's NumPy API read as NumPy (``jax.numpy``, ``jax.scipy.special``).

Contract: :func:`numpy_view` takes a function's globals and returns them with
every JAX (or autograd) module and function that has a NumPy twin replaced by
that twin: ``jnp`` (the module ``jax.numpy``) becomes ``numpy``, a
``logsumexp`` imported from ``jax.scipy.special`` becomes
``scipy.special.logsumexp``. The frontend then reads ``jnp.sum(x)`` exactly as
``np.sum(x)``: the rule of ``np.sum``, and generated code that calls NumPy.
:func:`twin` does the same for one object (an attribute chain such as
``jax.numpy.sum`` or ``jax.scipy.special.logsumexp``, resolved part by part).
:func:`jax_name` names a JAX object that has no twin (``jax.vmap``,
``jax.lax.scan``), for :mod:`s2s_ad.frontend.jax_forms` and for refusals.

Recognition is by the resolved object, never by the import's text: a module is
JAX's NumPy when its ``__name__`` is ``"jax.numpy"`` (``import jax.numpy as
jnp``, ``from jax import numpy as jnp``, ``jax.numpy`` through ``import
jax``), ``"autograd.numpy"`` likewise; a function is JAX's ``jnp.exp`` when it
is the attribute ``exp`` of such a module (found in ``sys.modules``) or when
its ``__module__`` is that module's name and its ``__name__`` is ``exp``.

Before → after (the globals the frontend reads)::

    {"jnp": <module 'jax.numpy'>}        ──▶   {"jnp": <module 'numpy'>}
    {"logsumexp": jax's logsumexp}       ──▶   {"logsumexp": scipy.special.logsumexp}
"""

from __future__ import annotations

import importlib
import sys
import types

from s2s_ad.frontend.library_names import belongs, owner
from s2s_ad.syntax_walk import walk

TWIN_MODULES = {"jax.numpy": "numpy", "jax.numpy.linalg": "numpy.linalg",
                "jax.scipy.special": "scipy.special",
                "autograd.numpy": "numpy", "autograd.numpy.linalg": "numpy.linalg",
                "autograd.numpy.random": "numpy.random",
                "autograd.scipy.special": "scipy.special",
                "autograd.scipy.stats": "scipy.stats",
                **{f"autograd.scipy.stats.{d}": f"scipy.stats.{d}"
                   for d in ("norm", "multivariate_normal", "poisson", "t")}}
"""JAX's (and autograd's) modules read as the NumPy or SciPy module they mirror.
autograd's modules of one distribution (``autograd.scipy.stats.norm``) are read
as SciPy's distribution object (``scipy.stats.norm``), whose methods
:mod:`s2s_ad.frontend.scipy_forms` reads."""
PASSAGES = {"jax.scipy": "scipy", "autograd.scipy": "scipy"}
"""Modules only passed through on the way to a twin (``jax.scipy.special``):
``jax.scipy`` is read as ``scipy`` with its ``special`` imported."""
JAX_TOPS = ("jax", "autograd")


def _module(name: str):
    """The NumPy or SciPy module ``name``, imported (None when not installed);
    an object a module holds (``scipy.stats.norm``) by its dotted name."""
    try:
        module = importlib.import_module(name)
        if name == "scipy":
            importlib.import_module("scipy.special")
        return module
    except ImportError:
        parent, _, attribute = name.rpartition(".")
        found = _module(parent) if parent else None
        return None if found is None else getattr(found, attribute, None)


def is_jax(obj) -> bool:
    """Whether ``obj`` is one of JAX's (or autograd's) modules or functions."""
    return belongs(obj, JAX_TOPS)


def is_jax_type(cls: type) -> bool:
    """Whether ``cls`` is a class of JAX's (``jaxlib``'s compiled functions)."""
    return (getattr(cls, "__module__", "") or "").split(".")[0] in JAX_TOPS + ("jaxlib",)


def twin(obj):
    """The NumPy or SciPy object ``obj`` (a JAX module or function) stands
    for; ``obj`` itself when it has none or is not JAX's."""
    if not is_jax(obj):
        return obj
    if isinstance(obj, types.ModuleType):
        target = TWIN_MODULES.get(obj.__name__) or PASSAGES.get(obj.__name__)
        found = _module(target) if target else None
        return obj if found is None else found
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return obj
    for jax_module, numpy_module in TWIN_MODULES.items():
        if owner(obj, name, jax_module):
            found = _module(numpy_module)
            twin_obj = getattr(found, name, None) if found is not None else None
            return obj if twin_obj is None else twin_obj
    return obj


def jax_name(obj) -> str | None:
    """``"jax.vmap"``, ``"jax.lax.scan"``, ...: the public name of a JAX
    object without a NumPy twin; None for anything else."""
    if not is_jax(obj):
        return None
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return f"{obj.__module__}.?"
    for module_name in ("jax", "jax.lax", "jax.random", "jax.nn", "jax.numpy",
                        "jax.scipy.special", "autograd", "autograd.numpy"):
        if owner(obj, name, module_name):
            return f"{module_name}.{name}"
    for module_name in sorted(m for m in sys.modules if m.startswith("autograd.")):
        # autograd's primitives say `autograd.tracer`: the public module holding one
        if module_name != "autograd.tracer" and getattr(sys.modules[module_name], name,
                                                        None) is obj:
            return f"{module_name}.{name}"
    return f"{obj.__module__}.{name}"


def numpy_view(names: dict) -> dict:
    """``names`` (a function's globals) with each JAX module and function
    that has a NumPy twin replaced by it; ``names`` itself when nothing in
    it is JAX's."""
    swaps = {}
    for key, value in names.items():
        if isinstance(value, (types.ModuleType, types.FunctionType)) or callable(value):
            if is_jax(value):
                found = twin(value)
                if found is not value:
                    swaps[key] = found
    if not swaps:
        return names
    view = dict(names)
    view.update(swaps)
    return view


def reads_jax(tree, names: dict) -> bool:
    """Whether the function ``tree`` reads a JAX module or function from
    ``names`` (its globals before :func:`numpy_view`)."""
    import ast
    return any(isinstance(n, ast.Name) and is_jax(names.get(n.id)) for n in walk(tree))
