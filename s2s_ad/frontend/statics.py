"""Static values: strings, ``None`` and bools that select code.

Contract: a parameter given a string, ``None`` or a bool (``mode="l2"``,
``reduce=None``, ``flag=True``) is *static*: it is lowered as the constant
it holds in the call the code is generated for (``lower(..., statics=)``),
so ``if mode == "l2":``, ``if reduce is None:`` and ``if flag:`` are
decided while lowering and only the branch taken is generated. Static
values get no adjoint, and never reach an arithmetic op (refused, located).
:func:`compare` lowers every comparison: chained ones (``0.0 < x < 2.0`` as
``0.0 < x and x < 2.0``, the middle operand evaluated once), ``is``/``is
not`` (folded: a number or an array is never ``None``), ``in``/``not in``
over a tuple or list of constants, and ``==``/``!=`` between static values
(folded).

Before → after, generated for ``mode="l2"``::

    def loss(x, mode="l2"):          def grad_loss(x, mode='l2', *, dout=1.0):
        if mode == "l2":                 if mode != 'l2':
            return x * x                     raise ValueError(...)
        return abs(x)                    dx = dout * x ...
"""

from __future__ import annotations

import ast
import inspect
import types

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import write_dtypes
from s2s_ad.frontend.numpy import SIGNATURES
from s2s_ad.frontend.library_names import LIBRARY_MODULES
from s2s_ad.syntax_walk import walk

COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
           ast.NotEq: "ne"}
FOLD = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
        ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


