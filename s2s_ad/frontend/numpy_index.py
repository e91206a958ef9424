"""Array indexing in array mode: subscripts read, written and aliased.

Contract: :class:`ArrayIndexing` is mixed into the lowering (through
:class:`s2s_ad.frontend.numpy.ArrayLowering`) and lowers the subscripts of
array code: ``x[i, 1:, None]`` becomes an ``array.getitem`` op whose ``index``
attribute holds the subscript's structure over its operands; ``y[i] = v``
becomes an ``array.setitem`` op, in place where nothing else can see the
array (:func:`first_leak`, :func:`_sole_owner`), else a new version of it; and
views (``x.T``, ``x[1:]``, ``np.reshape``) are tracked, so that reading a view
of an array written since is refused with its location.

Before → after::

    y = np.zeros(3)          y = np.zeros 3
    y[0] = x[1] * 2.0        t1 = array.getitem x 1 index=(('op',1))
                             t2 = mul t1 2.0
                             y_1 = array.setitem y t2 0 index=(('op',2))
"""

from __future__ import annotations

import ast

import numpy

from s2s_ad import ir
from s2s_ad.frontend import (index_exprs, list_slices, numpy_attrs, real_parts, structures,
                             view_binds, write_dtypes, write_indices)
from s2s_ad.frontend.bound_partials import BoundPartial
from s2s_ad.frontend.int_names import int_names, is_int, one_axis
from s2s_ad.frontend.view_binds import numpy_made as _numpy_made, parents_of
from s2s_ad.frontend.write_indices import INT_ARITHMETIC
from s2s_ad.rules.numpy import is_view
from s2s_ad.rules.templates import index_operands
from s2s_ad.syntax_walk import walk


def _string_made(node: ast.expr) -> bool:
    """An f-string, or ``"W" + ...``: a key written as a string made while the
    code runs (its parts known while lowering where the loop is unrolled)."""
    return isinstance(node, ast.JoinedStr) or isinstance(node, ast.BinOp) \
        and isinstance(node.op, ast.Add) and any(
            isinstance(side, ast.Constant) and isinstance(side.value, str) or _string_made(side)
            for side in (node.left, node.right))


