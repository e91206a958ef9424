"""Reading list and tuple parameters at indices known only at run time.

Contract: mixed into the frontend's lowering (next to
:class:`~s2s_ad.frontend.control.ControlFlow`), these methods lower
``xs[i]`` where ``i`` is a loop variable, a helper's index parameter or an
element of an integer array: the list parameter itself is read by a
``getitem`` op (a list known while lowering is resolved by
:mod:`s2s_ad.frontend.structures` instead). They also record the
parameters used as integers (list indices, ``range`` bounds), for which a
gradient is refused where they are used.
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.errors import IntegerUse
from s2s_ad.frontend import (index_exprs, list_slices, run_time_index, runtime_lists,
                             runtime_sorting, structures)


class ListParams:
    """Mixin for the frontend's ``_Lowering`` (which provides ``env``,
    ``defs``, ``seq_params``, ``param_ids``, ``integers``, ``src``, ``expr``
    and ``emit``)."""

    def run_time_item(self, base, node: ast.Subscript, var) -> ir.Operand:
        """``xs[i]`` of a tuple or list known while lowering at an index known
        only as the code runs (:mod:`s2s_ad.frontend.run_time_index`)."""
        return run_time_index.item(self, base, node, var)

    def dynamic_subscript(self, node: ast.Subscript, var, hint) -> ir.Operand:
        """``xs[i]`` with an index known only at run time (a loop variable)
        reads the list parameter itself; every other subscript is resolved
        while lowering (:mod:`s2s_ad.frontend.structures`)."""
        if isinstance(node.slice, ast.Slice):
            return list_slices.subscript(self, node, var)
        if not isinstance(node.value, ast.Name):
            return structures.lower_expr(self, node, var)
        if id(self.env.get(node.value.id)) in self.positions:  # perm[k]: an int
            return runtime_sorting.position(self, node, var, hint)
        runtime = structures.is_runtime(self, self.env.get(node.value.id))
        if not runtime and structures._static_int(self, node.slice) is not None:
            return structures.lower_expr(self, node, var)
        param = self.sequence_param(self.env.get(node.value.id))
        if param is None and runtime_lists.helper_index(self, node.slice) \
                and runtime_lists.promote_indexed(self, node.value.id, node):
            param = self.sequence_param(self.env.get(node.value.id))  # c[i], c built here
        if param is None:
            return structures.lower_expr(self, node, var)
        index = self.expr(node.slice)
        given = runtime_lists.helper_index(self, node.slice)
        if not given and (isinstance(index, tuple) or kind_of(index) not in ("int",)
                          and not self.array_element(index)):
            raise self.src.error(node.slice, runtime_lists.NOT_AN_INDEX + (
                                     f"; `{index.var}` is a parameter, an array in NumPy code: "
                                     f"annotate it (`{index.var}: int`)" if id(index) in
                                     self.param_ids and index.var else ""))
        if kind_of(index) == "int" or given and kind_of(index) != "array":
            self.mark_int(index, node.slice, "a list index")
        else:  # an element of an integer array, a parameter of NumPy code: checked to be
            index = self.list_index(index, node.slice)  # an int where the code runs
        return self.emit("getitem", [param.value, index], node, var, hint=hint)

    def array_element(self, index) -> bool:
        """``index`` an element of an array or a list read by ints
        (``parents[i]``, an integer array of the caller's; ``rows[0]``, a
        list of ints passed down a recursion), or integer arithmetic on such
        elements and ints (``rows[0] * n + cols[k]``): it indexes a list as
        Python does where the code runs (a float there raises there, as in
        Python); the index has no derivative."""
        op = self.defs.get(id(index)) if isinstance(index, ir.Value) else None
        if op is None:
            return False
        if op.prim == "array.getitem":
            return all(kind_of(a) == "int" for a in op.args[1:])
        if op.prim == "getitem":  # r[m]: m an int, or a parameter used as one
            return self._int_like(op.args[1])
        return op.prim in INT_ARITHMETIC and any(self.array_element(a) for a in op.args) \
            and all(self._int_like(a) for a in op.args)

    def _int_like(self, a) -> bool:
        """An int, an element :meth:`array_element` reads, or a parameter lowered
        as a number (used as an integer where it indexes)."""
        return kind_of(a) in ("int", "bool") or self.array_element(a) \
            or isinstance(a, ir.Value) and id(a) in self.param_ids and a.kind == "float"

    def list_index(self, index: ir.Value, node: ast.expr) -> ir.Value:
        """``index``, an array's element indexing a list: a check that it is an
        int where the code runs (Python raises for a float there too), then
        the int itself. A parameter it is computed from (``n`` in
        ``rows[0] * n + c``) is used as an integer."""
        self.mark_int(index, node, "a list index")
        index_exprs.int_check(self, index, node,
                              f"`{ast.unparse(node)}` indexes a list, so it must be an int",
                              "index.is_int" if self.array_mode else "index.is_index")
        return self.emit("int", [index], node, hint="k")

    def sequence_param(self, value) -> ir.Param | None:
        """The list/tuple parameter ``value`` (a structure in the environment)
        still is, unchanged; else None."""
        param = self.seq_params.get(id(value))
        if param is None:
            return None
        if param.items is None:  # a list of any length: the parameter itself
            return param
        items = value.items if isinstance(value, structures.StaticList) else list(value)
        if len(items) != len(param.items) or any(a is not b for a, b in zip(items, param.items)):
            return None
        return param

    def seq_len(self, seq: ir.Value, node: ast.AST) -> ir.Operand:
        """The length of the list parameter ``seq``: a constant, or for a list
        of any length a ``len`` op."""
        items = next(p.items for p in self.seq_params.values() if p.value is seq)
        if items is None:
            return self.emit("len", [seq], node, text=f"len({seq.name})")
        return ir.Const(len(items))

    def mark_int(self, a: ir.Operand, node: ast.AST, what: str) -> None:
        """Record the parameters ``a`` is computed from: they are integers,
        and a gradient with respect to them is refused at ``node``."""
        todo, seen = [a], set()
        while todo:
            v = todo.pop()
            if not isinstance(v, ir.Value) or id(v) in seen:
                continue
            seen.add(id(v))
            if id(v) in self.param_ids and v.var not in self.integers:
                self.integers[v.var] = IntegerUse.at(self.src.error(
                    node, f"cannot differentiate with respect to `{v.var}`: it is used as "
                    f"an integer ({what}) here"), what)
            op = self.defs.get(id(v))
            if op is not None and op.prim not in SIZE_QUERIES and op.prim not in CONVERSIONS:
                todo.extend(op.args)


INT_ARITHMETIC = frozenset({"add", "sub", "mul", "floordiv", "mod", "neg", "pos"})
"""Operators that keep ints ints: an index computed from elements read by ints."""

SIZE_QUERIES = frozenset({"len", "getitem", "shape", "np.ndim", "np.size"})
"""Ops whose integer result says how many, not how much: an array (or list)
they read is not used as an integer (``range(A.shape[0])``, ``range(len(xs))``)."""

CONVERSIONS = frozenset({"int", "round", "math.floor", "math.ceil", "math.trunc"})
"""Ops that make an int of a float, cutting its derivative (zero almost
everywhere): what they read is a float, differentiable where it is used as
one (``n = int(y * 3)`` for a range bound, ``s * y`` after it)."""


def kind_of(a) -> str:
    """The kind of operand ``a``: a value's kind, a constant's type, else a tuple."""
    if isinstance(a, ir.Value):
        return a.kind
    if isinstance(a, ir.Const):
        if isinstance(a.value, bool):
            return "bool"
        return "int" if isinstance(a.value, int) else "float"
    return "tuple"
