"""Frontend: recognising another array library's modules and functions by
the object, shared by the JAX reading (:mod:`s2s_ad.frontend.jax_names`) and
the PyTorch reading (:mod:`s2s_ad.frontend.torch_names`).

Contract: recognition is by the resolved object, never by the import's text.
A module belongs to a library when its ``__name__``'s first part is one of
the library's top-level packages (``jax.numpy`` → ``jax``, ``torch.special``
→ ``torch``); a function, class or other object when its ``__module__``'s
first part is (``torch.sum.__module__ == "torch"``). :func:`owner` tells
whether an object is a given module's attribute of a given name (found in
``sys.modules``, or by its ``__module__``).

>>> import math
>>> belongs(math, ("math",)), belongs(math.sin, ("numpy",))
(True, False)
"""

from __future__ import annotations

import sys
import types


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
