"""Int and bool values that are arrays: comparisons of arrays, indices.

Contract: :func:`adjust` takes an op about to be emitted in array code (its
primitive, operands, their kinds, attributes, and the kind the rule table
gives its result) and returns the result's kind and whether it is a *mask*,
a bool value that may be an array. The kind ``bool`` says nothing of a
shape, and the reverse sweep takes an ``int`` for a number, so without this
``t * (t <= a)`` (``t`` a number, ``a`` an array) was a number and the
adjoint of ``t`` the product itself instead of its sum:

* a comparison with an array operand, or a mask operand, is a mask
  (recorded in ``lo.masks`` by the caller);
* arithmetic of a number, or of another mask, with a mask is an array;
* ``np.argsort`` of an array, and ``np.argmax``/``np.argmin`` of one along
  an axis, are arrays (of indices, as ``np.arange``'s; no derivative flows
  through them either way);
* a branch's φ or a loop's carried value one of whose values is a mask is a
  mask (:func:`merged`; an array where the other is a float).

Before → after, ``t = np.sum(b)``::

    t2 = t * t1    (t1 = t <= a)     dt = dt2 * t1   →   dt = total(dt2 * t1)
"""

from __future__ import annotations

from s2s_ad import ir

COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "np.logical_and", "np.logical_or",
                         "np.logical_xor", "np.logical_not", "np.isnan", "np.isfinite",
                         "np.isinf"})
"""Their bool result is an array where an operand is one (or a mask)."""

INDICES = frozenset({"np.argmax", "np.argmin"})
"""Their int result is an array where an operand is one and an axis is given."""


def adjust(lo, prim: str, args: list, kinds: list[str], attrs: dict,
           kind: str) -> tuple[str, bool]:
    """The result's kind, and whether it is a mask (see the module docstring)."""
    masks = [isinstance(a, ir.Value) and id(a) in lo.masks for a in args]
    if kind in ("float", "int") and any(masks):
        return "array", False  # a number (or another mask) times a mask
    if kind == "int" and "array" in kinds and (prim == "np.argsort" or (
            prim in INDICES and attrs.get("axis") is not None)):
        return "array", False
    mask = kind == "bool" and prim in COMPARISONS and any(
        m or k == "array" for m, k in zip(masks, kinds))
    return kind, mask


def merged(lo, kind: str, values: list) -> tuple[str, bool]:
    """The kind of a φ (or a loop's carried value) of ``values``, and
    whether it is a mask."""
    if not any(isinstance(v, ir.Value) and id(v) in lo.masks for v in values):
        return kind, False
    if kind in ("bool", "int"):
        return kind, True
    return ("array" if kind == "float" else kind), False
