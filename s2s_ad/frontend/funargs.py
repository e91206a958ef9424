"""Functions passed as arguments: the callee specialised per function value.

Contract: :func:`specialise` takes a call ``h(f, y)`` to a user function
``h`` (the caller's lowering, the callee and the call's ``ast.Call``) where
an argument names a function of the user's — a nested ``def``, a ``lambda``
written in the call or assigned to a name, a module-level function, or a
function value the caller itself received this way — and returns a new
callee and a new call: ``h`` with that parameter removed and the function
bound in its namespace, so ``f(...)`` inside ``h`` is an ordinary call to a
known function (a forward/backward pair of its own, or inlined). The
variables of the caller that a nested function reads (its free variables,
:mod:`s2s_ad.frontend.closures`) become keyword-only parameters of the
specialised ``h``, given at the call: a closure's data flow into the
helper as arguments, so their adjoints flow back out. A NumPy, SciPy or
``math`` function passed (``h(np.tanh, x)``), or left to a parameter's
default (``def h(x, act=np.tanh)``), is bound the same way: ``act(x)`` in
``h`` is then the library call. A call without a function argument is
returned unchanged.

Before → after, for ``rk(rhs, y0, s)`` where ``rhs`` is nested in ``f``
and reads ``f``'s ``x``::

    def rk(g, y, s):                    def rk(y, s, *, g_x):     # g = rhs, reading g_x as x
        ... g(y) ...                        ... g(y) ...
    rk(rhs, y0, s)                      rk(y0, s, g_x=x)

The specialised callee keeps ``h``'s name, lines and file (messages point
into ``h``), and one specialisation serves every call of the same caller
that passes the same functions.
"""

from __future__ import annotations

import ast
import copy
import inspect
import types

from s2s_ad.frontend import jax_names, library_names
from s2s_ad.frontend.source import Source, locate, rechecked
from s2s_ad.names import identifiers


def function_value(low, node: ast.expr, is_library):
    """The user function ``node`` names, or None: a nested function or lambda
    of the caller, a ``lambda`` written here, a module-level function of the
    user's (``is_library(fn)`` false), or one the caller received as an
    argument."""
    if isinstance(node, ast.Lambda):
        return low.resolve(node)
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    if isinstance(node, ast.Name) and node.id in low.env:
        return None
    if isinstance(node, ast.Attribute) and not low.is_global_path(node.value):
        return None
    try:
        fn = low.resolve(node)
    except Exception:  # not a name of a function: lowered (and refused) as a value
        return None
    if isinstance(fn, types.FunctionType) and not is_library(fn) or rechecked(fn):
        return fn  # (a derivative s2s-ad made: read where it is called, as its code is then)
    if library_function(fn) is not None:
        return library_function(fn)
    if callable(fn) and not isinstance(fn, type):
        what = ast.unparse(node)
        raise low.src.error(node, f"`{what}` is passed as a function, but it is not one of "
                            "yours (a `def`, a nested `def` or a `lambda` with source): "
                            f"s2s-ad specialises the helper for the function it calls; wrap "
                            f"it: `lambda t: {what}(t)`")
    return None


def library_function(fn):
    """A NumPy, SciPy or ``math`` function (JAX's or autograd's read as its
    NumPy twin) passed as a function value (``h(np.tanh, x)``, a default
    ``act=np.tanh``): bound by name in the specialised helper, whose call of
    it is then the library call it names. None for anything else."""
    fn = jax_names.twin(fn)
    if isinstance(fn, type) or not callable(fn):
        return None
    return fn if library_names.belongs(fn, ("numpy", "scipy", "math")) else None


def _default_function(p: inspect.Parameter, is_library):
    """The function a parameter's default names (``act=np.tanh``, ``act=relu``),
    or None."""
    d = p.default
    if isinstance(d, types.FunctionType) and not is_library(d):
        return d
    return None if d is p.empty else library_function(d)


