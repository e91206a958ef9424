"""Frontend: JAX's functional forms rewritten as the NumPy code they mean.

Contract: :func:`desugar` rewrites, in place and before lowering, a function
that reads JAX (:mod:`s2s_ad.frontend.jax_names`) into the subset the
frontend lowers, statement by statement; each form is computed by statements
placed before the statement that uses it (JAX code has no side effects, so
moving the computation earlier in the statement does not change it), and
reads as a name there:

* ``x.at[idx].set(v)`` (``add``, ``subtract``, ``multiply``, ``divide``,
  ``power``): a copy of ``x``, then the subscript write ``t[idx] = v`` (``t[idx]
  += v``, ...) into the copy; ``x.at[idx].get()`` is ``x[idx]``;
* ``jax.vmap(f)(a, b)`` (``in_axes`` 0, or a tuple of 0 and None): ``f``'s
  body once over all rows (:mod:`s2s_ad.frontend.jax_batching`), or, where an
  operation has no batching rule, a loop over the leading axis, the rows
  ``f(a[k], b[k])`` stacked into an array made from the first row's shape;
* ``jax.lax.scan(f, init, xs, length=n)``: a loop carrying ``init``,
  ``c, y = f(c, xs[k])``, the ``y`` stacked (or None where ``f`` returns
  ``None`` for them); the form is the pair ``(c, ys)``;
* ``jax.lax.fori_loop(lo, hi, f, init)``: ``c = f(i, c)`` for ``i`` in
  ``range(lo, hi)``;
* ``y += e`` (any operator) on a name: ``y = y + e``, since a JAX array is
  never changed in place.

Any other JAX function (``jax.jit``, ``jax.random``, ``jax.lax.cond``, ...) is
refused, located, with the rewrite. A form inside a ``lambda``, a
comprehension, a conditional expression, a short-circuit operand or a
``while`` condition (evaluated conditionally or repeatedly) is refused too:
assign it to a name first.

Before → after::

    muls = jnp.cumprod(jnp.full(m, t).at[0].set(1))      at = jnp.full(m, t)
                                                   ──▶    at[0] = 1
                                                          muls = jnp.cumprod(at)
"""

from __future__ import annotations

import ast
import copy
import builtins
import types

import numpy

from s2s_ad.frontend import jax_names, jax_nn
from s2s_ad.frontend.jax_loops import LoopForms, _load, _located, _parse
from s2s_ad.syntax_walk import walk

UPDATES = {"set": None, "add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult,
           "divide": ast.Div, "power": ast.Pow}
"""``x.at[idx].OP(v)`` → the subscript write ``t[idx] = v`` or ``t[idx] OP= v``."""
CREATES = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "eye",
           "identity", "array", "copy", "empty", "empty_like"}
