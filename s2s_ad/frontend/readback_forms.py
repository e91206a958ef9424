"""A small form of s2s-ad's generated code, read back (for
:func:`s2s_ad.frontend.generated.normalise`). A backward function copying
the adjoint list its caller passes (``dys = list(dys_1)``) is read by
:mod:`s2s_ad.frontend.list_forms`, as every ``list(...)`` is.

Contract: the rewrite computes the same values as the code it replaces.

* ``int_items``: an item of a tape of ints read by index, ``k = k_tape[i]``
  (a tape of slots holding a counter, :func:`s2s_ad.frontend.int_names.int_tapes`),
  is ``k = int(k_tape[i])``, as a pop of a stack of ints is read: the
  lowering then knows it is an int (an index into a list). So is a parameter
  of a backward function its forward function put an int on the tape for
  (``best``, the position a run-time ``max`` chose): ``dxs[int(best)] += g``.

Before → after::

    top = top_tape[_]                     top = int(top_tape[_])
"""

from __future__ import annotations

import ast

from s2s_ad.frontend.int_names import int_tapes
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["int_items"]


def int_items(tree: ast.FunctionDef, globals_: dict | None, given=(), scalars=()) -> None:
    """An item of a tape of ints read by index (``k = k_tape[i]``, a tape of
    slots holding a counter) is read as ``int(k_tape[i])``, as a pop of a
    stack of ints is: the lowering then knows it is an int (an index). So is
    a parameter of a backward function in ``scalars``, an int its forward
    function put on the tape (``best``, the position a run-time max chose)."""
    if (globals_ or {}).get("int", int) is not int:
        return
    appends = False
    for n in walk(tree):  # (once: every function lowered is read here)
        if isinstance(n, ast.Name) and n.id == "int" and not isinstance(n.ctx, ast.Load) \
                or isinstance(n, ast.arg) and n.arg == "int":
            return
        appends = appends or isinstance(n, ast.Attribute) and n.attr == "append"
    if not given and not scalars and not appends:
        return  # a tape of ints is appended to, or given
    tapes = int_tapes(tree, globals_, given)
    scalars = {s for s in scalars if not any(  # (a parameter never bound again)
        isinstance(n, ast.Name) and n.id == s and not isinstance(n.ctx, ast.Load)
        for n in walk(tree))}
    if not tapes and not scalars:
        return
    parents = syntax_walk.parents(tree)
    for n in list(walk(tree)):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) \
                and n.value.id in tapes and isinstance(n.ctx, ast.Load) \
                or isinstance(n, ast.Name) and n.id in scalars and isinstance(n.ctx, ast.Load):
            holder = parents.get(id(n))
            if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) \
                    and holder.func.id == "int":
                continue
            wrapped = ast.copy_location(ast.Call(ast.Name("int", ast.Load()), [n], []), n)
            for field, value in ast.iter_fields(holder):
                if value is n:
                    setattr(holder, field, wrapped)
                elif isinstance(value, list):
                    value[:] = [wrapped if v is n else v for v in value]
    ast.fix_missing_locations(tree)