def specialise(low, fn: types.FunctionType, node: ast.Call, is_library):
    """``(callee, call)``: see the module docstring. A parameter the call
    leaves to a default that is a function is specialised as if the call
    passed it."""
    try:
        sig = inspect.signature(fn)
        bound = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
    except (TypeError, ValueError):
        return fn, node  # (the call is refused as it stands, by the caller's lowering)
    given = {}
    for name, value in bound.arguments.items():
        if isinstance(value, ast.AST):
            f = function_value(low, value, is_library)
            if f is not None:
                given[name] = f
    for p in sig.parameters.values():
        if p.name not in bound.arguments and _default_function(p, is_library) is not None:
            given[p.name] = _default_function(p, is_library)
    if not given:
        return fn, node
    src = locate(fn)
    if src.captured:
        return fn, node  # a closure capturing data: refused where it is called
    key = (fn, tuple((n, _origin(f)) for n, f in given.items()))
    if key not in _MADE or not _current(_MADE[key][0], src):
        if len(_MADE) > 256:
            _MADE.clear()
        _MADE[key] = _specialised(src, fn, {n: _origin(f) for n, f in given.items()})
    new_fn, extra = _MADE[key]
    args, keywords = [], []
    for p in sig.parameters.values():
        if p.name in given or p.name not in bound.arguments:
            continue
        value = bound.arguments[p.name]
        if p.kind is p.POSITIONAL_ONLY:
            args.append(value)
        else:
            keywords.append(ast.keyword(p.name, value))
    for name, v, param in extra:  # a free variable, read where the caller reads it
        read = getattr(given[name], "__s2s_free_as__", {}).get(v, v)
        keywords.append(ast.keyword(param, ast.copy_location(ast.Name(read, ast.Load()), node)))
    call = ast.copy_location(ast.Call(node.func, args, keywords), node)
    call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
    return new_fn, call


def _specialised(src: Source, fn: types.FunctionType, given: dict):
    """``fn`` without the parameters in ``given`` (name -> function), each
    bound in its namespace; and ``[(parameter of fn, free variable, the
    keyword-only parameter added for it)]``."""
    tree = copy.deepcopy(src.tree)
    tree.decorator_list = []
    taken = identifiers(tree)
    namespace = dict(src.globals)
    extra = []
    for name, f in given.items():
        free = getattr(f, "__s2s_free__", ())
        renamed = {}
        for v in free:
            param = f"{name}_{v}"
            while param in taken:
                param += "_"
            taken.add(param)
            renamed[v] = param
            tree.args.kwonlyargs.append(ast.copy_location(ast.arg(param), tree))
            tree.args.kw_defaults.append(None)
            extra.append((name, v, param))
        namespace[name] = _reading(f, renamed) if free else f
    # defaults belong to the last positional parameters: drop those of removed ones
    positional = tree.args.posonlyargs + tree.args.args
    first = len(positional) - len(tree.args.defaults)
    tree.args.defaults = [d for a, d in zip(positional[first:], tree.args.defaults)
                          if a.arg not in given]
    tree.args.kw_defaults = [d for a, d in zip(tree.args.kwonlyargs, tree.args.kw_defaults)
                             if a.arg not in given]
    for group in (tree.args.posonlyargs, tree.args.args, tree.args.kwonlyargs):
        group[:] = [a for a in group if a.arg not in given]
    module = ast.Module([tree], [])
    ast.fix_missing_locations(module)
    exec(compile(module, fn.__code__.co_filename, "exec"), namespace)
    new = namespace[tree.name]
    namespace[tree.name] = fn  # a recursive call inside passes the function on again
    new.__qualname__ = fn.__qualname__
    new.__s2s_source__ = Source(new, src.file, tree, src.lines, namespace, jax=src.jax)
    if hasattr(fn, "__s2s_free__"):
        new.__s2s_free__ = fn.__s2s_free__
        new.__s2s_free_as__ = getattr(fn, "__s2s_free_as__", {})
    return new, extra


_MADE: dict = {}
"""(callee, ((parameter, function), ...)) -> its specialisation: the same
functions passed again (at another call, or by a recursive call inside the
specialised callee) reuse it, so the call graph sees one function."""


def _current(made: types.FunctionType, src: Source) -> bool:
    """Does the specialisation ``made`` still see the callee's globals as they
    are (its namespace is a copy: a module constant rebound since must make
    it again, or the gradient would use the old value)?"""
    namespace = made.__s2s_source__.globals
    return all(namespace.get(n) is src.globals.get(n) for n in identifiers(src.tree)
               if n in src.globals and n != src.tree.name)


def _origin(f: types.FunctionType) -> types.FunctionType:
    """The nested function a :func:`_reading` copy was made from."""
    return getattr(f, "__s2s_origin__", f)


def _reading(f: types.FunctionType, renamed: dict) -> types.FunctionType:
    """A copy of the nested function ``f`` whose free variables are read,
    where it is called, from the names in ``renamed``."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                           f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__s2s_source__ = f.__s2s_source__
    g.__s2s_free__ = f.__s2s_free__
    g.__s2s_free_as__ = {v: renamed[v] for v in f.__s2s_free__}
    g.__s2s_origin__ = _origin(f)
    return g