ORDER = {**FOLD, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
         ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


class StaticUse(SourceError):
    """A parameter used as a static value (compared with a string) where it
    was lowered as a number or array: a call giving it a string gets code of
    its own."""

    def __init__(self, err: SourceError):
        super().__init__(err.message, err.file, err.line, err.col, err.source_line)


def is_static_value(value) -> bool:
    """Whether a Python value is static when passed as an argument."""
    return value is None or isinstance(value, (str, bool))


def static_at_candidate(value) -> bool:
    """Whether a value is static when passed to a parameter that may be
    static (:func:`candidates`): a static value, or a tuple of ints (an
    ``axis``; the code is generated for it, an int having no derivative)."""
    return is_static_value(value) or (value.__class__ is tuple and all(
        v.__class__ is int for v in value))


def static(operand) -> bool:
    """Whether ``operand`` is a static constant (a string or None)."""
    return isinstance(operand, ir.Const) and (operand.value is None
                                               or isinstance(operand.value, str))


def describe(operand) -> str:
    return repr(operand.value)


def compare(lo, node: ast.Compare, var: str | None, hint: str | None) -> ir.Operand:
    """Lower ``node`` (see the module docstring)."""
    if len(node.ops) > 1:
        # a < b < c is a < b and b < c, b evaluated once: bound to a name
        # spelled as b's text (never an identifier), then the conjunction
        # lowered with Python's short circuit.
        left: ast.expr = node.left
        parts, names = [], []
        for k, (op, right) in enumerate(zip(node.ops, node.comparators)):
            if k < len(node.comparators) - 1 and not isinstance(right, (ast.Name, ast.Constant)):
                name = f"({ast.unparse(right)})"
                lo.env[name] = operand(lo, right) if not names else _later(lo, right)
                names.append(name)
                right = _copy(ast.Name(name, ast.Load()), right)
            parts.append(_copy(ast.Compare(left, [op], [right]), node))
            left = right
        try:
            return lo.bool_op(_copy(ast.BoolOp(ast.And(), parts), node), var)
        finally:
            for name in names:
                lo.env.pop(name, None)
    kind = write_dtypes.kind_test(lo, node, var, hint)
    if kind is not None:
        return kind
    op = type(node.ops[0])
    if op in (ast.In, ast.NotIn):
        return _membership(lo, node, var, hint)
    left = operand(lo, node.left)
    right = operand(lo, node.comparators[0])
    if op in (ast.Is, ast.IsNot):
        return _identity(lo, node, left, right)
    if op in (ast.Eq, ast.NotEq) and (_ints(left) or _ints(right)) \
            and isinstance(left, tuple) and isinstance(right, tuple):
        # a static tuple of ints (an axis) and a tuple written out: decided now
        if _ints(left) and _ints(right):
            return ir.Const(FOLD[op](tuple(a.value for a in left),
                                     tuple(a.value for a in right)))
        raise StaticUse(lo.src.error(node, f"`{ast.unparse(node)}` compares a tuple lowered "
                                     "as numbers (a parameter's) with a tuple of ints; name "
                                     "its value (statics=, --static)"))
    if static(left) or static(right):
        if isinstance(left, ir.Const) and isinstance(right, ir.Const) and op in FOLD:
            return ir.Const(FOLD[op](left.value, right.value))
        value = right if static(left) else left
        if id(value) in lo.param_ids:
            # a parameter compared with a string: it is static when the
            # call gives it a string (the API generates code per value)
            raise StaticUse(lo.src.error(node, f"`{ast.unparse(node)}` compares the parameter "
                                         f"`{value.var}`, lowered as a number or an array, "
                                         f"with {describe(left if static(left) else right)}; "
                                         "give it a string default, annotate it `str`, or "
                                         "name its value (statics=, --static)"))
        raise lo.src.error(node, f"`{ast.unparse(node)}` compares a string or None "
                           f"({describe(left if static(left) else right)}) with a value "
                           "computed from the arguments; static values (strings, None) can be "
                           "compared with == and != with other static values only")
    prim = COMPARE.get(op)
    if prim is None:
        raise lo.src.error(node, f"the comparison {op.__name__} is not supported")
    if _number(left) and _number(right) and op in ORDER:
        # two numbers known while lowering (len of a structure, a shape, an
        # unrolled loop's index, a module constant): decided now, so that
        # `if len(xs) == 0: return ...` ends a recursion over a structure
        # instead of lowering the rest for an empty one
        return ir.Const(bool(ORDER[op](left.value, right.value)))
    return lo.emit(prim, [left, right], node, var, hint=hint)


ORDER = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
         ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
         ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def _ints(operand) -> bool:
    """A tuple of int constants (a static tuple, or one written out)."""
    return isinstance(operand, tuple) and all(
        isinstance(a, ir.Const) and type(a.value) is int for a in operand)


def _number(operand) -> bool:
    return isinstance(operand, ir.Const) and type(operand.value) in (int, float)


def _copy(new: ast.AST, old: ast.AST) -> ast.AST:
    ast.copy_location(new, old)
    new.end_lineno, new.end_col_offset = old.end_lineno, old.end_col_offset
    return new


def _later(lo, node: ast.expr):
    """The operand of a chained comparison after the second (``c`` of
    ``a < b < c < d``): evaluated before the first test, which Python would
    skip if ``a < b`` fails; harmless for the pure expressions s2s-ad
    accepts, except one that may raise: refused then."""
    if not isinstance(node, (ast.Name, ast.Constant)):
        raise lo.src.error(node, "a chained comparison of more than two tests must compare "
                           "names or constants after the first; split it with `and`")
    return operand(lo, node)


def operand(lo, node: ast.expr):
    """``node`` lowered; a string or ``None`` literal is a static constant."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
        return ir.Const(node.value)
    return lo.expr(node)


def _identity(lo, node: ast.Compare, left, right) -> ir.Const:
    """``a is b``: decided while lowering. A number, an array or a list is
    never None; two static values are compared as Python would."""
    negate = isinstance(node.ops[0], ast.IsNot)
    if isinstance(left, ir.Const) and isinstance(right, ir.Const):
        return ir.Const(FOLD[type(node.ops[0])](left.value, right.value))
    for a, b in ((left, right), (right, left)):
        if isinstance(b, ir.Const) and b.value is None and not isinstance(a, ir.Const):
            if id(a) in lo.param_ids:
                # a parameter lowered as a number or an array: the code
                # checks that it is not given None (ir.Function.not_none)
                lo.not_none[a.var] = None
            return ir.Const(negate)
    raise lo.src.error(node, f"`{ast.unparse(node)}`: `is` is supported to test for None "
                       "(`x is None`, `x is not None`); compare numbers with `==`")


def _membership(lo, node: ast.Compare, var, hint) -> ir.Operand:
    """``mode in ("l1", "l2")``: a static value in a tuple or list of
    constants, decided while lowering; a number in a tuple of numbers is
    ``x == a or x == b``."""
    container = node.comparators[0]
    negate = isinstance(node.ops[0], ast.NotIn)
    if not isinstance(container, (ast.Tuple, ast.List, ast.Set)):
        decided = _in_structure(lo, node.left, container)
        if decided is None:
            raise lo.src.error(container, "`in` is supported with a tuple or list written out "
                               "(`mode in (\"l1\", \"l2\")`), or a constant key in a dict "
                               "known while lowering (`\"children\" in node`)")
        return ir.Const(decided != negate)
    left = operand(lo, node.left)
    items = [operand(lo, e) for e in container.elts]
    if isinstance(left, ir.Const) and all(isinstance(i, ir.Const) for i in items):
        return ir.Const((left.value in [i.value for i in items]) != negate)
    err = lo.src.error(node, f"`{ast.unparse(node)}`: `in` is decided while lowering, "
                       "between static values (strings, None, bools, constants); for numbers "
                       "computed from the arguments write `x == a or x == b`")
    if id(left) in lo.param_ids and any(static(i) for i in items):
        raise StaticUse(err)  # a string parameter: code per value (see compare)
    raise err


def _in_structure(lo, left: ast.expr, container: ast.expr) -> bool | None:
    """``"children" in node``: a static value among the keys of a dict (or
    the items of a list or tuple of static values) known while lowering, a
    structure parameter's or one built in the function; None for anything
    else."""
    from s2s_ad.frontend.structures import StaticDict, StaticList
    if not isinstance(container, (ast.Name, ast.Subscript, ast.Attribute)):
        return None
    try:
        held = lo.expr(container)
        key = operand(lo, left)
    except SourceError:
        return None
    if not isinstance(key, ir.Const):
        return None
    if isinstance(held, ir.Value) and held.kind == "float" \
            and any(p.value is held for p in getattr(lo, "params_so_far", ())):
        # `"k" in p` on a parameter lowered as a number: lower it for the
        # structure the call gives it
        from s2s_ad.frontend import param_uses
        raise param_uses.SequenceParameter(held.var, *param_uses.where(lo, container, (
            f"parameter {held.var!r} is used as a structure (`{ast.unparse(container)}`); "
            "call the gradient with the value (a dict, list or tuple), which generates the "
            "code for its structure")))
    if isinstance(held, StaticDict):
        return key.value in held.items
    items = held.items if isinstance(held, StaticList) else held if isinstance(held, tuple) else None
    if items is not None and all(isinstance(i, ir.Const) and is_static_value(i.value)
                                 for i in items):
        return key.value in [i.value for i in items]
    return None


AXIS_AT = {name: SIGNATURES[f"np.{ {'amax': 'max', 'amin': 'min'}.get(name, name)}"].index("axis")
           for name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std",
                        "median", "nansum", "nanmean", "cumsum", "cumprod", "all", "any",
                        "quantile", "percentile")}
"""The NumPy reductions whose ``axis`` may be a parameter given None or a
tuple (:func:`_axis_params`): the position it may be given at, from
:data:`s2s_ad.frontend.numpy.SIGNATURES` (``np.amax`` is ``np.max``)."""


def _axis_params(fn, node: ast.Call, params: set) -> set:
    """The parameters ``node`` passes as an ``axis`` (``axis=ax``,
    ``np.sum(x, ax)``, ``x.sum(ax)``): given None or a tuple, the code is
    generated for that value (an int is read where the code runs)."""
    given = [k.value for k in node.keywords if k.arg == "axis"]
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in AXIS_AT:
        at = AXIS_AT[func.attr]
        if not (isinstance(func.value, ast.Name) and isinstance(
                fn.__globals__.get(func.value.id), types.ModuleType)):
            at -= 1  # a method: x.sum(ax)
        if len(node.args) > at:
            given.append(node.args[at])
    return {a.id for a in given if isinstance(a, ast.Name) and a.id in params}


def candidates(fn, _seen: set | None = None) -> frozenset:
    """The parameters of ``fn`` that may receive a static value: those with a
    string, None or bool default or a ``str``/``bool`` annotation, those its
    body compares with a string or None, tests with ``is`` or ``match``-es, or
    reads a table of functions at (``ACTIVATIONS[name](x)``) or passes as a
    NumPy ``axis`` (:func:`_axis_params`), and those it passes on to such a
    parameter of a function of its module (``g(x, mode)``). A call giving one
    of them a string, None or a bool gets code generated for that value."""
    _seen = set() if _seen is None else _seen
    if id(fn) in _seen or not isinstance(fn, types.FunctionType):
        return frozenset()
    _seen.add(id(fn))
    try:
        sig = inspect.signature(fn)
        from s2s_ad.frontend import source  # the tree, as the frontend reads it
        tree = source.locate(fn).tree
    except Exception:  # no source: locate refuses it later, with its own message
        return frozenset()
    params = set(sig.parameters)
    out = {p.name for p in sig.parameters.values()
           if (p.default is not p.empty and is_static_value(p.default))
           or p.annotation in (str, bool, "str", "bool")}
    for node in walk(tree):
        if isinstance(node, ast.Call):
            out |= _axis_params(fn, node, params)
        if isinstance(node, ast.Match) and isinstance(node.subject, ast.Name) \
                and node.subject.id in params:
            out.add(node.subject.id)  # `match mode:` selects code (frontend/checks.py)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) \
                and isinstance(node.func.slice, ast.Name) and node.func.slice.id in params:
            out.add(node.func.slice.id)  # ACTIVATIONS[name](x): a key of a table of functions
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            literal = any(isinstance(e, ast.Constant) and (e.value is None
                                                          or isinstance(e.value, str))
                          or isinstance(e, ast.Tuple) and e.elts and all(
                              type(getattr(i.operand if isinstance(i, ast.UnaryOp) else i,
                                           "value", None)) is int
                              for i in e.elts)  # `ax != (-1, 0)`: a static axis's guard
                          for e in walk(node))
            if literal or any(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops):
                out |= {e.id for e in sides if isinstance(e, ast.Name) and e.id in params}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callee = fn.__globals__.get(node.func.id)
            if not isinstance(callee, types.FunctionType) \
                    or (callee.__module__ or "").split(".")[0] in LIBRARY_MODULES or not any(
                    isinstance(a, ast.Name) and a.id in params
                    for a in [*node.args, *(k.value for k in node.keywords)]):
                continue
            inner = candidates(callee, _seen)
            names = list(inspect.signature(callee).parameters)
            for i, a in enumerate(node.args):
                if isinstance(a, ast.Name) and i < len(names) and names[i] in inner:
                    out.add(a.id)
            for k in node.keywords:
                if isinstance(k.value, ast.Name) and k.arg in inner:
                    out.add(k.value.id)
    return frozenset(out & params)