class ArrayIndexing:
    """Mixed into ``frontend._Lowering`` (with :class:`ArrayLowering`); uses its
    ``src``, ``env``, ``emit``, ``expr``, ``roots`` and ``stale``."""

    def index(self, node: ast.expr, operands: list) -> tuple:
        """The structure of a subscript, its expressions appended to
        ``operands``: each item is ("op", k) for operand k, ("slice", lo, hi,
        step) with parts None or ("op", k), ("none",) or ("ellipsis",)."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]

        def operand(e):
            value = self.index_list(self.expr(e), e)
            if isinstance(value, tuple):
                raise self.src.error(e, "tuples inside an index are not supported")
            operands.append(value)
            return ("op", len(operands) - 1)

        if len(items) == 1 and isinstance(items[0], ast.Call) \
                and self.is_global_path(items[0].func) and self.resolve(items[0].func) is numpy.ix_:
            return numpy_attrs.ix_index(self, items[0], operands)
        if len(items) == 1 and (isinstance(items[0], ast.Name) or isinstance(items[0], ast.Call)
                                and self.is_global_path(items[0].func)
                                and self.resolve(items[0].func) in (numpy.triu_indices,
                                                                    numpy.tril_indices)):
            whole = self.expr(items[0])
            if isinstance(whole, tuple) and whole and all(
                    isinstance(v, (ir.Value, ir.Const)) for v in whole):
                # x[iu], iu = np.triu_indices(n, 1) (a tuple of index arrays): x[iu[0], iu[1]]
                operands.extend(whole)
                return tuple(("op", len(operands) - len(whole) + k) for k in range(len(whole)))
            if isinstance(whole, tuple):
                raise self.src.error(items[0], "tuples inside an index are not supported")
            operands.append(self.index_list(whole, items[0]))
            return (("op", len(operands) - 1),)
        out = []
        for item in items:
            if isinstance(item, ast.Slice):
                out.append(("slice",) + tuple(None if p is None else operand(p)
                                              for p in (item.lower, item.upper, item.step)))
            elif isinstance(item, ast.List):
                # x[[0, 2, 2]]: an integer array index (repeats accumulate)
                elements = [self.expr(e) for e in item.elts]
                if any(structures.is_structure(e) for e in elements):
                    raise self.src.error(item, "nested lists in an index are not supported")
                operands.append(self.emit("index_array", elements, item))
                out.append(("op", len(operands) - 1))
            elif isinstance(item, ast.Constant) and item.value is Ellipsis:
                out.append(("ellipsis",))
            elif isinstance(item, ast.Constant) and item.value is None or \
                    (self.is_global_path(item) and not isinstance(item, ast.Name)
                     and self.resolve(item) is None):
                out.append(("none",))
            else:
                out.append(operand(item))
        return tuple(out)

    def index_params(self, value, node: ast.expr) -> None:
        """The parameters an array's index is integer arithmetic on (``x[k]``,
        ``x[k + 1]``, ``m[2 * i, :]``, ``x[k:]``) hold ints, integer arrays or
        masks, none with a derivative: used as integers, as a list's index
        is (a gradient with respect to them refused, located; ``vjp`` gives
        None for them). A mask a comparison makes (``x[x > 0]``) or an index
        ``np.argmax`` computes is not followed to the values it reads."""
        todo = [value]
        while todo:
            v = todo.pop()
            if not isinstance(v, ir.Value):
                continue
            if id(v) in self.param_ids:
                self.mark_int(v, node, "an array index")
                continue
            op = self.defs.get(id(v))
            if op is not None and op.prim in INT_ARITHMETIC:
                todo.extend(op.args)

    def index_list(self, value, node: ast.expr):
        """``value``, where it indexes an array: a list of ints made in the
        function (``keep = [j for j in range(n) if j != col]``, ``list(range(n))``,
        a slice or a sum of such lists; its length known while lowering or only
        when the code runs) as the integer array NumPy makes of it, whose
        items are used as integers; any other value as it is."""
        if isinstance(value, structures.StaticList) and value.items and all(
                isinstance(v, (ir.Value, ir.Const)) and not structures.is_structure(v)
                and not (isinstance(v, ir.Value) and v.kind in ("list", "tuple"))
                for v in value.items):
            for v in value.items:
                self.mark_int(v, node, "an index array")
            return self.emit("index_array", list(value.items), node)
        if isinstance(value, ir.Value) and value.kind == "list":
            self.mark_int(value, node, "an index array")
            return self.emit("list.index_array", [value], node, hint="index")
        return value

    def holds_structure(self, node: ast.expr) -> bool:
        """A name bound to a tuple, list or dict built in the function, or a
        module-level list of numbers."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.GeneratorExp)):
            return True
        if isinstance(node, ast.Subscript):
            return self.holds_structure(node.value)
        if isinstance(node, ast.Attribute):  # `model.extra["k"]`: a field holding a dict
            return structures.is_structure(_field(self.env, node))
        if isinstance(node, ast.Name):
            if structures.module_numbers(self, node.id):
                return True  # COEFFS = [1.0, -2.0] at module level: a tuple of constants
            v = self.env.get(node.id)
            return structures.is_structure(v) or (isinstance(v, ir.Value) and v.kind == "tuple") \
                or id(v) in self.__dict__.get("tuple_calls", ())
        return False

    def subscript(self, node: ast.Subscript, var, hint) -> ir.Operand:
        if list_slices.is_runtime_slice(self, node):  # `xs[:n]`, xs a list built here
            return self.dynamic_subscript(node, var, hint)
        if self.holds_structure(node.value):
            return structures.lower_expr(self, node, var)
        if isinstance(node.value, ast.Name) and (
                id(self.env.get(node.value.id)) in self.grown
                or structures.is_runtime(self, self.env.get(node.value.id))):
            # a list grown at run time, or one of any length passed to a helper
            return self.dynamic_subscript(node, var, hint)
        if list_slices.is_runtime_slice(self, node.value):  # `hs[::-1][0]`
            return self.dynamic_subscript(node, var, hint)
        base = self.expr(node.value)
        if isinstance(base, tuple) and isinstance(node.value, ast.Call) \
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int \
                and -len(base) <= node.slice.value < len(base):
            return base[node.slice.value]  # np.linalg.slogdet(x)[1]
        if id(base) in self.__dict__.get("tuple_calls", ()) and structures.call_tuple(self, base):
            return structures.call_item(self, base, node, var)  # h(x)[-1], h returning a tuple
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                or _string_made(node.slice):
            # params["W1"] (or params[f"W{i}"]) on a parameter lowered as an array:
            # lower it as a dict
            structures._param_used_as_sequence(self, base, node, ("float", "array"), True)
        if structures.is_structure(base):
            raise self.src.error(node.value, "index a tuple, list or dict through a name "
                                 "(`xs = [...]; xs[0]`)")
        operands = [base]
        index = self.index(node.slice, operands)
        for k, _ in index_operands(index):
            self.index_params(operands[k], node.slice)
        return self.emit("array.getitem", operands, node, var, hint=hint, attrs={"index": index})

    def assignment_index(self, target: ast.Subscript, operands: list) -> tuple:
        """The index of ``target[...] = v``, its operands appended to
        ``operands``; only ints, slices, masks and integer index arrays
        computed from ints are allowed. With an integer array a repeated
        index would make the last write win: an index array computed from
        ints gets a check, where the code runs, that it repeats no element
        (:func:`s2s_ad.frontend.index_exprs.distinct_check`); any other
        integer array is refused."""
        index = self.index(target.slice, operands)
        arrays = False
        for k, item in index_operands(index):
            a = operands[k]
            if isinstance(a, ir.Value) and id(a) in self.index_values:
                arrays = True
            elif item[0] == "slice":
                continue  # a slice's bound: NumPy takes an integer there (a value read from
                # a tape, whose kind the code does not say, is one) and no element repeats
            elif write_indices.param_ints(self, a):
                operands[k] = write_indices.int_index(self, a, target)
            elif isinstance(a, ir.Value) and a.kind not in ("int", "bool"):
                raise self.src.error(target, "an index in an assignment must be an int (annotate "
                                     "a parameter `i: int`), a slice, a boolean mask or an "
                                     "integer array computed from ints (`np.arange`, "
                                     "`np.repeat`, ...); with another integer array, repeated "
                                     "indices would make the last write win")
        if arrays:
            index_exprs.distinct_check(self, operands[0], operands, index, target)
        for k, _ in index_operands(index):  # (a slice's bounds too: `y[k:] = v`)
            self.index_params(operands[k], target.slice)
        return index

    def assign_subscript(self, target: ast.Subscript, value_node: ast.expr, op=None,
                         stmt: ast.stmt | None = None) -> None:
        """``y[i] = e`` (``op`` None) or ``y[i] op= e``."""
        target = self.chained_target(target)
        if op is None and self.holds_structure(target.value):
            return structures.store(self, target, self.expr(value_node))
        self.refuse_list_item_write(target)
        if self.control_flow:
            return self.assign_versioned(target, value_node, op, stmt)
        if not isinstance(target.value, ast.Name) or target.value.id not in self.env:
            real_parts.refuse_part_write(self, target)
            structures.refuse_caller_array_write(self, target)
            raise self.src.error(target, "only a local array can be assigned into "
                                 "(`y[i] = ...` with `y` a variable of this function)")
        name = target.value.id
        base = self.env[name]
        if isinstance(base, ir.Const) or base.kind not in ir.DIFFERENTIABLE:
            raise self.src.error(target, f"`{name}` is not an array")
        root = self.roots.get(id(base), base)
        made = self.defs.get(id(base))
        if root is None and made is not None and made.prim == "getitem":
            seq = made.args[0]
            raise self.src.error(target, f"`{name}` is an item of the list `{seq.var or seq.name}`"
                                 ", which holds that very array (so may the caller, and the "
                                 "tapes of helpers it was passed to); assigning into it would "
                                 f"change it there too. Assign into a copy (`{name} = "
                                 f"np.copy({name})`) first")
        if root is None or any(base is p.value for p in getattr(self, "_params", [])):
            raise self.src.error(target, f"assigning into `{name}` would change an array the "
                                 "caller passed in; assign into a copy (`" + name +
                                 f" = np.copy({name})`) first")
        if root is not base:
            raise self.src.error(target, f"`{name}` is a view of another array; assigning "
                                 "into it would change that array too. Assign into the "
                                 "original, or into a copy")
        if id(base) not in self.roots:
            # Not made by a NumPy operation of this function (a helper's result
            # may be the very array it was given).
            raise self.src.error(target, f"`{name}` may be an array created elsewhere; assign "
                                 f"into a copy (`{name} = np.copy({name})`) first")
        given = self.given_to_helper(base)
        if given is not None:
            raise self.src.error(target, f"`{name}` was passed to `{given.callee.fn.__name__}` "
                                 f"(line {given.loc.line}), whose result may be that very array "
                                 "or a view of it, which the write would change too; assign "
                                 f"into a copy (`{name} = np.copy({name})`) first")
        value = self.expr(value_node)
        if isinstance(value, tuple):
            raise self.src.error(value_node, "a tuple cannot be assigned into an array")
        out = self.emit_setitem(base, value, target, op, stmt, name)
        self.mutated(base, out, f"it is a view of `{name}`, which line {target.lineno} assigns "
                     "into since; take a copy (np.copy) before the assignment")
        self.roots[id(out)] = out

    def chained_target(self, target: ast.Subscript) -> ast.Subscript:
        """``b[i][j]`` as ``b[i, j]`` where ``b`` names an array and ``i`` is an
        int (or ints): ``b[i]`` is then a view of ``b``, so a write into it
        is a write into ``b``'s elements at ``(i, j)``. A slice, mask or index
        array as ``i`` is left alone (``b[1:][0]`` is ``b[1]``, and ``b[m]`` a
        copy NumPy writes into and drops), as is a list of arrays."""
        inner = target.value
        if not isinstance(inner, ast.Subscript):
            return target
        inner = self.chained_target(inner) if isinstance(inner.value, ast.Subscript) else inner
        base = self.env.get(inner.value.id) if isinstance(inner.value, ast.Name) else None
        if not (isinstance(base, ir.Value) and base.kind == "array") or self._is_param(base):
            return target  # (a parameter's: refused as written, naming `b[i]`)
        first = inner.slice.elts if isinstance(inner.slice, ast.Tuple) else [inner.slice]
        if not all(self._int_item(e) for e in first):
            return target
        rest = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        merged = ast.Subscript(inner.value, ast.Tuple([*first, *rest], ast.Load()), target.ctx)
        return ast.copy_location(merged, target)

    def _int_item(self, node: ast.expr) -> bool:
        """Is ``node`` an integer index, known from the text (a constant,
        a name holding an int, integer arithmetic on them)?"""
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self._int_item(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                                ast.FloorDiv, ast.Mod)):
            return self._int_item(node.left) and self._int_item(node.right)
        if isinstance(node, ast.Name):
            value = self.env.get(node.id)
            return isinstance(value, ir.Value) and value.kind == "int" or \
                isinstance(value, ir.Const) and type(value.value) is int or \
                write_indices.scalar_param(self, value)  # an int where it is written
        return False

    def refuse_list_item_write(self, target: ast.Subscript) -> None:
        """``xs[i] = v`` or ``xs[i][j] = v`` on a list read when the code runs
        (grown at run time, or of any length passed to a helper): refused,
        located. Its items are arrays the list shares with every name bound
        to them, with the caller that passed it and with the tape of each
        helper it was passed to, so a write in place would change what they
        read."""
        node = target.value
        while isinstance(node, ast.Subscript):
            node = node.value
        if not isinstance(node, ast.Name):
            return
        value = self.env.get(node.id)
        if not (id(value) in self.grown or structures.is_runtime(self, value)):
            return
        item = target.value if isinstance(target.value, ast.Subscript) else target
        what = ("replaces an item of" if item is target else
                f"writes in place into the array `{ast.unparse(item)}`, an item of")
        raise self.src.error(target, f"`{ast.unparse(target)} = ...` {what} the list `{node.id}` of any length; its items are "
                             "shared (with the names bound to them, the caller that passed the "
                             "list, and every helper it was passed to), so the change would "
                             "reach them too. Build a new array instead (`v = np.copy("
                             f"{ast.unparse(item)}); v[...] = ...`), or append to a new list")

    def mutated(self, base: ir.Value, out: ir.Value, why: str) -> None:
        """``base``'s array was written into, giving ``out``. Python mutates
        it: every name bound to it sees the change, and views taken earlier
        must not be read again (``why`` says so where one is)."""
        for k, v in list(self.env.items()):
            if v is base:
                self.env[k] = out
            elif structures.is_structure(v) or isinstance(v, BoundPartial):
                self.env[k] = _replaced(v, base, out)  # `xs = [M]`: xs[0] is M, written
        for fn in self.local_fns.values():  # `def g(t, c=M)`: the default is M, written
            defaults = getattr(fn, "__s2s_defaults_at_def__", None)
            if defaults:
                fn.__s2s_defaults_at_def__ = {k: _swapped(v, base, out)
                                              for k, v in defaults.items()}
        for vid, r in list(self.roots.items()):
            if r is base and vid != id(base):
                self.stale[vid] = why

    def assign_versioned(self, target: ast.Subscript, value_node: ast.expr, op, stmt) -> None:
        """``y[i] = v`` in a function with loops or branches. The generated
        code writes in place and undoes the write in the reverse sweep
        (:mod:`s2s_ad.reverse.inplace`), or, where the array's versions flow into
        another variable, assigns into a copy (``y = assign(y, i, v)``). Both
        equal Python's in-place write only when nothing else refers to the
        array: :func:`_sole_owner` checks it from the source."""
        if not isinstance(target.value, ast.Name) or target.value.id not in self.env:
            real_parts.refuse_part_write(self, target)
            structures.refuse_caller_array_write(self, target)
            raise self.src.error(target, "only a local array can be assigned into "
                                 "(`y[i] = ...` with `y` a variable of this function)")
        name = target.value.id
        problem = None if _copied_just_before(self.tree, stmt, name, self.src.globals) \
            or name in self.__dict__.get("owned_arrays", ()) else \
            _sole_owner(self.tree, name, self.makes_new, self.src.globals)
        if problem is not None:
            node, why = problem
            raise self.src.error(node, f"`{name}` is assigned into (line {target.lineno}) in a "
                                 f"function with loops or branches, so {why}")
        base = self.env[name]
        if isinstance(base, ir.Const) or base.kind not in ir.DIFFERENTIABLE:
            raise self.src.error(target, f"`{name}` is not an array")
        value = self.expr(value_node)
        if isinstance(value, tuple) or structures.is_structure(value):
            raise self.src.error(value_node, "a tuple or list cannot be assigned into an array")
        self.env[name] = self.emit_setitem(base, value, target, op, stmt, name)

    def emit_setitem(self, base: ir.Value, value, target: ast.Subscript, op, stmt,
                     name: str) -> ir.Value:
        """The ``array.setitem`` op of ``name[index] = value`` (``op`` the
        augmented assignment's operator: the element is read first)."""
        real_parts.refuse_read_only(self, base, target, name)
        index_exprs.refuse_write(self, base, value, target, name)
        operands = [base, value]
        index = self.assignment_index(target, operands)
        text = ast.unparse(stmt) if stmt is not None else None
        if op is not None:
            old = self.emit("array.getitem", [base] + operands[2:], target,
                            attrs={"index": _shift(index, -1)})
            operands[1] = self.emit(op, [old, value], stmt)
        write_dtypes.check_write(self, base, operands[1], target)
        return self.emit("array.setitem", operands, stmt or target, var=name, text=text,
                         attrs={"index": index})

    def track_views(self, prim: str, args: list, out: ir.Value, attrs=None) -> None:
        """Record which array ``out`` (of ``prim`` on ``args``, ``attrs`` the
        op's) shares memory with."""
        if prim == "getitem" and args and isinstance(args[0], ir.Value) \
                and args[0].kind in ("list", "tuple"):
            # an item of a list read when the code runs (a list grown at run
            # time, or one of any length a caller passed): the list, and
            # maybe the caller, holds that very array
            self.roots[id(out)] = None
        elif is_view(prim, args, attrs) and args and isinstance(args[0], ir.Value):
            a = args[0]
            self.roots[id(out)] = self.roots.get(id(a), a) if not self._is_param(a) else None
        else:
            self.roots[id(out)] = out

    def _is_param(self, v) -> bool:
        return any(v is p.value for p in getattr(self, "_params", []))

    def check_stale(self, name: str, value, node: ast.AST) -> None:
        why = self.stale.get(id(value))
        if why is not None:
            raise self.src.error(node, f"`{name}` cannot be read here: {why}")
        for item in held(value):  # a list or tuple holding a view: `rows = [M[0], M[1]]`
            why = self.stale.get(id(item))
            if why is not None:
                raise self.src.error(node, f"`{name}` cannot be read here: it holds an array "
                                     f"that {why.removeprefix('it ')}")


