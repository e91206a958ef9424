"""Bound methods, lifted to functions that take what they read from ``self``.

Contract: :func:`lift` takes a bound method (``model.loss``, or a
classmethod bound to its class) and returns a Python function made from its
source, without the ``self`` parameter, carrying its
:class:`~s2s_ad.frontend.source.Source` (``__s2s_source__``). In it, and in
every method it reaches through ``self.NAME(...)``:

* ``self.w`` holding data (a number, an array) reads a keyword-only
  parameter ``self_w``: the attributes are *constants of the gradient*
  (no adjoint), and ``s2s_ad.grad`` passes their current values on every
  call (:func:`attribute_values`), as the method would read them;
* ``self.mode`` holding a string, None or a bool is a static value: the code
  is generated for the value it holds when the gradient is made (the cache
  key includes it);
* module-level arrays and structures of them the methods read (``W``, as
  :mod:`s2s_ad.frontend.module_data` finds them for a function) are
  keyword-only parameters of the same name, read from the module on every
  call as ``self.w`` is read from the object;
* ``self.helper(x)`` calls the method ``helper`` lifted the same way (one
  forward/backward pair, like any helper); a staticmethod is called as the
  function it is.

Anything else read from ``self``, and ``self`` used as a value, is refused
at the attribute.

Before → after::

    class Model:                          def loss(x, *, self_w, self_b):
        def loss(self, x):                    return self_w * x + self_b
            return self.w * x + self.b
"""

from __future__ import annotations

import ast
import copy
import inspect
import types
from dataclasses import dataclass, field

from s2s_ad.errors import SourceError
from s2s_ad.frontend import module_data, source as source_mod
from s2s_ad.frontend.statics import is_static_value
from s2s_ad.syntax_walk import walk


@dataclass
class Plan:
    """What a bound method reads from its object."""

    obj: object
    methods: dict = field(default_factory=dict)
    """Method name -> its function (the entry method under ``None``)."""
    data: dict = field(default_factory=dict)
    """Attribute -> value: numbers and arrays (parameters ``self_NAME``)."""
    constants: dict = field(default_factory=dict)
    """Attribute -> value: strings, None, bools, functions, modules."""
    module: dict = field(default_factory=dict)
    """Module-level data the methods read (:mod:`s2s_ad.frontend.module_data`):
    name -> the globals holding it (parameters of that name, read from
    there on every call, as a plain function's are)."""
    self_name: str = "self"
    class_methods: set = field(default_factory=set)
    """Names of the classmethods reached through the object (``self.cm(x)``):
    their first parameter, the class, reads what the object does."""
    class_reads: set = field(default_factory=set)
    """Attributes read through the class (``cls.w`` in such a classmethod,
    ``type(self).w``) that the lifted code reads from the object: the same
    value only while the object does not hide the class's (:func:`hidden`)."""


def is_bound(fn) -> bool:
    return isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType)


def plan(method: types.MethodType) -> Plan:
    """Every method reachable from ``method`` through ``self.NAME(...)``, and
    the attributes they read (walked once, in source order)."""
    obj = method.__self__
    out = Plan(obj)
    todo = [(None, method.__func__)]
    while todo:
        name, func = todo.pop(0)
        if name in out.methods:
            continue
        out.methods[name] = func
        src = source_mod.locate(func, method=True)
        params = src.tree.args.posonlyargs + src.tree.args.args
        if not params:
            raise src.error(src.tree, f"{func.__qualname__} is bound to an object but takes "
                            "no parameter for it")
        me = params[0].arg
        if name is None:
            out.self_name = me
        for n in module_data.names(func):
            out.module.setdefault(n, func.__globals__)
        on_class = isinstance(obj, type) or name in out.class_methods
        nodes = [n for n in walk(src.tree) if isinstance(n, ast.Attribute)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):  # source order
            if not ((isinstance(node.value, ast.Name) and node.value.id == me
                     or _type_of(node.value, me)) and isinstance(node.ctx, ast.Load)):
                continue
            try:
                value = getattr(obj, node.attr)
            except AttributeError:
                raise src.error(node, f"`{ast.unparse(node)}`: the {type(obj).__name__} "
                                "object has no such attribute") from None
            if (on_class or _type_of(node.value, me)) and not isinstance(obj, type):
                # `cls.w` in a classmethod, `type(self).w`: the class's attribute, which
                # the lifted code reads from the object as `self.w`: the same one only
                # where the object does not hide it
                if not _same(getattr(type(obj), node.attr, None), value):
                    raise src.error(node, f"`{ast.unparse(node)}` reads the class's "
                                    f"`{node.attr}`, which the {type(obj).__name__} object "
                                    f"hides with its own; give one of them another name")
                out.class_reads.add(node.attr)
            if is_bound(value) and value.__self__ is obj:
                todo.append((node.attr, value.__func__))
            elif is_bound(value) and not isinstance(obj, type) \
                    and value.__self__ is type(obj):
                # a classmethod reached through the object (`self.cm(x)`): lifted as the
                # object's other methods are, its `cls` reading what `self` reads
                out.class_methods.add(node.attr)
                todo.append((node.attr, value.__func__))
            elif source_mod.is_data(value):
                out.data[node.attr] = value
            elif is_static_value(value) or isinstance(value, (types.FunctionType,
                                                              types.ModuleType)):
                out.constants[node.attr] = value
                if isinstance(value, types.FunctionType):  # a staticmethod: what it reads
                    for n in module_data.names(value):
                        out.module.setdefault(n, value.__globals__)
            else:
                raise src.error(node, f"`{ast.unparse(node)}` is a {type(value).__name__}; "
                                "a method may read numbers, arrays, strings, None, bools and "
                                "other methods from its object")
    return out


