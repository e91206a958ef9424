"""A list or tuple given where the generated code takes an array.

Contract: in NumPy code every parameter without an annotation is lowered as
an array. A list or tuple given to it is not one: ``xs + ys`` joins two
lists and ``xs * 2`` repeats one where arrays would be added or doubled (the
code generated for arrays would run the join and differentiate a sum), and
a list holding arrays (``weights = [W1, b1, W2, b2]``) is a structure whose
gradient is a list of the same shapes. :func:`guard` puts the code generated
for arrays behind a check of the arguments' classes and sends a call passing
a list or tuple to the code generated for its structure and lengths (a list
of numbers read there as a list; NumPy calls of it read as the array NumPy
makes of it). The check costs one class test per argument where no argument
is a list or tuple."""

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


def a_list_or_tuple(value) -> bool:
    """Is ``value`` a list or a tuple (not a subclass: a NamedTuple is a
    structure of its own)? What the code generated for arrays does not take."""
    return value.__class__ is list or value.__class__ is tuple


def holds_arrays(value) -> bool:
    """A list or tuple holding an array (``[W1, b1, W2, b2]``)."""
    return a_list_or_tuple(value) and holds_array(value)


def guard(compiled: Callable, by_shape: Callable[[], Callable]) -> Callable:
    """``compiled`` (every parameter taken as an array) behind a check that
    no argument is a list or tuple; a call passing one goes to ``by_shape()``
    (made once, on the first such call; it generates code per length)."""
    made: list = []

    def slow(*args, **kwargs):
        if any(map(a_list_or_tuple, args)) or any(map(a_list_or_tuple, kwargs.values())):
            if not made:
                made.append(by_shape())
            return made[0](*args, **kwargs)
        return compiled(*args, **kwargs)

    functools.update_wrapper(slow, compiled)
    fast = signatures.guarded(compiled, slow, plain=True)
    return slow if fast is None else functools.update_wrapper(fast, compiled)