def _replaced(value, base, out):
    """``value`` (a list, tuple or dict known while lowering, nested, or a
    ``functools.partial`` made in the function) with every item (bound
    argument) that is ``base`` now ``out``: the array's later version, as
    the Python list (partial) holds the array that was written into. Lists and dicts
    are changed in place (other names may hold them), tuples made anew."""
    def one(v):
        return _swapped(v, base, out)
    if isinstance(value, tuple):
        return tuple(one(v) for v in value)
    if isinstance(value, BoundPartial):  # `f = partial(h, M)`: f holds M, written
        value.args[:] = [one(v) for v in value.args]
        value.keywords.update((k, one(v)) for k, v in value.keywords.items())
    if isinstance(value, structures.StaticList):
        value.items[:] = [one(v) for v in value.items]
    elif isinstance(value, (structures.StaticDict, structures.StaticObject)):
        for k in list(value.items):
            value.items[k] = one(value.items[k])
    return value


def _swapped(value, base, out):
    """``out`` for ``base``, a structure or partial holding it with it replaced
    (:func:`_replaced`), any other value as it is."""
    if value is base:
        return out
    if structures.is_structure(value) or isinstance(value, BoundPartial):
        return _replaced(value, base, out)
    return value


def held(value):
    """The values a list, tuple or dict known while lowering holds (nested)."""
    if isinstance(value, tuple):
        items = value
    elif isinstance(value, structures.StaticList):
        items = value.items
    elif isinstance(value, (structures.StaticDict, structures.StaticObject)):
        items = value.items.values()
    else:
        return
    for v in items:
        yield v
        yield from held(v)


