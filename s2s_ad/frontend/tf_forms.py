"""Frontend: code written against TensorFlow rewritten as the NumPy code it
means.

Contract: :func:`desugar` rewrites, in place and before lowering, a function
that reads TensorFlow (:func:`s2s_ad.frontend.tf_names.reads_tf`): every call
of a TensorFlow function in :data:`~s2s_ad.frontend.tf_table.FUNCTIONS` and
every tensor method in :data:`~s2s_ad.frontend.tf_table.METHODS` becomes the
NumPy expression with TensorFlow's meaning (the rewrite shared with torch's,
:class:`s2s_ad.frontend.library_forms.Rewrite`), TensorFlow's dtypes become
NumPy's, and

* ``tf.cond(pred, true_fn, false_fn)`` is the conditional expression
  ``true_fn() if pred else false_fn()`` (a lambda's body in place of its
  call): only the arm taken runs, as in TensorFlow;
* ``tf.while_loop(cond, body, [v1, ..., vn])`` is a ``while`` loop placed
  before the statement, carrying fresh names ``c1, ..., cn`` from
  ``v1, ..., vn``: ``while <cond's expression of c1..cn>: c1, ..., cn =
  body(c1, ..., cn)``, the form itself the tuple ``(c1, ..., cn)``; ``cond``
  is a lambda or a nested ``def`` returning one expression;
* ``y += e`` (any operator) on a name is ``y = y + e``: a TensorFlow tensor is
  never changed in place;
* a nested function changing an enclosing variable through ``nonlocal``, and
  a nested generator function consumed whole by ``tuple(...)``, are read as
  :mod:`s2s_ad.frontend.enclosing_writes` rewrites them (the variable passed in and
  returned; the items collected in a list).

The generated gradient then calls NumPy only. Anything TensorFlow without a
mapping is refused, located, naming it (``tf.GradientTape``,
``tf.stop_gradient``, ``tf.Variable`` with a hint).

Before → after::

    tf.reduce_sum(x ** 2, 1)                    np.sum(x ** 2, axis=1)
    tf.cond(n < 1e-4, lambda: I, rotate)  ──▶   I if n < 1e-4 else rotate()
"""

from __future__ import annotations

import ast
import copy

import numpy

from s2s_ad.frontend import enclosing_writes, tf_names
from s2s_ad.frontend.library_forms import Rewrite
from s2s_ad.frontend.library_table import Spec
from s2s_ad.frontend.tf_table import FUNCTIONS, METHODS
from s2s_ad.names import unused
from s2s_ad.syntax_walk import walk

