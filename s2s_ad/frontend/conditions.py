"""Conditions people write: ``all``/``any``, a list's truth, ``isinstance``.

Contract: mixed into no class; the frontend calls these while lowering.

* :func:`truth` — ``if xs:`` / ``if not xs:`` on a list or tuple: true when
  it is not empty (decided while lowering when its length is known, else
  ``len(xs) > 0`` when the code runs);
* :func:`all_any` — ``all(v > 0 for v in xs)``, ``any(...)``, ``all(flags)``
  over a sequence known while lowering (a list or tuple built in the
  function, ``range(constant)``, a list parameter given its length: the code
  is then generated per length): ``c0 and c1 and ...`` with Python's
  short-circuit, so an item after the first false one is not evaluated;
* :func:`isinstance_call` — decided while lowering from what the value is: a
  static value or a structure by its class; a number parameter as a
  ``float``, an array parameter as an ``ndarray`` (the cache keys code on
  number versus array). Where the decision would differ for another value
  the same code may receive (an ``int`` for ``isinstance(x, float)``, a NumPy
  scalar or another array type for ``isinstance(x, np.ndarray)``), the
  generated code checks the class it was decided for and raises
  ``TypeError`` otherwise (a ``check`` op, :mod:`s2s_ad.frontend.checks`).

Before → after::

    if all(c > 0 for c in cs):         t1 = gt cs_0 0.0
        ...                            t3 = if t1 then: t2 = gt cs_1 0.0; yield t2 else: yield False
"""

from __future__ import annotations

import ast
import builtins
import copy
import types

import numpy

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import source, structures, syntax
from s2s_ad.frontend.runtime_checks import raise_unless
from s2s_ad.syntax_walk import walk


def truth(lo, test: ast.expr) -> ir.Operand:
    """The condition ``test`` (see the module docstring): a list's truth, or
    the expression lowered."""
    test_node = test
    if isinstance(test, ast.Name) and test.id in lo.env and "len" not in lo.env:
        value = lo.env[test.id]
        if isinstance(value, (tuple, structures.StaticList, structures.StaticDict)) or (
                isinstance(value, ir.Value) and value.kind in ("list", "tuple")):
            # as `len(xs) > 0`, lowered as the user would write it: the code for a list of
            # any length and the code for one length take the same seed name
            size = ast.Call(ast.Name("len", ast.Load()), [ast.Name(test.id, ast.Load())], [])
            test = ast.Compare(size, [ast.Gt()], [ast.Constant(0)])
            return lo.expr(ast.fix_missing_locations(ast.copy_location(test, test_node)))
        if _read_as_sequence(lo.tree, test.id):
            # a parameter the function reads as a list elsewhere: generated per length
            structures._param_used_as_sequence(lo, value, test)
    return lo.expr(test)


def _read_as_sequence(tree: ast.AST, name: str) -> bool:
    """Whether ``name`` is iterated, indexed, or given to ``len``/``sum``/
    ``min``/``max``/``sorted`` somewhere in ``tree``."""
    def is_name(e) -> bool:
        return isinstance(e, ast.Name) and e.id == name
    for n in walk(tree):
        if isinstance(n, (ast.For, ast.comprehension)) and is_name(n.iter):
            return True
        if isinstance(n, ast.Subscript) and is_name(n.value):
            return True
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            continue
        if n.func.id == "zip" and any(is_name(a) for a in n.args):
            return True
        # the first argument of these; of min/max only the one argument
        # (max(x, y, 0.25) compares numbers)
        if n.func.id in ("len", "sum", "sorted", "enumerate", "reversed", "min", "max") \
                and n.args and is_name(n.args[0]) \
                and (n.func.id not in ("min", "max") or len(n.args) == 1):
            return True
    return False


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], ast.Load()), node)
        return node


def all_any(lo, fn, node: ast.Call, var: str | None) -> ir.Operand:
    """``all(...)``/``any(...)`` of one argument (see the module docstring)."""
    word = fn.__name__
    if node.keywords or len(node.args) != 1:
        raise lo.src.error(node, f"`{word}` takes one argument")
    arg = node.args[0]
    if isinstance(arg, ast.GeneratorExp):
        if len(arg.generators) != 1 or arg.generators[0].ifs or arg.generators[0].is_async:
            raise lo.src.error(arg, f"`{word}` of a generator with one `for` and no `if` is "
                               "supported")
        gen = arg.generators[0]
        target, elt, over = gen.target, arg.elt, gen.iter
    else:
        elt = ast.copy_location(ast.Name("<item>", ast.Load()), arg)
        target = ast.copy_location(ast.Name("<item>", ast.Store()), arg)
        over = arg
    if isinstance(over, ast.Name) and isinstance(lo.env.get(over.id), ir.Value) \
            and lo.env[over.id].kind == "list" and over.id not in lo.arguments:
        raise lo.src.error(over, f"`{word}` over a list grown when the code runs is not "
                           "supported; write the loop (`ok = True`, then `ok = ok and ...` "
                           "in a `for`)")
    items = structures.iteration(lo, over)
    mark = len(lo.spliced)
    try:
        elts = []
        for k, item in enumerate(items):
            names: dict = {}
            _bind(lo, target, item, f"{ast.unparse(over)}[{k}]", over, names)
            elts.append(_Rename(names).visit(copy.deepcopy(elt)))
        if not elts:
            return ir.Const(fn is builtins.all)
        if len(elts) == 1:
            return lo.condition(elts[0])
        op = ast.And() if fn is builtins.all else ast.Or()
        return lo.bool_op(ast.copy_location(ast.BoolOp(op, elts), node), var)
    finally:
        for name in lo.spliced[mark:]:
            lo.env.pop(name, None)
        del lo.spliced[mark:]