CONSTRUCTORS = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "copy", "empty",
                "empty_like", "array", "astype", "flatten"}
VIEW_CALLS = {"reshape", "transpose", "ravel", "squeeze", "expand_dims", "asarray", "T"}


def _copied_just_before(tree: ast.FunctionDef, stmt, name: str, globals_=None) -> bool:
    """Is ``stmt`` (``name[i] = v``) right after ``name = np.copy(x)`` or
    ``name = np.zeros_like(x)`` in the same block, or after writes into
    ``name``'s elements that follow it? Then nothing else refers to the
    array it writes into (the form of a subscript assignment in
    s2s-ad's forward-mode modules, and of an indexed read's adjoint,
    :mod:`s2s_ad.frontend.scatter_calls`)."""
    if stmt is None:
        return False
    for node in walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or stmt not in block:
                continue
            k = block.index(stmt)
            while k > 0 and _writes_into(block[k - 1], name):
                k -= 1  # ``name[i] = a; name[j] += b``: its elements written since
            prev = block[k - 1] if k > 0 else None
            return (isinstance(prev, ast.Assign) and len(prev.targets) == 1
                    and isinstance(prev.targets[0], ast.Name) and prev.targets[0].id == name
                    and isinstance(prev.value, ast.Call) and not prev.value.keywords
                    and len(prev.value.args) == 1
                    and isinstance(prev.value.func, ast.Attribute)
                    and prev.value.func.attr in ("copy", "zeros_like")
                    and isinstance(prev.value.func.value, ast.Name)
                    and (prev.value.func.value.id in ("np", "numpy")
                         or (globals_ or {}).get(prev.value.func.value.id) is numpy))
    return False