HINTS = {
    "GradientTape": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
    "gradients": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
    "stop_gradient": "compute the value outside and pass it as an argument (a parameter "
                     "not in wrt)",
    "Variable": "pass the array as an argument (a NumPy array) and differentiate with "
                "respect to it",
    "function": "differentiate the undecorated Python function; s2s-ad reads its source",
    "numpy": "the arrays are NumPy's already: drop `.numpy()`",
}
DROPPED = frozenset({"name"})
"""Keywords with no meaning for the NumPy computation (dropped, never read)."""
COND = Spec("pred true_fn false_fn name", None)
WHILE = Spec("cond body loop_vars shape_invariants parallel_iterations back_prop swap_memory "
             "maximum_iterations name", None)


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a function reading TensorFlow) into NumPy code."""
    if not getattr(src, "tf", False) or getattr(src, "tf_desugared", False):
        return
    src.tf_desugared = True
    enclosing_writes.rewrite(src)
    _TfRewrite(src).run()


class _TfRewrite(Rewrite):
    """TensorFlow's tables, its functional control flow and its immutable
    tensors."""

    prefix = "tf"
    section = "TensorFlow-flavoured code"
    functions, methods = FUNCTIONS, METHODS
    dtypes, constants = tf_names.DTYPES, tf_names.CONSTANTS
    hints, dropped = HINTS, DROPPED

    def owns(self, obj) -> bool:
        return tf_names.is_tf(obj)

    def public_name(self, obj) -> str:
        return tf_names.tf_name(obj)

    def float64(self, dtype) -> bool:
        """Whether ``dtype`` (rewritten) is NumPy's float64."""
        return self.resolve(dtype) is numpy.float64

    def fresh(self, base: str) -> str:
        return unused(base, self.taken)

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.target, ast.Name) or isinstance(
                node.value, (ast.List, ast.ListComp)):
            return node  # (a Python list's `+=` extends it in place)
        value = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(value, node)),
                                 node)

    def visit_Call(self, node):
        name = self.public(node.func)
        if name == "cond":
            return self.cond(node)
        if name == "while_loop":
            return self.while_loop(node)
        return super().visit_Call(node)

    # -- control flow ------------------------------------------------------------

    def cond(self, node: ast.Call):
        self.current = node
        bound = self.bind(COND, node, list(node.args), "tf.cond")
        for arm in ("true_fn", "false_fn"):
            if bound.get(arm) is None:
                raise self.refuse(node, f"tf.cond without `{arm}` is not supported")
        pred = self.visit(bound["pred"])
        self.once += 1
        arms = [self.called(bound[k], [], "tf.cond") for k in ("true_fn", "false_fn")]
        self.once -= 1
        return ast.copy_location(ast.IfExp(pred, arms[0], arms[1]), node)

    def called(self, fn, args: list, what: str):
        """``fn(*args)``: a lambda's body with its parameters renamed to the
        names ``args``; any other function called."""
        if isinstance(fn, ast.Lambda):
            params = self.params(fn, len(args), what)
            return self.visit(_renamed(copy.deepcopy(fn.body), dict(zip(params, args))))
        return ast.copy_location(ast.Call(self.visit(fn), [ast.Name(a, ast.Load())
                                                          for a in args], []), fn)

    def params(self, fn, count: int, what: str) -> list:
        spec = fn.args
        if spec.vararg or spec.kwarg or spec.kwonlyargs or spec.defaults or \
                len(spec.posonlyargs + spec.args) != count:
            per = ", one per loop variable" if what == "tf.while_loop" else ""
            raise self.refuse(fn, f"`{what}`: this function must take {count} positional "
                              f"parameter(s){per}")
        return [a.arg for a in spec.posonlyargs + spec.args]

    def while_loop(self, node: ast.Call):
        self.current = node
        if self.once:
            raise self.refuse(node, "tf.while_loop inside a lambda, comprehension, conditional "
                              "expression or `while` condition is not supported: assign it "
                              "to a name first")
        bound = self.bind(WHILE, node, list(node.args), "tf.while_loop")
        if bound.get("maximum_iterations") is not None:
            raise self.refuse(bound["maximum_iterations"], "`maximum_iterations=` of "
                              "tf.while_loop is not supported: put the bound in `cond`")
        start = bound.get("loop_vars")
        if not isinstance(start, (ast.List, ast.Tuple)) or not start.elts or any(
                isinstance(e, ast.Starred) for e in start.elts):
            raise self.refuse(start or node, "tf.while_loop's `loop_vars` must be written as "
                              "a list or tuple of the loop variables")
        count = len(start.elts)
        body_def = self.nested_def(bound["body"])
        bases = [a.arg for a in body_def.args.args] if body_def is not None and len(
            body_def.args.args) == count else ["carry"] * count
        names = [self.fresh(b) for b in bases]
        inits = [self.visit(e) for e in start.elts]
        self.pending.append(ast.copy_location(ast.Assign(
            [_names(names, ast.Store())], ast.Tuple(inits, ast.Load())), node))
        self.once += 1
        test = self.test(bound["cond"], names)
        self.once -= 1
        step = self.called(bound["body"], names, "tf.while_loop")
        loop = ast.While(test, [ast.copy_location(ast.Assign([_names(names, ast.Store())],
                                                             step), node)], [])
        self.pending.append(ast.fix_missing_locations(ast.copy_location(loop, node)))
        return ast.copy_location(_names(names, ast.Load()), node)

    def test(self, cond, names: list):
        """The loop's condition: the expression ``cond`` returns, its
        parameters renamed to the loop variables."""
        if isinstance(cond, ast.Lambda):
            return self.called(cond, names, "tf.while_loop")
        found = self.nested_def(cond)
        body = [s for s in found.body if not (isinstance(s, ast.Expr) and isinstance(
            s.value, ast.Constant) and isinstance(s.value.value, str))] if found else []
        if found is None or len(body) != 1 or not isinstance(body[0], ast.Return) \
                or body[0].value is None:
            raise self.refuse(cond, "tf.while_loop's `cond` must be a lambda or a nested "
                              "`def` returning one expression (`return tf.less(t, n)`)")
        params = self.params(found, len(names), "tf.while_loop")
        return self.visit(_renamed(copy.deepcopy(body[0].value), dict(zip(params, names))))

    def nested_def(self, node) -> ast.FunctionDef | None:
        """The nested ``def`` a name refers to (the only one of that name)."""
        if not isinstance(node, ast.Name):
            return None
        found = [d for d in walk(self.src.tree) if isinstance(d, ast.FunctionDef)
                 and d.name == node.id and d is not self.src.tree]
        return found[0] if len(found) == 1 else None


def _names(names: list, ctx):
    return ast.Tuple([ast.Name(n, ctx) for n in names], ctx)


def _renamed(expr, names: dict):
    for node in walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return expr
