"""Parameters indexing a write into an array, checked to be ints where the code runs.

Contract: for ``b[i, j] = v`` (or ``b[i][j] = v``, the same write: ``b[i]`` is
a view of ``b``) on an array the function made, where ``i`` is a parameter
not annotated ``i: int`` (a number, or in NumPy code an array of unknown
shape) or integer arithmetic on such parameters (``1 - i``, ``2 * i + j``),
:func:`param_ints` finds those parameters and :func:`int_index` emits, before
the write, a check that each is an int where the code runs (``IndexError``
naming it for a float or a NumPy float, as NumPy raises; ``TypeError``
naming it for anything else, such as an integer array, which could name a
position twice, where NumPy keeps the last write and the gradient would
give each write one) and the index as an ``int``. The parameters are integers of the
function (``mark_int``): a gradient with respect to them is refused. Where
the call gives such a parameter an array (``vjp``, which reads kinds from
the arguments), it is not one of these: the write is refused while lowering.

Before → after, for ``b[i][j] = x * x``::

    is_int = hasattr(type(i), '__index__')
    if not is_int:
        raise IndexError('`i` indexes `b` in an assignment (line 4): only integers, ...')
    is_int_1 = isinstance(i, (int, np.integer)) and not isinstance(i, bool)
    if not is_int_1:
        raise TypeError('`i` indexes `b` in an assignment (line 4), so it must be an int ...')
    k = int(i)
    ...
    b[k, k_1] = t2
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import index_exprs

INT_ARITHMETIC = frozenset(("add", "sub", "mul", "neg", "pos", "floordiv", "mod"))
"""Operations on ints that give an int (an index written ``1 - i``)."""

NOT_AN_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices")
"""NumPy's message for an index of another kind (a float)."""


def scalar_param(lo, a) -> bool:
    """Is ``a`` a parameter not annotated as an int, lowered as a number or,
    in NumPy code, as an array, that the call (when there is one) does not
    give an array? (A helper's parameters: checked where the code runs only.)"""
    return isinstance(a, ir.Value) and a.kind in ("float", "array") \
        and id(a) in lo.param_ids and (bool(lo.helper) or a.var not in lo.arrays)


def param_ints(lo, a) -> list | None:
    """The parameters ``a`` is integer arithmetic on (``i``, ``1 - i``, ``2 *
    i + j``), none annotated as an int; None when it is anything else."""
    if scalar_param(lo, a):
        return [a]
    op = lo.defs.get(id(a)) if isinstance(a, ir.Value) and a.kind in ("float", "array") \
        else None
    if op is None or op.prim not in INT_ARITHMETIC:
        return None
    found: list = []
    for b in op.args:
        if isinstance(b, ir.Const) and type(b.value) is int or \
                isinstance(b, ir.Value) and b.kind == "int":
            continue
        more = param_ints(lo, b)
        if more is None:
            return None
        found += [p for p in more if all(p is not q for q in found)]
    return found or None


def int_index(lo, a: ir.Value, target: ast.Subscript) -> ir.Value:
    """``a`` (integer arithmetic on the parameters :func:`param_ints` finds)
    indexing ``target``, each parameter checked where the code runs to be an
    int; the index as an ``int``."""
    lo.mark_int(a, target, "an index in an assignment")
    for p in param_ints(lo, a):
        # a float (or NumPy float) is no index: IndexError, as NumPy raises
        index_exprs.int_check(lo, p, target, f"`{p.var}` indexes "
                              f"`{ast.unparse(target.value)}` in an assignment (line "
                              f"{target.lineno}): {NOT_AN_INDEX}", "index.is_index", "IndexError")
        index_exprs.int_check(lo, p, target, f"`{p.var}` indexes `{ast.unparse(target.value)}` "
                              f"in an assignment (line {target.lineno}), so it must be an int "
                              "(an integer array could name a position twice, where NumPy "
                              "keeps the last write; annotate it `: int`)")
    return lo.emit("int", [a], target, hint="k")