def _writes_into(stmt: ast.stmt, name: str) -> bool:
    """``name[i] = v`` or ``name[i] op= v``, binding no name (no ``:=``)."""
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        else stmt.target if isinstance(stmt, ast.AugAssign) else None
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
        and target.value.id == name \
        and not any(isinstance(n, ast.NamedExpr) for n in walk(stmt))


def _sole_owner(tree: ast.FunctionDef, name: str, makes_new=None, globals_=None):
    """None when ``name`` holds an array only it refers to: bound once, before
    any loop or branch, to a fresh array (``np.zeros(...)``, ``np.copy(x)``,
    ``x.copy()``), and read only inside expressions that make new arrays —
    never bound to another name, put in a list, passed to a function of the
    user's, or viewed (``y[i]`` bound to a name, ``y.T``, ``np.reshape(y)``).
    ``name += v`` anywhere adds into that array in place, which is the sum
    ``name = name + v`` the lowering makes of it when nothing else refers to
    the array. Else (the node, why not). ``makes_new`` as for :func:`first_leak`."""
    binds = [n for n in walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             and any(isinstance(t, ast.Name) and t.id == name
                     for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    plain = [n for n in binds if not isinstance(n, ast.AugAssign)]
    if len(plain) == 1 and plain[0] in tree.body:
        binds = plain
    top = [s for s in tree.body if s in binds]
    if len(binds) != 1 or len(top) != 1 or isinstance(top[0], ast.AugAssign):
        node = binds[1] if len(binds) > 1 else (binds[0] if binds else tree)
        return node, "it must be bound once, outside loops and branches, to a new array"
    value = top[0].value
    if isinstance(value, ast.BinOp) and _constructed(value.left):
        value = value.left  # ``np.zeros_like(x) + 0.0``: a new array again
    # arithmetic makes a new array too (`Y = X * 1.0`, `Y = -X`, `Y = A @ B`)
    fresh = _constructed(value) or isinstance(value, (ast.BinOp, ast.UnaryOp))
    if not fresh:
        return value, "it must start as a new array (np.zeros(...), np.copy(x), x.copy(), ...)"
    return first_leak(tree, name, makes_new, globals_=globals_)


def _in_return(node: ast.AST, parents: dict, tree: ast.FunctionDef) -> bool:
    """``node`` is read by a ``return`` statement of ``tree`` itself (``return
    astype_like(dx, x)``), not of a function nested in it."""
    while not isinstance(node, ast.stmt):
        node = parents.get(id(node))
        if node is None or isinstance(node, ast.Lambda):
            return False
    if not isinstance(node, ast.Return):
        return False
    while node is not None and node is not tree:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        node = parents.get(id(node))
    return node is tree


def _constructed(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr in CONSTRUCTORS


def first_leak(tree: ast.FunctionDef, name: str, makes_new=None, reads: bool = False,
               globals_: dict | None = None, through=None):
    """None when every read of ``name`` uses its elements inside an
    expression that makes a new value, so that no other name, list, helper
    or view refers to its array; else (the node, why not). ``makes_new``
    tells calls that return a new array, never (a view of) their argument
    at a position (default :func:`_makes_new`);
    ``reads`` also accepts what only reads the values: ``z += name``,
    ``return name, w`` and a list of arrays passed to such a call
    (``np.stack([name, w])``). ``through`` tells calls that may return
    their argument but keep nothing (s2s-ad's ``unbroadcast``): such a call's
    result is followed as the name is (``dc + unbroadcast(name, c)`` is new)."""
    makes_new = makes_new or _makes_new
    parents = parents_of(tree)
    scalars = None  # computed once, where a piece is kept
    for node in walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        while through is not None and isinstance(parent, ast.Call) and node in parent.args \
                and not makes_new(parent, _position(parent, node)) and through(parent):
            node, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Store):
                continue
            if scalars is None:
                ints = int_names(tree, globals_)
                scalars = (ints, one_axis(tree, name, ints))
            if scalars[1] and is_int(parent.slice, scalars[0]):
                continue  # an element of an array of one axis: a NumPy scalar, a copy
            holder = parents.get(id(parent))
            if isinstance(holder, (ast.Assign, ast.AnnAssign)) and holder.value is parent:
                # ``z[j] = y[i]`` copies the elements; ``x = y[i]`` binds a view,
                # which view_binds follows (below)
                continue
            if isinstance(holder, ast.AugAssign) and isinstance(holder.target, ast.Subscript):
                continue
            if isinstance(holder, ast.Attribute) or (isinstance(holder, ast.Call)
                                                     and _is_view_call(holder)):
                return holder, "views of it are not supported"
            if isinstance(holder, ast.Call) and not makes_new(holder, _position(holder, parent)):
                return holder, "a piece of it cannot be passed to a function of yours (it " \
                               "could keep a view)"
            continue
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            continue
        if isinstance(parent, ast.Call) and node in parent.args \
                and makes_new(parent, _position(parent, node)):
            continue  # a NumPy function of it: a new array
        if isinstance(parent, ast.AugAssign) and parent.value is node and (
                reads or isinstance(parent.target, ast.Name)
                and _numpy_made(tree, parent.target.id)):
            continue  # ``z += name``, z an array: z takes the values, not the array
        if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)), ast.Return):
            continue  # returned, as a bare ``return name`` is: the caller owns it then
        if reads and isinstance(parent, (ast.Tuple, ast.List)) and isinstance(
                holder := parents.get(id(parent)), ast.Call) and parent in holder.args \
                and makes_new(holder):
            continue
        if isinstance(parent, ast.Return):
            continue
        if _in_return(node, parents, tree):
            continue  # read once every write is done, as the function ends
        if isinstance(parent, ast.Attribute) and parent.attr in ("shape", "size", "ndim", "dtype"):
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) \
                and parent.func.value is node and parent.func.attr in (
                    "sum", "mean", "max", "min", "prod", "copy", "dot"):
            continue
        return node, "nothing else may refer to it (no other names, lists, helpers or views)"
    return view_binds.problem(tree, name, makes_new, globals_)


