"""Frontend: JAX's loops (``jax.vmap``, ``jax.lax.scan``, ``jax.lax.fori_loop``)
as the Python loops they mean; part of :mod:`s2s_ad.frontend.jax_forms`.

Contract: :class:`LoopForms` is mixed into the rewrite of
:mod:`s2s_ad.frontend.jax_forms` (which gives it ``src``, ``fresh``,
``numpy_name``); each method appends to ``pre`` the statements that compute
a form and returns the expression that reads its value:

* ``jax.vmap(f)(a, b)``: ``f``'s body batched once over all rows
  (:func:`s2s_ad.frontend.jax_batching.vectorise`); where it has an
  operation without a batching rule, ``row = f(a[0], b[0])``, an array of ``(n,
  *np.shape(row))`` zeros, ``f(a[k], b[k])`` written into row ``k`` of it for
  ``k`` in ``range(1, n)``, and a copy of it (whose rows may then be read as
  views); a function returning a tuple written out gives one array per item;
* ``jax.lax.scan(f, init, xs, length=n)``: the carry kept in names (one per
  item of a tuple written out), ``carry, y = f(carry, xs[k])``, the ``y``
  stacked as by ``vmap`` (nothing where ``f`` returns ``None`` for them);
* ``jax.lax.fori_loop(lo, hi, body, init)``: ``for i in range(lo, hi): c =
  body(i, c)``.

Before → after::

    r = jax.vmap(f)(xs)         row = f(xs[0])
                        ──▶     rows_rows = np.zeros((xs.shape[0], *np.shape(row)))
                                rows_rows[0] = row
                                for k in range(1, xs.shape[0]):
                                    row_1 = f(xs[k])
                                    rows_rows[k] = row_1
                                rows = np.copy(rows_rows)
                                r = rows
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.frontend import jax_batching
from s2s_ad.frontend.jax_batching import located as _located
from s2s_ad.syntax_walk import walk


class LoopForms:
    """The loop forms of :class:`s2s_ad.frontend.jax_forms._Desugar`."""

    def callee(self, fn, pre: list, node) -> ast.expr:
        """The function a form calls, as a name (a lambda is named first)."""
        if isinstance(fn, ast.Name):
            return fn
        if isinstance(fn, ast.Lambda):
            name = self.fresh("fn")
            pre.append(_located(ast.Assign([ast.Name(name, ast.Store())], fn), node))
            return _load(name, node)
        return fn

    def named(self, value, base: str, pre: list, node) -> ast.expr:
        """``value`` as a name (computed once into a fresh one)."""
        if isinstance(value, ast.Name) or isinstance(value, ast.Constant):
            return value
        name = self.fresh(base)
        pre.append(_located(ast.Assign([ast.Name(name, ast.Store())], value), node))
        return _load(name, node)

    def stacked(self, leaves: list, count, loop_var: str, node, pre: list,
                body: list) -> None:
        """Statements, appended to ``pre``, that fill an array of ``count``
        rows per leaf: ``leaves`` is ``[(rows name, name of row 0, name of row
        k)]``, row 0 computed already, row k by the statements ``body`` of
        each iteration ``loop_var`` of ``range(1, count)``."""
        np_ = self.numpy_name()
        n = ast.unparse(count)
        head, tail, writes = [], [], []
        for rows, first, each in leaves:
            buffer = self.fresh(f"{rows}_rows")
            head += _parse(f"{buffer} = {np_}.zeros(({n}, *{np_}.shape({first})))\n"
                           f"{buffer}[0] = {first}\n", node)
            writes += _parse(f"{buffer}[{loop_var}] = {each}\n", node)
            tail += _parse(f"{rows} = {np_}.copy({buffer})\n", node)
        loop = _parse(f"for {loop_var} in range(1, {n}):\n    pass\n", node)[0]
        loop.body = list(body) + writes
        pre += [ast.fix_missing_locations(_located(s, node)) for s in head + [loop] + tail]

    def names_like(self, shape, base: str):
        """Fresh names in the nesting of ``shape`` (a :func:`_structure`):
        one name for a leaf, a tuple of them for a tuple."""
        if shape == "leaf":
            return self.fresh(base)
        return tuple(self.names_like(part, base) for part in shape)

    def vmap(self, node: ast.Call, pre: list):
        maker = node.func
        if len(maker.args) != 1 or any(k.arg != "in_axes" for k in maker.keywords):
            raise self.src.error(maker, "`jax.vmap` is read as a loop over the leading axis "
                                 "with one function and `in_axes` (0, or a tuple of 0 and "
                                 "None); other options are not supported")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
            raise self.src.error(node, "the function `jax.vmap` makes takes its arrays as "
                                 "positional arguments here")
        axes = [0] * len(node.args)
        for k in maker.keywords:
            given = k.value
            if isinstance(given, ast.Constant) and given.value == 0:
                continue
            if isinstance(given, ast.Tuple) and len(given.elts) == len(node.args) and all(
                    isinstance(e, ast.Constant) and e.value in (0, None) for e in given.elts):
                axes = [e.value for e in given.elts]
                continue
            raise self.src.error(given, "`in_axes` must be 0 or a tuple of 0 and None, one "
                                 "per argument, written in place")
        if 0 not in axes:
            raise self.src.error(node, "`jax.vmap` with no mapped argument")
        shape = self.output_structure(maker.args[0], None)
        args = [self.named(a, "mapped", pre, node) for a in node.args]
        rows = jax_batching.vectorise(self, maker.args[0], args, axes, node, pre)
        if rows is not None:
            return rows
        fn = self.callee(maker.args[0], pre, node)
        count = _parse(f"{ast.unparse(args[axes.index(0)])}.shape[0]", node)[0].value
        k = self.fresh("k")

        def call(index) -> ast.Call:
            return ast.Call(copy.deepcopy(fn), [
                ast.Subscript(copy.deepcopy(a), index, ast.Load()) if ax == 0
                else copy.deepcopy(a) for a, ax in zip(args, axes)], [])

        first = self.names_like(shape, "row")
        each = self.names_like(shape, "row")
        rows = self.names_like(shape, "rows")
        pre.append(ast.fix_missing_locations(_located(
            ast.Assign([_target(first)], call(ast.Constant(0))), node)))
        body = [ast.Assign([_target(each)], call(ast.Name(k, ast.Load())))]
        self.stacked(list(zip(_leaves(rows), _leaves(first), _leaves(each))), count, k,
                     node, pre, body)
        return _value(rows, node)

    def scan(self, node: ast.Call, pre: list):
        names = ("f", "init", "xs", "length", "reverse", "unroll")
        given = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names or kw.arg in given:
                raise self.src.error(kw, f"`jax.lax.scan` has no argument {kw.arg!r} here")
            given[kw.arg] = kw.value
        if "f" not in given or "init" not in given:
            raise self.src.error(node, "`jax.lax.scan(f, init, xs, length=n)`: give f and init")
        if "reverse" in given and not (isinstance(given["reverse"], ast.Constant)
                                       and given["reverse"].value is False):
            raise self.src.error(given["reverse"], "`reverse=` is not supported: scan "
                                 "`xs[::-1]` and flip the stacked outputs")
        xs = given.get("xs")
        if xs is not None and isinstance(xs, ast.Constant) and xs.value is None:
            xs = None
        if xs is not None and isinstance(xs, (ast.Tuple, ast.List, ast.Dict)):
            raise self.src.error(xs, "`xs` must be one array here (a tuple of arrays is "
                                 "not supported)")
        if xs is None and "length" not in given:
            raise self.src.error(node, "`jax.lax.scan` without `xs` needs `length=`")
        shape = self.output_structure(given["f"], 1)
        fn = self.callee(given["f"], pre, node)
        carry = self.carry(given["init"], pre, node)
        xs = None if xs is None else self.named(xs, "xs", pre, node)
        count = _parse(f"{ast.unparse(xs)}.shape[0]", node)[0].value if xs is not None \
            else self.named(given["length"], "length", pre, node)
        k = self.fresh("k")

        def step(index, outputs) -> ast.Assign:
            x = ast.Constant(None) if xs is None else ast.Subscript(
                copy.deepcopy(xs), index, ast.Load())
            return ast.Assign([ast.Tuple([_target(carry), _target(outputs)], ast.Store())],
                              ast.Call(copy.deepcopy(fn), [_value(carry, node), x], []))

        if shape is None:
            loop = _parse(f"for {k} in range(0):\n    pass\n", node)[0]
            loop.iter.args = [copy.deepcopy(count)]
            loop.body = [step(ast.Name(k, ast.Load()), self.fresh("unused"))]
            pre.append(ast.fix_missing_locations(_located(loop, node)))
            return ast.copy_location(ast.Tuple([_value(carry, node), ast.Constant(None)],
                                               ast.Load()), node)
        first = self.names_like(shape, "y")
        each = self.names_like(shape, "y")
        ys = self.names_like(shape, "ys")
        pre.append(ast.fix_missing_locations(_located(step(ast.Constant(0), first), node)))
        self.stacked(list(zip(_leaves(ys), _leaves(first), _leaves(each))), count, k, node,
                     pre, [step(ast.Name(k, ast.Load()), each)])
        return ast.copy_location(ast.Tuple([_value(carry, node), _value(ys, node)],
                                           ast.Load()), node)

    def carry(self, init, pre: list, node):
        """Names for a loop's carried value, in the nesting of ``init`` where
        it is a tuple written out (``(h, c)``): a tuple is then passed to the
        body and unpacked from what it returns, leaf by leaf."""
        shape = _literal_structure(init)
        names = self.names_like(shape, "carry")
        pre.append(ast.fix_missing_locations(_located(
            ast.Assign([_target(names)], init), node)))
        return names

    def output_structure(self, fn, item: int | None):
        """The nesting of what the mapped or scanned function returns (its
        ``item``-th element for a scan), read from its ``return``s: None when
        every one is ``None`` there, a tuple where every one writes out a
        tuple of the same nesting, else ``"leaf"``."""
        if isinstance(fn, ast.Lambda):
            returns = [fn.body]
        else:
            defs = [d for d in walk(self.src.tree) if isinstance(d, ast.FunctionDef)
                    and isinstance(fn, ast.Name) and d.name == fn.id]
            if len(defs) != 1:
                return "leaf"
            returns = [r.value for r in walk(defs[0]) if isinstance(r, ast.Return)
                       and _owner_def(defs[0], r)]
        if item is not None:
            returns = [r.elts[item] if isinstance(r, ast.Tuple) and len(r.elts) == 2 else None
                       for r in returns]
            if any(r is None for r in returns):
                return "leaf"
        if returns and all(isinstance(r, ast.Constant) and r.value is None for r in returns):
            return None if item is not None else "leaf"
        shapes = {_literal_structure(r) for r in returns}
        return shapes.pop() if len(shapes) == 1 else "leaf"

    def fori_loop(self, node: ast.Call, pre: list):
        if len(node.args) != 4 or any(k.arg != "unroll" for k in node.keywords):
            raise self.src.error(node, "`jax.lax.fori_loop(lower, upper, body, init)` takes "
                                 "four arguments here")
        lo, hi, body, init = node.args
        fn = self.callee(body, pre, node)
        carry = self.carry(init, pre, node)
        i = self.fresh("i")
        loop = _parse(f"for {i} in range(0):\n    pass\n", node)[0]
        loop.iter.args = [lo, hi]
        loop.body = [ast.Assign([_target(carry)], ast.Call(
            copy.deepcopy(fn), [ast.Name(i, ast.Load()), _value(carry, node)], []))]
        pre.append(ast.fix_missing_locations(_located(loop, node)))
        return _value(carry, node)


def _literal_structure(node):
    """``"leaf"``, or the nesting of a tuple written out (``(h, (a, b))``)."""
    if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return tuple(_literal_structure(e) for e in node.elts)
    return "leaf"


def _leaves(names) -> list:
    return [names] if isinstance(names, str) else [n for part in names for n in _leaves(part)]


def _target(names):
    if isinstance(names, str):
        return ast.Name(names, ast.Store())
    return ast.Tuple([_target(n) for n in names], ast.Store())


def _value(names, node):
    if isinstance(names, str):
        return _load(names, node)
    return ast.copy_location(ast.Tuple([_value(n, node) for n in names], ast.Load()), node)


def _owner_def(fn: ast.FunctionDef, ret: ast.Return) -> bool:
    """Whether ``ret`` returns from ``fn`` itself (not from a function nested in it)."""
    for n in walk(fn):
        if n is not fn and isinstance(n, (ast.FunctionDef, ast.Lambda)) and any(
                r is ret for r in walk(n)):
            return False
    return True


def _load(name: str, node) -> ast.Name:
    return ast.copy_location(ast.Name(name, ast.Load()), node)


def _parse(text: str, node) -> list:
    """The statements of ``text``, every node at ``node``'s position."""
    stmts = ast.parse(text).body
    for s in stmts:
        for n in walk(s):
            if "lineno" in n._attributes:
                del n.lineno, n.col_offset, n.end_lineno, n.end_col_offset
        _located(s, node)
    return stmts
