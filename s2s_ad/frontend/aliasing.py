"""Augmented assignment to a name: NumPy writes into the array.

Contract: :class:`InPlaceNames` is mixed into the frontend's lowering.
``y += e`` (any of ``+= -= *= /= **=`` ...) is lowered as a new SSA value
``y_1 = y + e``. For a number that is what Python does (numbers are
immutable, ``+=`` binds a new one). For an array it is not: NumPy writes the
result into ``y``'s own memory, so every other name bound to that array,
every view of it (``y[1:]``, ``y.T``, ``y.reshape(...)``, ``np.asarray(y)``,
``y.ravel()``), every list holding it, and the caller (when ``y`` is an
argument or a view of one) sees the change. The lowering is kept equal to
NumPy by one of three means, checked before the op is emitted:

* in a function without loops or branches, the frontend knows which array
  each value shares memory with (``roots``, kept by
  :meth:`~s2s_ad.frontend.numpy_index.ArrayIndexing.track_views`): every other
  name bound to ``y``'s very array is rebound to the new value, as it would
  see the write (``z = y; y += x; return z`` returns the sum), and views of
  it taken earlier may no longer be read (a located refusal where one is);
  an array that is a view, an argument, a helper's result or held in a list
  is refused;
* in a function with loops or branches, only a ``y`` that owns its array is
  accepted, checked from the source (flow-insensitively, so for every
  iteration): each binding of ``y`` makes a new array or a number
  (arithmetic, ``np.zeros``, ``np.copy``, a NumPy function that is not a
  view) and every read of ``y`` uses its elements inside an expression that
  makes a new value (the analysis that guards subscript assignment,
  :func:`s2s_ad.frontend.numpy_index.first_leak`);
* in a function that does not use NumPy its values are numbers, for which
  ``op=`` binds a new one; where a caller passes it an array, it is lowered
  as NumPy code (:func:`s2s_ad.calls.collect`), so one of the two cases
  above applies.

Before → after, where ``z`` aliases ``y`` (no loops)::

    y = x * 1.0                 y = mul x 1.0
    z = y              ──▶      y_1 = add y x      (z is y_1 from here)
    y += x                      t1 = mul y_1 y_1
    return np.sum(z * z)        t2 = np.sum t1
"""

from __future__ import annotations

import ast
import builtins

import numpy

from s2s_ad import ir
from s2s_ad.frontend import own_helpers, real_parts, structures, tf_names, torch_names
from s2s_ad.frontend.numpy import METHODS
from s2s_ad.frontend.numpy_index import VIEW_CALLS, first_leak, held as _held, parents_of
from s2s_ad.syntax_walk import walk
from s2s_ad import source_text

SYMBOLS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.Pow: "**=",
           ast.Mod: "%=", ast.FloorDiv: "//="}
NUMPY_VIEWS = {id(getattr(numpy, n)) for n in ("asarray", "asanyarray", "reshape", "transpose",
                                               "ravel", "squeeze", "expand_dims",
                                               "broadcast_to", "atleast_1d", "atleast_2d")}
FRESH_BUILTINS = {id(f) for f in (float, int, abs, len, round, bool)}


