"""Peephole simplification of generated expressions.

Contract: :func:`simplify` returns an expression that computes the same
value, for every float input, as the one it is given, with the noise of
instantiated rules removed: ``1 * a → a``, ``a * -1 → -a``, ``g * (1 / y) →
g / y``, ``x ** 1 → x``, numeric constants folded. Rewrites that change a
result at special values (``0 * a → 0`` is wrong for ``a = inf``) are not made.

>>> import ast
>>> ast.unparse(simplify(ast.parse("dy * (2 * x ** (2 - 1))", mode="eval").body))
'dy * (2 * x)'
>>> ast.unparse(simplify(ast.parse("dy * (1 / y)", mode="eval").body))
'dy / y'
>>> ast.unparse(simplify(ast.parse("0.0 if 2 == 0 else 2 * x ** (2 - 1)", mode="eval").body))
'2 * x'
"""

from __future__ import annotations

import ast
import operator
from s2s_ad.syntax_walk import child_fields, walk

FOLD = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Pow: operator.pow}


def _num(node: ast.expr):
    """The numeric value of a literal (``-2`` included), else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _num(node.operand)
        return None if v is None else -v
    return None


def _literal(value) -> ast.expr:
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _neg(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node.operand
    v = _num(node)
    if v is not None:
        return _literal(-v)
    return ast.UnaryOp(ast.USub(), node)


def simplify(node: ast.expr) -> ast.expr:
    """``node`` simplified, in place where it can be: its children first,
    then its own rewrite (the order of an ``ast.NodeTransformer``, without
    its per-node dispatch: every reverse statement passes here)."""
    for name in child_fields(node):
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            setattr(node, name, simplify(value))
        elif isinstance(value, list):
            value[:] = [simplify(x) if isinstance(x, ast.AST) else x for x in value]
    rewrite = _REWRITES.get(node.__class__)
    return node if rewrite is None else rewrite(node)


def _unary(node: ast.UnaryOp) -> ast.expr:
    if isinstance(node.op, ast.USub):
        return _neg(node.operand)
    return node


def _call(node: ast.Call) -> ast.expr:
    # ``np.where(2 == 0, a, b)``: the array form of the same guard.
    if isinstance(node.func, ast.Attribute) and node.func.attr == "where" \
            and len(node.args) == 3 and not node.keywords:
        decided = _decide(node.args[0])
        if decided is not None:
            return node.args[1] if decided else node.args[2]
    return node


def _if_exp(node: ast.IfExp) -> ast.expr:
    # A rule's guard on a constant operand (``0.0 if y == 0 else ...``
    # with y = 2) is decided here, so the generated line shows only
    # the branch that runs.
    decided = _decide(node.test)
    if decided is None:
        return node
    return node.body if decided else node.orelse


COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
           ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def _decide(test: ast.expr):
    """The value of a comparison between two numeric literals, else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and type(test.ops[0]) in COMPARE):
        return None
    lv, rv = _num(test.left), _num(test.comparators[0])
    if lv is None or rv is None:
        return None
    return COMPARE[type(test.ops[0])](lv, rv)


def _binop(node: ast.BinOp) -> ast.expr:
    left, right, op = node.left, node.right, node.op
    lv, rv = _num(left), _num(right)
    if lv is not None and rv is not None and type(op) in FOLD:
        try:
            value = FOLD[type(op)](lv, rv)
        except (OverflowError, ZeroDivisionError):
            return node
        if isinstance(value, (int, float)) and not isinstance(value, complex):
            return _literal(value)
    if isinstance(op, ast.Mult):
        # Multiplying by an int 1 never changes a float; by 1.0 it may turn
        # an int into a float, which is harmless for adjoints (always float).
        if lv == 1:
            return right
        if rv == 1:
            return left
        if lv == -1:
            return _neg(right)
        if rv == -1:
            return _neg(left)
        if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
            return _neg(_binop(ast.BinOp(left, ast.Mult(), right.operand)))
        if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Div) and _num(right.left) == 1:
            return ast.BinOp(left, ast.Div(), right.right)
        if isinstance(right, ast.IfExp) and {_num(right.body), _num(right.orelse)} == {0, 1}:
            # g * (1.0 if c else 0.0)  →  g if c else 0.0
            body = left if _num(right.body) == 1 else right.body
            orelse = left if _num(right.orelse) == 1 else right.orelse
            return ast.IfExp(right.test, body, orelse)
    if isinstance(op, ast.Pow) and rv == 1:
        return left
    if isinstance(op, ast.Sub) and isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
        return ast.BinOp(left, ast.Add(), right.operand)
    return node