"""NumPy functions whose result is a new array nothing else refers to: ``.at``
writes into it without copying it first."""
REWRITES = {
    "jax.jit": "differentiate the undecorated Python function (`f.__wrapped__`); "
               "s2s-ad reads its source, and the gradient it writes is plain NumPy",
    "jax.grad": "differentiate with s2s_ad.grad instead of calling jax.grad inside",
    "jax.value_and_grad": "use s2s_ad.value_and_grad",
    "jax.vjp": "use s2s_ad.vjp", "jax.jvp": "use s2s_ad.jvp",
    "jax.lax.cond": "write it as Python `if`/`else`",
    "jax.lax.while_loop": "write it as a Python `while` loop",
    "autograd.grad": "differentiate with s2s_ad.grad instead of calling autograd.grad inside",
}


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a function reading JAX) into the NumPy subset."""
    if not getattr(src, "jax", False) or getattr(src, "jax_desugared", False):
        return
    src.jax_desugared = True
    _Desugar(src).function(src.tree)


class _Desugar(LoopForms):
    def __init__(self, src):
        self.src = src
        self.taken = {n.id for n in walk(src.tree) if isinstance(n, ast.Name)} \
            | {a.arg for a in walk(src.tree) if isinstance(a, ast.arg)} \
            | {n.name for n in walk(src.tree) if isinstance(n, ast.FunctionDef)} \
            | set(src.globals)
        self.np = next((k for k, v in src.globals.items() if v is numpy), None)
        self.locals: set = set()
        self.control_flow = False
        self.params: set = set()
        self.copied: dict = {}
        self.current = None
        """The function whose body is being rewritten."""

    # -- names ---------------------------------------------------------------

    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.taken or hasattr(builtins, name):
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name

    def numpy_name(self) -> str:
        """A global name bound to NumPy, for the arrays the rewrites make."""
        if self.np is None:
            self.np = self.global_for(numpy, "np")
        return self.np

    def global_for(self, obj, base: str) -> str:
        """A global name bound to ``obj``: one the function's globals have, or
        a fresh one added to a copy of them (the module is left as it is)."""
        name = next((k for k, v in self.src.globals.items() if v is obj), None)
        if name is None:
            name = self.fresh(base)
            if not isinstance(self.src.globals, dict) or self.src.globals is getattr(
                    self.src.fn, "__globals__", None):
                self.src.globals = dict(self.src.globals)
            self.src.globals[name] = obj
        return name

    def resolve(self, node):
        """The global object an attribute chain names, read through
        :func:`jax_names.twin` (None for locals and anything else)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return None
            return self.src.globals.get(node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if not isinstance(base, types.ModuleType):
                return None
            return jax_names.twin(getattr(base, node.attr, None))
        return None

    def jax_call(self, node) -> str | None:
        """The JAX name of what ``node`` (a callee expression) refers to."""
        obj = self.resolve(node)
        return jax_names.jax_name(obj) if obj is not None else None

    # -- statements ------------------------------------------------------------

    def function(self, fn: ast.FunctionDef) -> None:
        outer = self.locals
        self.locals = outer | {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)} \
            | {t.id for n in walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign,
                                                              ast.For, ast.AnnAssign))
               for t in walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
               if isinstance(t, ast.Name)}
        flow, self.control_flow = self.control_flow, any(
            isinstance(n, (ast.For, ast.While, ast.If, ast.IfExp)) for n in walk(fn))
        params, self.params = self.params, {a.arg for a in walk(fn.args)
                                            if isinstance(a, ast.arg)}
        copied, self.copied = self.copied, {}
        current, self.current = self.current, fn
        self.inline_vmaps(fn)
        fn.body = self.block(fn.body)
        self.current = current
        if self.copied:
            # a parameter written by ``x = x.at[i].set(v)`` in place: first
            # a copy of it, so the caller's array is never changed
            first = 1 if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
                fn.body[0].value, ast.Constant) else 0
            np_ = self.numpy_name()
            fn.body[first:first] = [_parse(f"{name} = {np_}.copy({name})\n", node)[0]
                                    for name, node in self.copied.items()]
        self.locals, self.control_flow = outer, flow
        self.params, self.copied = params, copied

    def inline_vmaps(self, fn: ast.FunctionDef) -> None:
        """``f = jax.vmap(g)`` at the top of ``fn``'s body, ``f`` bound once and
        only called after: each call written in place (``jax.vmap(g)(x)``)."""
        for stmt in list(fn.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                    and self.jax_call(stmt.value.func) == "jax.vmap"):
                continue
            name = stmt.targets[0].id
            uses = [n for n in walk(fn) if isinstance(n, ast.Name) and n.id == name]
            calls = [n for n in walk(fn) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Name) and n.func.id == name]
            if len(uses) != len(calls) + 1:
                continue  # rebound or passed on: refused where it is read (expr)
            for call in calls:
                call.func = ast.copy_location(copy.deepcopy(stmt.value), call.func)
            fn.body.remove(stmt)

    def block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s) -> list:
        if isinstance(s, ast.FunctionDef):
            for d in s.decorator_list:
                self.refuse_jax(d, deep=True)
            self.function(s)
            return [s]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            s = ast.copy_location(ast.Assign(
                targets=[s.target], value=ast.copy_location(ast.BinOp(
                    ast.copy_location(ast.Name(s.target.id, ast.Load()), s.target), s.op,
                    s.value), s)), s)
        if isinstance(s, ast.For):
            pre: list = []
            s.iter = self.expr(s.iter, pre)
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return pre + [s]
        if isinstance(s, ast.If):
            pre = []
            s.test = self.expr(s.test, pre)
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return pre + [s]
        if isinstance(s, ast.While):
            self.no_forms(s.test, "a `while` condition (evaluated on every iteration)")
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return [s]
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr, ast.AugAssign)):
            if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                    and isinstance(s.targets[0], ast.Name) and _is_at(s.value):
                return self.at_into(s)
            pre = []
            if getattr(s, "value", None) is not None:
                s.value = self.expr(s.value, pre)
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                    self.no_forms(t, "an assignment's target")
            return pre + [s]
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, self.block(getattr(s, field)))
        return [s]

    # -- expressions ---------------------------------------------------------------

    def expr(self, node, pre: list):
        """``node`` with each form replaced by a name that statements
        appended to ``pre`` compute (inner forms first)."""
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            self.no_forms(node, "a lambda or comprehension")
            self.refuse_jax(node, deep=True)
            return node
        if isinstance(node, ast.IfExp):
            node.test = self.expr(node.test, pre)
            self.no_forms(node.body, "a conditional expression")
            self.no_forms(node.orelse, "a conditional expression")
            self.refuse_jax(node, deep=True)
            return node
        if isinstance(node, ast.BoolOp):
            node.values[0] = self.expr(node.values[0], pre)
            for v in node.values[1:]:
                self.no_forms(v, "a short-circuit operand (`and`, `or`)")
                self.refuse_jax(v, deep=True)
            return node
        if _is_at(node):
            ref = node.func.value
            ref.value.value = self.expr(ref.value.value, pre)
            ref.slice = self.expr(ref.slice, pre)
            node.args = [self.expr(a, pre) for a in node.args]
            return self.at(node, pre)
        if isinstance(node, ast.Call):
            form = "jax.vmap" if isinstance(node.func, ast.Call) and self.jax_call(
                node.func.func) == "jax.vmap" else self.jax_call(node.func)
            if form == "jax.vmap" and not isinstance(node.func, ast.Call):
                raise self.src.error(node, f"`{ast.unparse(node)}` is read where it is called "
                                     "(`jax.vmap(g)(x)`), or bound to a name at the top of "
                                     "the function that is only called after (`f = "
                                     "jax.vmap(g)`, then `f(x)`)")
            if form in ("jax.vmap", "jax.lax.scan", "jax.lax.fori_loop"):
                node.args = [a if isinstance(a, ast.Lambda) else self.expr(a, pre)
                             for a in node.args]
                for k in node.keywords:
                    k.value = self.expr(k.value, pre)
                if form == "jax.vmap":
                    return self.vmap(node, pre)
                return self.scan(node, pre) if form == "jax.lax.scan" \
                    else self.fori_loop(node, pre)
            if form in jax_nn.NAMES:  # jax.nn.relu(x), jax.lax.stop_gradient(x), ...
                node.args = [self.expr(a, pre) for a in node.args]
                for k in node.keywords:
                    k.value = self.expr(k.value, pre)
                return _located(jax_nn.build(self, form, node, pre), node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(node, field, self.expr(value, pre))
            elif isinstance(value, list):
                setattr(node, field, [self.expr(v, pre) if isinstance(v, ast.expr) else
                                      self.keyword(v, pre) if isinstance(v, ast.keyword) else v
                                      for v in value])
        if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Store):
            self.refuse_jax(node)
        return node

    def keyword(self, kw: ast.keyword, pre: list) -> ast.keyword:
        kw.value = self.expr(kw.value, pre)
        return kw

    def no_forms(self, node, where: str) -> None:
        for n in walk(node):
            if _is_at(n) or isinstance(n, ast.Call) and (
                    isinstance(n.func, ast.Call) and self.jax_call(n.func.func) == "jax.vmap"
                    or self.jax_call(n.func) in ("jax.lax.scan", "jax.lax.fori_loop")):
                raise self.src.error(n, f"`{ast.unparse(n)}` inside {where} is not "
                                     "supported; assign it to a name first")

    def refuse_jax(self, node, deep: bool = False) -> None:
        """A located refusal of a JAX object without a NumPy twin (``node``,
        or anything in it with ``walk``)."""
        for n in (walk(node) if deep else [node]):
            if not isinstance(n, (ast.Name, ast.Attribute)):
                continue
            obj = self.resolve(n)
            if obj is None or not jax_names.is_jax(obj) or _passage(obj):
                continue
            name = jax_names.jax_name(obj)
            hint = REWRITES.get(name)
            if name in jax_nn.NAMES:  # (read as NumPy where a statement computes it)
                raise self.src.error(n, f"`{ast.unparse(n)}` ({name}) is read in a statement, "
                                     "not inside a lambda, a comprehension, a conditional "
                                     "expression or a short-circuit operand: assign it to a "
                                     "name first")
            if hint is None and name.startswith("jax.random"):
                hint = "draw the random numbers outside and pass them as an argument"
            autograd = name.split(".")[0] == "autograd"
            if hint is None and autograd:
                hint = ("of autograd, only autograd.numpy and autograd.scipy's special and "
                        "stats (norm, multivariate_normal, poisson, t) are read, as NumPy and "
                        "SciPy; see docs/numpy.md")
            if hint is None:
                hint = ("only jax.numpy and jax.scipy.special (read as NumPy and "
                        "scipy.special), `.at[...]`, jax.vmap, jax.lax.scan and "
                        "jax.lax.fori_loop are read; see docs/numpy.md")
            raise self.src.error(n, f"`{ast.unparse(n)}` ({name}) is "
                                 f"{'autograd' if autograd else 'JAX'}-only and not supported: "
                                 f"{hint}")

    # -- the forms -------------------------------------------------------------------

    def at_parts(self, node: ast.Call):
        op = node.func.attr
        ref = node.func.value  # x.at[idx]
        base, index = ref.value.value, ref.slice
        if op not in UPDATES and op != "get":
            raise self.src.error(node, f"`.at[...].{op}` is not supported; `.at[...]` "
                                 f"reads as NumPy with set, add, subtract, multiply, "
                                 "divide, power and get")
        if node.keywords:
            raise self.src.error(node.keywords[0], f"`.at[...].{op}({node.keywords[0].arg}="
                                 "...)` is not supported: NumPy's subscript write has no "
                                 "such option (out-of-bounds indices are errors)")
        if len(node.args) != (0 if op == "get" else 1):
            raise self.src.error(node, f"`.at[...].{op}` takes "
                                 f"{'no argument' if op == 'get' else 'one value'}")
        return op, base, index

    def at(self, node: ast.Call, pre: list):
        op, base, index = self.at_parts(node)
        if op == "get":
            return ast.copy_location(ast.Subscript(base, index, ast.Load()), node)
        name = self.fresh("at")
        pre += self.at_statements(name, node, op, base, index)
        return _load(name, node)

    def at_into(self, s: ast.Assign) -> list:
        """``y = x.at[idx].set(v)``: the copy is ``y`` itself, unless ``idx``
        or ``v`` read ``y`` (they must see its old value)."""
        pre: list = []
        s.value.func.value.value = self.expr(s.value.func.value.value, pre)
        s.value.func.value.slice = self.expr(s.value.func.value.slice, pre)
        s.value.args = [self.expr(a, pre) for a in s.value.args]
        op, base, index = self.at_parts(s.value)
        target = s.targets[0].id
        if op == "get":
            s.value = ast.copy_location(ast.Subscript(base, index, ast.Load()), s.value)
            return pre + [s]
        if isinstance(base, ast.Name) and base.id == target and self.control_flow:
            # ``y = y.at[i].set(v)`` in a function with loops or branches: a
            # write into ``y`` itself, as the frontend accepts only where
            # no other name (nor a view) refers to y's array, so JAX's
            # meaning is kept (the old value is read by nobody).
            write = self.at_statements(target, s.value, op, base, index)[1]
            if target in self.params:
                self.copied.setdefault(target, s)
            return pre + [write]
        reads = {n.id for part in [index, *s.value.args] for n in walk(part)
                 if isinstance(n, ast.Name)}
        if target in reads:
            name = self.fresh("at")
            return pre + self.at_statements(name, s.value, op, base, index) + [
                ast.copy_location(ast.Assign([s.targets[0]], _load(name, s)), s)]
        return pre + self.at_statements(target, s.value, op, base, index)

    def at_statements(self, name: str, node: ast.Call, op: str, base, index) -> list:
        creator = self.resolve(base.func) if isinstance(base, ast.Call) else None
        made = getattr(creator, "__name__", None) in CREATES \
            and getattr(numpy, creator.__name__, None) is creator
        start = base if made else ast.Call(
            ast.Attribute(ast.Name(self.numpy_name(), ast.Load()), "copy", ast.Load()),
            [base], [])
        target = ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store())
        if UPDATES[op] is None:
            write = ast.Assign([target], node.args[0])
        elif op == "add" and not isinstance(index, (ast.Slice, ast.Tuple, ast.Constant)) \
                and not (isinstance(index, ast.UnaryOp) and isinstance(index.operand,
                                                                         ast.Constant)):
            # `.at[idx].add(v)` adds up repeated indices (an integer array may
            # repeat one): NumPy's np.add.at, where `t[idx] += v` keeps one
            add_at = ast.Attribute(ast.Attribute(ast.Name(self.numpy_name(), ast.Load()), "add",
                                                 ast.Load()), "at", ast.Load())
            write = ast.Expr(ast.Call(add_at, [ast.Name(name, ast.Load()), index,
                                               node.args[0]], []))
        else:
            write = ast.AugAssign(target, UPDATES[op](), node.args[0])
        out = [ast.Assign([ast.Name(name, ast.Store())], start), write]
        return [ast.fix_missing_locations(_located(s, node)) for s in out]

def _is_at(node) -> bool:
    """``x.at[idx].OP(...)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and isinstance(node.func.value, ast.Subscript) \
        and isinstance(node.func.value.value, ast.Attribute) \
        and node.func.value.value.attr == "at"


def _passage(obj) -> bool:
    """Modules only passed through on the way to a twin (``jax``, ``jax.lax``
    before ``.scan``): refused where a function is used, not here."""
    import types
    return isinstance(obj, types.ModuleType)