class InPlaceNames:
    """Mixed into ``frontend._Lowering``: :meth:`check_inplace` before
    ``y op= e`` is emitted, :meth:`after_inplace` after."""

    def check_inplace(self, stmt: ast.AugAssign, old: ir.Operand) -> None:
        """Refuse ``stmt`` (``name op= e``, ``name`` holding ``old``) where
        writing into the array would be seen through another name."""
        name = stmt.target.id
        if not isinstance(old, ir.Value) or old.kind != "array":
            return  # a number: `op=` binds a new one
        real_parts.refuse_read_only(self, old, stmt, name)
        if self.control_flow:
            # (a loop is lowered again until its values' kinds settle, so a
            # float that becomes an array in the body is checked as one)
            params = {k for k, v in self.arguments.items()
                      if not isinstance(v, ir.Value) or v.kind == "array"}
            why = self.owner_problem(name, params)
        else:
            why = self.straight_problem(name, old)
        if why is not None:
            raise self.inplace_error(stmt, why)

    def inplace_error(self, stmt: ast.AugAssign, why: tuple):
        node, reason = why
        name = stmt.target.id
        op = SYMBOLS.get(type(stmt.op), "op=")
        sym = op[:-1]
        where = ""
        if node is not stmt and isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef):
            where = f" (line {node.lineno}: `{ast.unparse(node).splitlines()[0]}`)"
        head = (f"`{name} {op} ...` writes into the array `{name}` holds (NumPy's `{op}` works "
                "in place)")
        return self.src.error(stmt, f"{head}, but {reason}{where}, and the gradient would not "
                              f"see the change. Write `{name} = {name} {sym} ...`, which makes a "
                              "new array")

    def makes_new(self, call: ast.Call, arg: int | None = None) -> bool:
        """Whether ``call`` returns a new value, never an argument or a view
        of one (the callee resolved from the function's globals: a helper
        reached as ``module.helper(y)`` is not NumPy)."""
        tree = self.tree
        local = {n.id for n in walk(tree) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)} | {a.arg for a in walk(tree.args)
                                                      if isinstance(a, ast.arg)}
        return _fresh_call(call, self, local, arg)

    def passes_through(self, call: ast.Call) -> bool:
        """``call`` is to one of s2s-ad's own helpers that may return (a view
        of) an argument but keep nothing (``unbroadcast``, ``astype_like``)."""
        return isinstance(call.func, ast.Name) \
            and own_helpers.returns_argument(self.src.globals.get(call.func.id))

    def owner_problem(self, name: str, params: set) -> tuple | None:
        """From the source: None when ``name`` always owns its array (see
        the module docstring), else (a node, why not)."""
        tree = self.tree
        parents = parents_of(tree)
        local = {n.id for n in walk(tree) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)} | set(self.arguments)
        leak = first_leak(tree, name, makes_new=self.makes_new, reads=True,
                          through=self.passes_through)
        if leak is not None:
            node, why = leak
            return _statement(node, parents), f"`{name}` must own its array: {why}"
        for node in walk(tree):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                value = _bound_value(node, parents)
                if value is not _SELF and not (value is not None and _fresh(value, self, local)):
                    stmt = _statement(node, parents)
                    return stmt, f"`{name}` may be bound to an array something else refers to " \
                                 "(another name, a view, a helper's result, an argument)"
        if name in params and not _rebound_first(tree, name):
            return tree, f"`{name}` is a parameter and may still hold the caller's array here " \
                         f"(rebind it first, before any loop or branch: `{name} = {name} * 1.0`)"
        return None

    def straight_problem(self, name: str, old: ir.Value) -> tuple | None:
        """Without loops or branches: None when the frontend knows ``old`` is
        an array of this function's own making, not a view, held by no list
        and given to no helper; else (a node, why not)."""
        tree = self.tree
        if self._is_param(old):
            return tree, f"`{name}` is the array the caller passed in (annotate the " \
                         "parameter `: float` if it is a number)"
        if id(old) not in self.roots:
            producer = next((op for op in self.ops if isinstance(op, ir.Op) and op.out is old),
                            None)
            if not (producer is not None and producer.callee is not None
                    and returns_fresh(producer.callee.fn)):
                return tree, f"`{name}` may be an array created elsewhere (a helper's result " \
                             "may be its argument)"
            self.roots[id(old)] = old  # the helper made it: only this name refers to it
        root = self.roots[id(old)]
        made = self.defs.get(id(old))
        if root is None and made is not None and made.prim == "getitem":
            return tree, f"`{name}` is an item of the list `{made.args[0].var or made.args[0].name}`, " \
                         "which holds that very array (so may the caller, and the tapes of " \
                         "helpers it was passed to)"
        if root is None:
            return tree, f"`{name}` is a view of an array the caller passed in"
        if root is not old:
            return tree, f"`{name}` is a view of `{root.var or root.name}`, which would change too"
        shares = {id(old)} | {v for v, r in self.roots.items() if r is old}
        for k, v in self.env.items():
            if structures.is_structure(v) and any(id(a) in shares for a in _held(v)):
                return tree, f"the list or tuple `{k}` holds it"
        for op in self.ops:
            if isinstance(op, ir.Op) and op.callee is not None and any(
                    isinstance(a, ir.Value) and id(a) in shares for a in op.args):
                return tree, f"it was passed to `{op.callee.fn.__name__}` (line {op.loc.line}), " \
                             "whose result may be that very array"
        return None

    def given_to_helper(self, base: ir.Value):
        """The call of a function of the user's that was given ``base``'s
        array (or a view of it) and may return it or a view of it (its result
        is not only numbers, nor always a new array), or None."""
        shares = {id(base)} | {v for v, r in self.roots.items() if r is base}
        for op in self.ops:
            if isinstance(op, ir.Op) and op.callee is not None and any(
                    isinstance(a, ir.Value) and id(a) in shares for a in op.args):
                outs = op.out if isinstance(op.out, tuple) else (op.out,)
                if all(isinstance(o, ir.Value) and o.kind in ("float", "int", "bool")
                       for o in outs) or returns_fresh(op.callee.fn):
                    continue
                return op
        return None

    def after_inplace(self, stmt: ast.AugAssign, old: ir.Operand, new: ir.Operand) -> None:
        """Without loops or branches: every name bound to ``old``'s array
        sees the write, and its views may not be read any more."""
        if not self.array_mode or self.control_flow or not isinstance(old, ir.Value) \
                or old.kind != "array":
            return
        name = stmt.target.id
        sym = SYMBOLS.get(type(stmt.op), "op=")[:-1]
        self.mutated(old, new, f"it is a view of `{name}`, which line {stmt.lineno} changes in "
                     f"place since (`{ast.unparse(stmt)}`); take a copy (np.copy) before, or "
                     f"write `{name} = {name} {sym} ...`")