def _bind(lo, target: ast.expr, value, text: str, at: ast.AST, names: dict) -> None:
    if isinstance(target, ast.Name):
        names[target.id] = syntax.bound(lo, f"{text}", value, at).id
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        parts = structures.unpack(lo, value, target, at)
        if len(parts) != len(target.elts):
            raise lo.src.error(target, f"cannot unpack {len(parts)} values into "
                               f"{len(target.elts)} names")
        for k, (t, v) in enumerate(zip(target.elts, parts)):
            _bind(lo, t, v, f"{text}[{k}]", at, names)
        return
    raise lo.src.error(target, "only names and tuples of names are bound by this `for`")


# -- isinstance ----------------------------------------------------------------

_SEEN_AS = {"float": (float, "float"), "int": (int, "int"), "bool": (bool, "bool"),
            "array": (numpy.ndarray, "numpy.ndarray")}


def isinstance_call(lo, node: ast.Call, var: str | None) -> ir.Operand:
    """``isinstance(x, C)`` decided while lowering (see the module docstring)."""
    if node.keywords or len(node.args) != 2:
        raise lo.src.error(node, "`isinstance` takes two arguments")
    classes = _classes(lo, node.args[1])
    value = lo.expr(node.args[0])
    if isinstance(value, ir.Const):
        return ir.Const(isinstance(value.value, classes))
    if isinstance(value, tuple):
        return ir.Const(issubclass(tuple, classes))
    if isinstance(value, structures.StaticList):
        return ir.Const(issubclass(list, classes))
    if isinstance(value, structures.StaticDict):
        return ir.Const(issubclass(dict, classes))
    if isinstance(value, structures.StaticObject):
        return ir.Const(issubclass(value.cls, classes))
    if not (isinstance(value, ir.Value) and value.kind in _SEEN_AS):
        raise lo.src.error(node.args[0], f"`isinstance` of {structures.describe(value)} is not "
                           "supported: it is decided while the code is generated, for a "
                           "number, an array, a static value or a structure")
    cls, name = _SEEN_AS[value.kind]
    decided = issubclass(cls, classes)
    others = (int, float) if value.kind in ("float", "int") else ()
    if value.kind == "array" or any(issubclass(o, classes) != decided for o in others):
        # the code is for a value of class `cls`: checked when it runs
        what = ast.unparse(node.args[0])
        raise_unless(lo, value, node, f"{what}: a {name}", "TypeError",
                     f"the code was generated for `{what}` of class {name.split('.')[-1]} "
                     f"(`{ast.unparse(node)}` was decided for it); pass a value of that class",
                     isinstance=name)
    return ir.Const(decided)


def class_tested(tree: ast.AST, name: str, scope: dict | None = None,
                 seen: set | None = None) -> bool:
    """Whether ``tree`` tests the class of ``name`` (``isinstance(name,
    ...)``) or uses it as only a structure can be used (``"key" in name``,
    ``name["key"]``, ``if not name:``), itself or (``scope``: the globals of
    ``tree``'s function) in a function of the module it passes ``name`` to
    (``evaluate(tree, x)`` testing ``isinstance(node, float)``). The
    parameter ``name`` is then a number unless a caller passes an array (in
    NumPy code too): a number, an array and a structure (a tree a helper
    recurses over) each get their own code."""
    if any(_tests_class(n, name) for n in walk(tree)):
        return True
    if scope is None:
        return False
    seen = set() if seen is None else seen
    for n in walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            continue
        fn = scope.get(n.func.id)
        if not isinstance(fn, types.FunctionType) or fn in seen:
            continue
        at = [k for k, a in enumerate(n.args) if _is_name(a, name)]
        named = [k.arg for k in n.keywords if k.arg and _is_name(k.value, name)]
        if not at and not named:
            continue
        seen.add(fn)
        try:
            callee = source.locate(fn).tree
        except SourceError:
            continue
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        if any(class_tested(callee, p, fn.__globals__, seen)
               for p in [params[k] for k in at if k < len(params)] + named):
            return True
    return False


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _tests_class(n: ast.AST, name: str) -> bool:
    """``isinstance(name, ...)``, or a use of ``name`` no array has: a
    string key looked up or tested (``name["k"]``, ``"k" in name``), its
    truth (``if name:``, ``if not name:``)."""
    if isinstance(n, ast.Call):
        return isinstance(n.func, ast.Name) and n.func.id == "isinstance" and bool(n.args) \
            and _is_name(n.args[0], name)
    if isinstance(n, ast.Subscript):
        return _is_name(n.value, name) and isinstance(n.slice, ast.Constant) \
            and isinstance(n.slice.value, str)
    if isinstance(n, ast.Compare):
        return len(n.ops) == 1 and isinstance(n.ops[0], (ast.In, ast.NotIn)) \
            and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str) \
            and _is_name(n.comparators[0], name)
    if isinstance(n, (ast.If, ast.While, ast.IfExp)):
        test = n.test.operand if isinstance(n.test, ast.UnaryOp) \
            and isinstance(n.test.op, ast.Not) else n.test
        return _is_name(test, name)
    return False


def _classes(lo, node: ast.expr) -> tuple:
    nodes = node.elts if isinstance(node, ast.Tuple) else [node]
    out = []
    for n in nodes:
        cls = lo.resolve(n) if isinstance(n, (ast.Name, ast.Attribute)) else None
        if not isinstance(cls, type):
            raise lo.src.error(n, "`isinstance` takes a class or a tuple of classes known while "
                               "the code is generated (`float`, `np.ndarray`, `list`, ...)")
        out.append(cls)
    return tuple(out)