def hidden(p: Plan) -> bool:
    """Does the object now hide a class attribute its methods read through the
    class (``k.S = 3.0`` after a gradient of ``k.m`` reading ``cls.S`` was
    made)? The lifted code would read the object's; Python reads the class's."""
    cls = type(p.obj)
    return any(not _same(getattr(cls, a, None), getattr(p.obj, a, None)) for a in p.class_reads)


def _same(a, b) -> bool:
    if is_bound(a) and is_bound(b):
        return a.__func__ is b.__func__ and a.__self__ is b.__self__
    return a is b


def _type_of(node: ast.expr, me: str) -> bool:
    """Is ``node`` ``type(me)``?"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id == "type" and len(node.args) == 1 and not node.keywords \
        and isinstance(node.args[0], ast.Name) and node.args[0].id == me


def attribute_values(method) -> dict:
    """The data a bound method reads from its object, now: the values of its
    gradient's ``self_NAME`` parameters."""
    if not is_bound(method):
        return {}
    p = plan(method)
    out = {f"{p.self_name}_{a}": getattr(p.obj, a) for a in p.data}
    out.update((n, g[n]) for n, g in p.module.items())
    return out


def lift(method: types.MethodType):
    """``method`` as a function of its own (see the module docstring)."""
    p = plan(method)
    namespace_extra: dict = {}
    lifted: dict = {}
    params = [f"{p.self_name}_{a}" for a in p.data] + list(p.module)
    for name, func in p.methods.items():
        lifted[name] = _lift_one(func, p, params, namespace_extra, name is None)
    for name, fn in lifted.items():
        if name is not None:
            namespace_extra[f"{p.self_name}.{name}"] = fn
    for fn in lifted.values():  # self.f(x) reads the lifted f
        fn.__s2s_source__.globals.update(namespace_extra)
    entry = lifted[None]
    entry.__s2s_source__.captured.update({f"{p.self_name}_{a}": v for a, v in p.data.items()})
    entry.__s2s_source__.captured.update((n, g[n]) for n, g in p.module.items())
    entry.__s2s_source__.module_data = tuple(p.module)
    return entry


