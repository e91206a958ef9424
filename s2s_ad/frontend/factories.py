"""Frontend: a factory's nested function, made where the factory is called.

Contract: :func:`inline` rewrites, in place and before lowering, each
statement ``g = make(a, b)`` of a function whose callee ``make`` is a function
of the same module that only defines nested functions and names and returns
one of its nested functions (a *factory*, the usual way JAX code builds a
right-hand side that closes over data). The statement becomes the factory's
body with its parameters bound to the arguments: ``g`` is then a nested
function of the caller, reading the caller's variables, which the frontend
lowers as any nested ``def`` (called, or passed to a helper). Every name the
factory binds gets a fresh name in the caller, the returned function takes
``g``. A factory that does anything else (another statement, a default it
needs, ``global``, a nested scope rebinding one of its names) is left alone,
and the frontend refuses the use of its result as before.

Before → after::

    def make(x):                       def ode(x, s):
        def f(y):                          x_1 = x
            return x * y          ──▶      def f(y):
        return f                               return x_1 * y
    def ode(x, s):                         return solve(f, x, s)
        f = make(x)
        return solve(f, x, s)
"""

from __future__ import annotations

import ast
import copy
import inspect
import types

from s2s_ad.errors import SourceError
from s2s_ad.frontend import jax_names
from s2s_ad.names import identifiers, unused
from s2s_ad.syntax_walk import walk


def inline(src, locate) -> None:
    """Inline the factories ``src.tree`` calls (``locate``: the frontend's
    :func:`s2s_ad.frontend.source.locate`, for the factory's source)."""
    if not any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
               and isinstance(n.value.func, ast.Name) for n in walk(src.tree)):
        return
    taken = identifiers(src.tree) | set(src.globals)
    _Inliner(src, locate, taken).body(src.tree)


class _Inliner:
    def __init__(self, src, locate, taken: set):
        self.src, self.locate, self.taken = src, locate, taken

    def fresh(self, base: str) -> str:
        return unused(base, self.taken)

    def body(self, node) -> None:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            out = []
            for s in stmts:
                made = self.statement(s)
                out += made if made is not None else [s]
                if made is None:
                    self.body(s)
            setattr(node, field, out)

    def statement(self, s) -> list | None:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name)):
            return None
        make = self.src.globals.get(s.value.func.id)
        if not isinstance(make, types.FunctionType) or make.__code__.co_freevars \
                or make.__globals__ is not getattr(self.src.fn, "__globals__", None) \
                or not any(isinstance(c, types.CodeType) for c in make.__code__.co_consts):
            return None
        try:
            tree = self.locate(make).tree
        except SourceError:
            return None
        plan = _factory(tree)
        if plan is None:
            return None
        try:
            bound = inspect.signature(make).bind(*s.value.args, **{
                k.arg: k.value for k in s.value.keywords if k.arg is not None})
        except TypeError:
            return None
        if len(bound.arguments) != len(tree.args.args) or any(
                isinstance(a, ast.Starred) for a in s.value.args) or any(
                k.arg is None for k in s.value.keywords):
            return None
        returned, bindings = plan
        rename = {returned: s.targets[0].id}
        for name in bindings:
            if name != returned:
                rename[name] = self.fresh(name)
        out = []
        for param in tree.args.args:
            out.append(ast.copy_location(ast.Assign(
                [ast.copy_location(ast.Name(rename[param.arg], ast.Store()), s)],
                bound.arguments[param.arg]), s))
        for stmt in tree.body[:-1]:
            if isinstance(stmt, ast.Expr):  # the docstring
                continue
            stmt = copy.deepcopy(stmt)
            for n in walk(stmt):
                if isinstance(n, ast.Name) and n.id in rename:
                    n.id = rename[n.id]
                elif isinstance(n, ast.FunctionDef) and n.name in rename:
                    n.name = rename[n.name]
            out.append(stmt)
        for stmt in out:
            ast.fix_missing_locations(stmt)
        if inspect.getsourcefile(make) != inspect.getsourcefile(self.src.fn):
            return None  # the lines of another file: error messages could not show them
        if not self.src.jax and jax_names.reads_jax(tree, make.__globals__):
            self.src.jax = True
            self.src.globals = jax_names.numpy_view(self.src.globals)
        return out


def _factory(tree: ast.FunctionDef):
    """(the returned nested function's name, the names the factory binds)
    when ``tree`` is a factory; None otherwise."""
    args = tree.args
    if args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg or args.defaults:
        return None
    body = tree.body
    if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Name):
        return None
    defs, bindings = set(), {a.arg for a in args.args}
    for i, stmt in enumerate(body[:-1]):
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
            defs.add(stmt.name)
            bindings.add(stmt.name)
        elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            bindings |= {t.id for t in stmt.targets}
        elif i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        else:
            return None
    if body[-1].value.id not in defs:
        return None
    for stmt in body[:-1]:
        for n in walk(stmt):
            inner = n is not stmt and isinstance(n, (ast.FunctionDef, ast.Lambda))
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                return None
            if inner or isinstance(stmt, ast.FunctionDef) and n is not stmt:
                bound = {a.arg for a in walk(n) if isinstance(a, ast.arg)} \
                    | {t.id for t in walk(n) if isinstance(t, ast.Name)
                       and isinstance(t.ctx, ast.Store)}
                if isinstance(n, ast.FunctionDef):
                    bound.add(n.name)
                if bound & bindings:
                    return None
    return body[-1].value.id, bindings
