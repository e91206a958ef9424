"""Rules for what control flow and lists bring in: boolean logic, ``len`` and
list indexing.

``and``/``or``/``not`` combine branch conditions and carry no derivative.
``xs[i]`` reads one element of a list parameter: its adjoint goes to that
element of the list's adjoint (``dxs[i] += g``), which the reverse transform
writes itself; the partial ``1`` here only says that the derivative flows.
"""

from __future__ import annotations

from . import Rule

CONTROL_RULES = [
    Rule("not", "not x", (None,), "bool"),
    Rule("and", "x and y", (None, None), "bool"),
    Rule("or", "x or y", (None, None), "bool"),
    Rule("check", "x", (None,), "bool", variadic=True,
         notes="`if x: raise E(message)` (`if not x` for an `assert`): a check the forward "
               "pass keeps; no derivative"),
    Rule("print", "print(args)", (None,), "bool", variadic=True,
         notes="`print(...)` the forward pass keeps, once per call; no derivative"),
    Rule("len", "len(x)", (None,), "int"),
    Rule("getitem", "x[y]", ("1", None), "float", "∂xs[i]/∂xs[i] = 1"),
    Rule("list.sum", "sum(x)", ("1",), "float", "∂sum(xs)/∂xs[i] = 1",
         notes="g is added to every item of the list's adjoint"),
    Rule("list.new", "[args]", ("1",), "list", "the list of its operands",
         notes="item k's adjoint is the list adjoint's item k", variadic=True),
    Rule("list.append", "x.append(y)", ("1", "1"), "list", "x with y appended",
         notes="the reverse sweep pops y's adjoint off the list's adjoint"),
    Rule("list.fill", "[x] * y", ("1", None), "list", "y copies of x",
         notes="x's adjoint is the sum of the list's adjoint"),
    Rule("list.set", "x0.__setitem__(x1, x2)", ("1", None, "1"), "list", "x0 with item x1 replaced by x2",
         notes="x2's adjoint is item x1 of the list's adjoint, which is then zeroed"),
    # positions chosen by the values of a list of keys (sorted/min/max of a
    # list of any length): piecewise constant, no derivative
    Rule("list.argsort", "sorted(range(len(x)), key=x.__getitem__)", (None,), "list",
         notes="stable, as Python's sorted"),
    Rule("list.argsort_reverse", "sorted(range(len(x)), key=x.__getitem__, reverse=True)",
         (None,), "list", notes="stable, as Python's sorted(..., reverse=True)"),
    Rule("list.argmax", "max(range(len(x)), key=x.__getitem__)", (None,), "int",
         notes="the first largest, as Python's max"),
    Rule("list.argmin", "min(range(len(x)), key=x.__getitem__)", (None,), "int",
         notes="the first smallest, as Python's min"),
    Rule("list.index", "x[y]", (None, None), "int"),
]