def _position(call: ast.Call, arg: ast.expr) -> int | None:
    """Which positional argument of ``call`` ``arg`` is (None: not one)."""
    return next((k for k, a in enumerate(call.args) if a is arg), None)


def _makes_new(call: ast.Call, arg: int | None = None) -> bool:
    """A NumPy function (``np.sum``, ``np.where``, ...) or a builtin that
    returns a new value, never its argument or a view of it (``arg``: the
    argument asked about; any here)."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in ("len", "float", "abs", "int")
    return isinstance(f, ast.Attribute) and not _is_view_call(call)


def _is_view_call(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in VIEW_CALLS


def _shift(index: tuple, by: int) -> tuple:
    """The index with its operand numbers moved by ``by``."""
    def one(p):
        return p if p is None or p[0] != "op" else ("op", p[1] + by)
    return tuple(("slice",) + tuple(one(p) for p in item[1:]) if item[0] == "slice"
                 else one(item) if item[0] == "op" else item for item in index)



def _field(env: dict, node: ast.expr):
    """What ``p.a.b`` or ``p["k"].a`` reads from a structure known while
    lowering (a parameter's, frontend/pytrees.py), through its fields and
    constant keys, with no op; None for anything else."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _field(env, node.value)
        return base.items.get(node.attr) if isinstance(base, structures.StaticObject) else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base, key = _field(env, node.value), node.slice.value
        if isinstance(base, structures.StaticDict):
            return base.items.get(key)
        items = base.items if isinstance(base, structures.StaticList) else base
        if isinstance(items, (list, tuple)) and type(key) is int and -len(items) <= key < len(items):
            return items[key]
    return None