_REWRITES = {ast.UnaryOp: _unary, ast.BinOp: _binop, ast.Call: _call, ast.IfExp: _if_exp}
"""A node's own rewrite, by its class (made once its children are simplified)."""


ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def float_factors(node: ast.expr) -> ast.expr:
    """``node`` with each int literal that is an operand of ``+ - * /`` beside
    a value not a literal written as a float (``dx * t * 2`` → ``dx * t * 2.0``,
    ``1 - t * t`` → ``1.0 - t * t``): the same value for a float operand,
    without the conversion CPython makes of an int operand on every operation
    (about 20 ns). Only arithmetic is entered (operators and the arms of a
    conditional expression), never a call's arguments, a subscript or a
    comparison, so no index or shape changes. For the derivatives of scalar
    rules (an int operand then gives a float, as a derivative is read anyway).

    >>> ast.unparse(float_factors(ast.parse("-(dx * t * 2) + 3 * y / 4", mode="eval").body))
    '-(dx * t * 2.0) + 3.0 * y / 4.0'
    >>> ast.unparse(float_factors(ast.parse("dxs[i + 1] * f(2 * x) * 2", mode="eval").body))
    'dxs[i + 1] * f(2 * x) * 2.0'
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
        node.left, node.right = float_factors(node.left), float_factors(node.right)
        node.left, node.right = _floated(node.left, node.right), _floated(node.right, node.left)
    elif isinstance(node, ast.BinOp):
        node.left = float_factors(node.left)  # (a power's int exponent stays)
    elif isinstance(node, ast.UnaryOp):
        node.operand = float_factors(node.operand)
    elif isinstance(node, ast.IfExp):
        node.body, node.orelse = float_factors(node.body), float_factors(node.orelse)
    return node


def _floated(side: ast.expr, other: ast.expr) -> ast.expr:
    """``side`` as a float literal where it is an int one (exactly a float:
    at most 2**53 in size) and ``other`` is not a literal."""
    v = _num(side)
    if type(v) is not int or abs(v) > 2 ** 53 or _num(other) is not None:
        return side
    return _literal(float(v))


def factor_first(node: ast.expr) -> ast.expr:
    """``g * (2 * x)`` → ``g * 2 * x``: a power-of-two factor (2, 4, ...) of a
    local derivative taken onto the adjoint, where it multiplies the smaller
    array (an adjoint left unspread, ``np.expand_dims(dsq, 2)``, or a number)
    instead of the operand. Both products are exact, so the contribution is
    the same number bit for bit (short of an overflow to inf in ``2 * x``,
    which the new order avoids): the adjoint of ``x ** 2`` over a
    1000×50×20 array, 4.8 ms → 1.7 ms.

    >>> ast.unparse(factor_first(ast.parse("g * (2 * x)", mode="eval").body))
    'g * 2 * x'
    >>> ast.unparse(factor_first(ast.parse("g * (3 * x)", mode="eval").body))
    'g * (3 * x)'
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) \
            and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Mult):
        c = _num(node.right.left)
        if type(c) in (int, float) and c >= 2 and c == 2 ** (int(c).bit_length() - 1) \
                and _num(node.right.right) is None:
            return ast.BinOp(ast.BinOp(node.left, ast.Mult(), node.right.left), ast.Mult(),
                             node.right.right)
    return node


def drop_unused_items(fn):
    """Replace ``xs_0, ..., xs_99 = xs`` by a length check where no item name
    is read (a loop that indexes ``xs[i]`` reads the list itself): the check
    keeps what the unpacking guaranteed — code generated for 100 items is
    never run on another length — without binding a hundred dead names."""
    unpacks = [s for s in fn.body if getattr(s, "unpacks", "")]
    if not unpacks:
        return fn
    read: set[str] = set()
    for s in fn.body:
        if s.node is not None and s not in unpacks:
            read |= {n.id for n in walk(s.node) if isinstance(n, ast.Name)}
    read |= {n.id for n in walk(fn.returns) if isinstance(n, ast.Name)}
    body = []
    for s in fn.body:
        if s in unpacks:
            items = [e.id for e in s.node.targets[0].elts]
            if not any(n in read for n in items):
                s = type(s)(_length_check(s.unpacks, len(items)))
        body.append(s)
    fn.body = body
    return fn


def _length_check(name: str, n: int) -> ast.stmt:
    message = f"{name} must have {n} items"
    test = ast.Compare(ast.Call(ast.Name("len", ast.Load()), [ast.Name(name, ast.Load())], []),
                       [ast.NotEq()], [ast.Constant(n)])
    error = ast.Call(ast.Name("ValueError", ast.Load()), [ast.Constant(message)], [])
    return ast.If(test, [ast.Raise(error, None)], [])