_SELF = object()


def returns_fresh(fn) -> bool:
    """Does every ``return`` of the user function ``fn`` give a new array,
    never an argument, a view or something kept elsewhere? Each returns an
    expression that makes a new value (arithmetic, a NumPy function that is
    not a view, ``np.eye(3)``) or a local name every binding of which does
    (``R = np.zeros((3, 3))``, then written into). Read from the source;
    False where it cannot be read."""
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(source_text.text(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    if not isinstance(tree, ast.FunctionDef):
        return False
    return _fresh_returns(tree, _Globals(fn.__globals__))


def _fresh_returns(tree: ast.FunctionDef, callee) -> bool:
    """:func:`returns_fresh` of a ``def`` read from the source. A ``return
    inner()`` of a function ``inner`` defined in it counts where every
    ``return`` of ``inner`` gives a new array too (a nested helper building
    a matrix, ``R = np.zeros((3, 3))`` written into, then returned)."""
    if any(isinstance(n, (ast.Lambda, ast.Global, ast.Nonlocal, ast.AsyncFunctionDef))
           for n in walk(tree)):
        return False
    nested = {n.name: n for n in _own_nodes(tree) if isinstance(n, ast.FunctionDef)}
    params = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}
    local = {n.id for n in walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)} | params
    parents = parents_of(tree)
    returns = [n for n in _own_nodes(tree) if isinstance(n, ast.Return)]
    if not returns:
        return False
    for r in returns:
        if r.value is None:
            return False
        if isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Name) \
                and r.value.func.id in nested and r.value.func.id not in params:
            if not _fresh_returns(nested[r.value.func.id], callee):
                return False
        elif isinstance(r.value, ast.Name):
            if r.value.id in params:
                return False
            binds = [n for n in walk(tree) if isinstance(n, ast.Name)
                     and n.id == r.value.id and isinstance(n.ctx, ast.Store)]
            if not binds:
                return False  # a name of an enclosing function or a global
            for b in binds:
                holder = parents.get(id(b))
                if isinstance(holder, ast.AugAssign):
                    continue
                if not (isinstance(holder, ast.Assign) and holder.targets == [b]
                        and _fresh(holder.value, callee, local)):
                    return False
        elif not _fresh(r.value, callee, local):
            return False
    return True