def _lift_one(func, p: Plan, params: list[str], extra: dict, entry: bool):
    src = source_mod.locate(func, method=True)
    tree = copy.deepcopy(src.tree)
    args = tree.args
    first = (args.posonlyargs or args.args)[0]
    me = first.arg
    if args.posonlyargs:
        args.posonlyargs = args.posonlyargs[1:]
    else:
        args.args = args.args[1:]
    tree.decorator_list = [d for d in tree.decorator_list if not (
        isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod"))]
    if tree.decorator_list:
        raise src.error(tree.decorator_list[0], f"{func.__qualname__} is decorated; s2s-ad "
                        "would read its source, not the code the decorator makes")

    class Self(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == me \
                    and not isinstance(node.ctx, ast.Load):
                raise src.error(node, f"attribute assignment (`{ast.unparse(node)} = ...`) is "
                                "not supported: s2s-ad differentiates pure functions; return "
                                "the new value instead")
            if (isinstance(node.value, ast.Name) and node.value.id == me
                    or _type_of(node.value, me)) and isinstance(node.ctx, ast.Load):
                spelled = f"{p.self_name}_{node.attr}" if node.attr in p.data \
                    or node.attr in p.constants else f"{p.self_name}.{node.attr}"
                return ast.copy_location(ast.Name(spelled, ast.Load()), node)
            self.generic_visit(node)
            return node

        def visit_Name(self, node: ast.Name):
            if node.id == me:
                raise src.error(node, f"`{me}` is used as a value; a method may read its "
                                f"attributes (`{me}.w`) and call its methods (`{me}.f(x)`), "
                                f"not pass `{me}` on")
            return node

    tree.body = [Self().visit(stmt) for stmt in tree.body]
    taken = {a.arg for a in walk(args) if isinstance(a, ast.arg)}
    for name in params:
        if name in taken and name in p.module:
            raise src.error(tree, f"parameter {name!r} has the name of the module-level data "
                            f"`{name}` that {func.__qualname__}'s methods read; rename it")
        if name in taken:
            raise src.error(tree, f"parameter {name!r} has the name s2s-ad gives "
                            f"`{name.replace('_', '.', 1)}`; rename it")
        args.kwonlyargs.append(ast.copy_location(ast.arg(name), tree))
        args.kw_defaults.append(None)
    namespace = dict(src.globals)
    namespace.update({f"{p.self_name}_{a}": v for a, v in p.constants.items()})
    fn = _made_alone(tree, func, src, namespace)
    fn.__s2s_free__ = () if entry else tuple(params)
    return fn


def _made_alone(tree: ast.FunctionDef, func, src, namespace: dict):
    """The function ``tree`` (``func``'s source, rewritten to stand on its
    own) defined in ``namespace``, carrying its source for the frontend."""
    module = ast.Module([tree], [])
    ast.fix_missing_locations(module)
    try:
        exec(compile(module, func.__code__.co_filename, "exec"), namespace)
    except Exception as exc:
        raise src.error(tree, f"{func.__qualname__} cannot be made on its own "
                        f"({type(exc).__name__}: {exc})") from None
    fn = namespace[tree.name]
    fn.__qualname__ = func.__qualname__
    fn.__s2s_source__ = source_mod.Source(fn, src.file, tree, src.lines, namespace,
                                          jax=src.jax)
    return fn


def fingerprint_parts(method) -> tuple:
    """What the code generated for a bound method depends on besides its
    functions' sources: the kinds of the data attributes (number or array)
    and the constants' values."""
    p = plan(method)
    kinds = tuple((a, isinstance(v, (int, float, complex))) for a, v in p.data.items())
    constants = tuple((a, type(v).__name__, v if is_static_value(v) else id(v))
                      for a, v in p.constants.items())
    return (type(p.obj).__qualname__, tuple(p.methods), kinds, constants), \
        list(p.methods.values()) + static_functions(p)


def static_functions(p: Plan) -> list:
    """The functions a bound method reads from its object (``self.sm(x)``, a
    staticmethod, or a function the object holds): the code calls them as
    helpers, so their sources and what they read decide it too."""
    return [v for v in p.constants.values() if isinstance(v, types.FunctionType)]


def refuse_unbound(fn, src) -> SourceError | None:
    """``Class.method`` (a function whose first parameter is ``self`` and
    that reads attributes of it): the object is missing."""
    params = list(inspect.signature(fn).parameters)
    if "." in fn.__qualname__ and params and params[0] in ("self", "cls"):
        return src.error(src.tree, f"{fn.__qualname__} is a method taken from its class; "
                         "differentiate it bound to an object (`obj.method`, or the target "
                         "`file.py:obj.method` for a module-level obj)")
    return None


_CLASS_FUNCTIONS: dict = {}
"""(id of a class, id of a classmethod's function) -> (the class, the function,
the function made of it by :func:`class_function`). Bounded; each entry keeps
its class and function alive, so their ids are not reused while it stands."""


def class_function(method: types.MethodType):
    """``Class.cm`` (a classmethod bound to its class, called from a function
    you differentiate) as a function of its own: its ``cls`` a global name of
    it, bound to the class, so ``cls.SCALE`` reads the class's constant and
    ``cls.other(x)`` calls another static or class method, as ``Class.SCALE``
    and ``Class.other(x)`` are read in any function."""
    cls, func = method.__self__, method.__func__
    hit = _CLASS_FUNCTIONS.get((id(cls), id(func)))
    if hit is not None and hit[0] is cls and hit[1] is func:
        return hit[2]
    src = source_mod.locate(func, method=True)
    tree = copy.deepcopy(src.tree)
    args = tree.args
    me = (args.posonlyargs or args.args)[0].arg if args.posonlyargs or args.args else None
    if me is None:
        raise src.error(tree, f"{func.__qualname__} is a classmethod without a parameter "
                        "for its class")
    if args.posonlyargs:
        args.posonlyargs = args.posonlyargs[1:]
    else:
        args.args = args.args[1:]
    tree.decorator_list = [d for d in tree.decorator_list
                           if not (isinstance(d, ast.Name) and d.id == "classmethod")]
    if tree.decorator_list:
        raise src.error(tree.decorator_list[0], f"{func.__qualname__} is decorated; s2s-ad "
                        "would read its source, not the code the decorator makes")
    namespace = dict(src.globals)
    namespace[me] = cls
    fn = _made_alone(tree, func, src, namespace)
    if len(_CLASS_FUNCTIONS) >= 256:
        _CLASS_FUNCTIONS.clear()
    _CLASS_FUNCTIONS[(id(cls), id(func))] = (cls, func, fn)
    return fn
