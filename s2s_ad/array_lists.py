"""A list or tuple of arrays given where the generated code takes an array.

Contract: in NumPy code every parameter without an annotation is lowered as
an array, so a list of numbers given to it is read as the array it stands
for. A list or tuple holding arrays (``weights = [W1, b1, W2, b2]``) is not:
NumPy would stack equal shapes into one array (the gradient then one array,
not a list) and refuse others. :func:`guard` puts the code generated for
arrays behind a check of the arguments' classes and sends a call passing
such a list to the code generated for its structure (a structure parameter
of array leaves, its gradient a list of the same shapes). The check costs one
class test per argument where no argument is a list or tuple."""

from __future__ import annotations

import functools
from typing import Callable

from s2s_ad import signatures
from s2s_ad.frontend import pytrees

_NUMBERS = frozenset((float, int, bool))


def holds_array(value) -> bool:
    """Does a structure argument hold an array? A list of numbers is
    answered by its sum (in C), not item by item."""
    if type(value) in (list, tuple):
        try:
            if sum(value).__class__ in _NUMBERS:
                return False
        except (TypeError, ValueError):  # items that do not add: tuples, dicts, objects,
            pass                         # arrays of shapes that do not broadcast
    return pytrees.holds_array(value)


def holds_arrays(value) -> bool:
    """A list or tuple holding an array (``[W1, b1, W2, b2]``)."""
    return (value.__class__ is list or value.__class__ is tuple) and holds_array(value)


def guard(compiled: Callable, by_shape: Callable[[], Callable]) -> Callable:
    """``compiled`` (every parameter taken as an array) behind a check that
    no argument is a list or tuple holding arrays; a call passing one goes to
    ``by_shape()`` (made once, on the first such call)."""
    made: list = []

    def slow(*args, **kwargs):
        if any(holds_arrays(v) for v in args) or any(holds_arrays(v) for v in kwargs.values()):
            if not made:
                made.append(by_shape())
            return made[0](*args, **kwargs)
        return compiled(*args, **kwargs)

    functools.update_wrapper(slow, compiled)
    fast = signatures.guarded(compiled, slow, plain=True)
    return slow if fast is None else functools.update_wrapper(fast, compiled)