def _own_nodes(tree: ast.FunctionDef):
    """The nodes of ``tree``'s body, not those inside a function defined in it
    (whose ``def`` node itself is one)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


class _Globals:
    """What :func:`_fresh` reads of a lowering (``lo.src.globals``), for
    another function's globals."""

    def __init__(self, names: dict):
        self.src = self
        self.globals = names
"""The binding is the augmented assignment of the name itself."""


def _bound_value(name: ast.Name, parents: dict):
    """What a binding of ``name`` binds it to: an expression, ``_SELF`` for
    ``name op= e``, or None when unknown (a loop variable, an unpacked call)."""
    path = []
    node, parent = name, parents.get(id(name))
    while isinstance(parent, (ast.Tuple, ast.List)):
        path.append(parent.elts.index(node))
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.AugAssign):
        return _SELF
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is not None:
        value = parent.value
        for k in reversed(path):
            if not isinstance(value, (ast.Tuple, ast.List)) or k >= len(value.elts):
                return None
            value = value.elts[k]
        return value
    if isinstance(parent, ast.For) and not path and isinstance(parent.iter, ast.Call) \
            and isinstance(parent.iter.func, ast.Name) and parent.iter.func.id == "range":
        return ast.Constant(0)  # an int
    return None


def _rebound_first(tree: ast.FunctionDef, name: str) -> bool:
    """The first statement naming the parameter ``name`` is, at the top
    level, ``name = <a new array>``: the caller's array is not held after it.
    (That value is checked to be new with the other bindings.)"""
    for stmt in tree.body:
        if any(isinstance(n, ast.Name) and n.id == name for n in walk(stmt)):
            return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name
    return False


def _fresh(node: ast.expr, lo, local: set) -> bool:
    """``node`` certainly makes a new value (a new array or a number)."""
    if isinstance(node, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(node, ast.IfExp):
        return _fresh(node.body, lo, local) and _fresh(node.orelse, lo, local)
    if isinstance(node, ast.Call):
        return _fresh_call(node, lo, local)
    return False


def _fresh_call(call: ast.Call, lo, local: set, arg: int | None = None) -> bool:
    """A call that returns a new value, never an argument or a view of one
    (``arg``: never the argument at that position): a NumPy function other
    than the views, a method such as ``.sum()`` or ``.copy()``,
    ``float``/``len``/..., s2s-ad's own helpers (by their text); not a
    function of the user's."""
    f = call.func
    path = []
    while isinstance(f, ast.Attribute):
        path.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name):
        return False
    if f.id in local:
        # a method of a local value: x.sum(), x.copy(); not x.reshape(...)
        return len(path) == 1 and path[0] in METHODS and path[0] not in VIEW_CALLS
    obj = lo.src.globals.get(f.id, getattr(builtins, f.id, None))
    for attr in reversed(path):
        obj = getattr(obj, attr, None)
    if id(obj) in FRESH_BUILTINS or torch_names.torch_name(obj) in torch_names.FRESH \
            or tf_names.tf_name(obj) in tf_names.FRESH:
        return True
    if own_helpers.is_helper(obj, "add_at") or own_helpers.is_helper(obj, "add_scattered") \
            or own_helpers.numpy_add_at(call, lo.src.globals, local):
        return True  # adds into its first argument in place and keeps nothing: returns None
    prim = own_helpers.primitive(obj)
    if prim is not None:  # own(v): a copy (a NumPy scalar it returns cannot change)
        returned = own_helpers.RETURNS_ARGUMENT.get(prim.removesuffix(".0").removesuffix(".1"),
                                                    ())
        return arg is not None and arg not in returned if returned else True
    module = getattr(obj, "__module__", None) or ""
    if module == "math" or getattr(lo.src.globals.get(f.id), "__name__", None) == "math":
        return True  # math functions return floats
    numpy_fn = module == "numpy" or module.startswith("numpy.") or isinstance(obj, numpy.ufunc)
    return numpy_fn and id(obj) not in NUMPY_VIEWS


def _statement(node: ast.AST, parents: dict) -> ast.AST:
    """The statement ``node`` is part of (for the message)."""
    while not isinstance(node, ast.stmt) and id(node) in parents:
        node = parents[id(node)]
    return node
