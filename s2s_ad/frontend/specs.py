"""The structure spec of a value (the grammar is in frontend/pytrees.py):
which keys, fields, classes and lengths a structure of numbers and arrays
has. Kept apart from the lowering so that reading a function's source
(frontend/source.py: what a closure captures) can ask it too."""

from __future__ import annotations

import dataclasses
import numbers


def _is_array(value) -> bool:
    return not isinstance(value, (numbers.Number, list, tuple, dict, str)) and (
        hasattr(value, "__array__") or hasattr(value, "shape"))


def _fields(value) -> list[str] | None:
    """The fields of a dataclass instance or NamedTuple, else None."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return list(type(value)._fields)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fs = dataclasses.fields(value)
        if any(not f.init for f in fs):
            return None  # type(p)(**fields) could not rebuild it
        return [f.name for f in fs]
    return None


def spec_of(value, inside: bool = False):
    """The spec of ``value`` (see the module docstring), or None when it is
    not a structure of numbers and arrays. ``inside`` a structure, a string,
    None or a bool is a static leaf, ``("static", value)``: it selects code
    (``if layer.act == "tanh":``), the spec holds its value, so another value
    gets code of its own."""
    if value is None or isinstance(value, (str, bool)):
        return ("static", value) if inside else None
    if isinstance(value, numbers.Number) or _is_array(value):
        return "leaf"
    names = _fields(value)
    if names is not None:
        subs = [spec_of(getattr(value, n), True) for n in names]
        return None if None in subs else ("object", type(value), tuple(zip(names, subs)))
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return None
        subs = [spec_of(v, True) for v in value.values()]
        return None if None in subs else ("dict", tuple(zip(value, subs)))
    if type(value) in (list, tuple):
        subs = [spec_of(v, True) for v in value]
        return None if None in subs else (type(value).__name__, tuple(subs))
    return None


def array_paths(value, base: str) -> list[str]:
    """The paths (as :func:`s2s_ad.frontend.pytrees.leaf_paths` writes them:
    ``tree[1][2]``, ``p['w']``, ``cfg.W``) of the leaves of the structure
    ``value`` that are arrays; its number leaves are lowered as numbers."""
    if value is None or isinstance(value, (str, bool, numbers.Number)):
        return []
    if _is_array(value):
        return [base]
    names = _fields(value)
    if names is not None:
        return [p for n in names for p in array_paths(getattr(value, n), f"{base}.{n}")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in array_paths(v, f"{base}[{k!r}]")]
    if type(value) in (list, tuple):
        return [p for i, v in enumerate(value) for p in array_paths(v, f"{base}[{i}]")]
    return []


def is_static_spec(spec) -> bool:
    """A static leaf's spec, ``("static", value)``."""
    return isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "static"


def captured_spec(value):
    """The spec of a structure of numbers and arrays a closure captures, None
    for anything else (a number or an array is not a structure)."""
    spec = spec_of(value)
    return None if spec in (None, "leaf") else spec


def number_list(value) -> bool:
    """A plain list or tuple of numbers (lowered as a list of any length)."""
    return type(value) in (list, tuple) and all(
        isinstance(v, numbers.Number) and not isinstance(v, bool) for v in value)
