"""Forward mode of lists made or grown at run time: the tangent list beside the list.

Contract: the versions of a list made in the function (``list.new``,
``list.fill``, then ``list.append`` and ``list.set``: one Python list) share
one name in the JVP module, and so do their tangents (``dys``): the tangent
list is made with the list, or with zeros at the first op that makes the
list active, and changed beside it, op for op::

    ys = [0.0] * n                       ys = [0.0] * n
    ys[i] = xs[i] * a          ──▶       dys = [0.0 for item in ys]
                                         ys[i] = xs[i] * a
                                         dys[i] = dxs[i] * a + da * xs[i]
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt, call as _call


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def list_op(fw, op: ir.Op, comment: str) -> list:
    """The statements of ``op`` (``list.new``, ``list.fill``, ``list.set``,
    ``list.append``) and of its tangent, for the forward transform ``fw``."""
    store = ast.Name(fw.nm(op.out), ast.Store())
    if op.prim == "list.new":
        out = [Stmt(ast.Assign([store], ast.List([fw.expr(a) for a in op.args], ast.Load())),
                    comment, op)]
        if fw.active(op.out):
            d = ast.List([fw.tangent(a) for a in op.args], ast.Load())
            out.append(Stmt(ast.Assign([ast.Name(fw.t(op.out), ast.Store())], d), comment))
        return out
    if op.prim == "list.fill":
        c, n = (fw.expr(a) for a in op.args)
        out = [Stmt(ast.Assign([store], ast.BinOp(ast.List([c], ast.Load()), ast.Mult(), n)),
                    comment, op)]
        if fw.active(op.out):
            d = ast.BinOp(ast.List([fw.tangent(op.args[0])], ast.Load()), ast.Mult(),
                          fw.expr(op.args[1]))
            out.append(Stmt(ast.Assign([ast.Name(fw.t(op.out), ast.Store())], d), comment))
        return out
    if op.prim == "list.set":
        seq, index, v = op.args
        out = []
        d = fw.t(op.out) if fw.active(op.out) else None
        if d is not None and not fw.active(seq):
            # the write that makes the list active: its tangent list starts as zeros
            out.append(Stmt(ast.Assign([ast.Name(d, ast.Store())], fw.tangent(seq)), comment))
        out.append(Stmt(ast.Assign([ast.Subscript(_load(fw.nm(op.out)), fw.expr(index),
                                                  ast.Store())], fw.expr(v)), comment, op))
        if d is not None:
            out.append(Stmt(ast.Assign([ast.Subscript(_load(d), fw.expr(index),
                                                      ast.Store())], fw.tangent(v)),
                            comment))
        return out
    seq, v = op.args
    out = []
    d = fw.t(op.out) if fw.active(op.out) else None
    if fw.active(op.out) and not fw.active(seq):
        # before the append: the zero tangents of an inactive list are one per item it
        # has so far (every version is one Python list: after the append, one too many)
        out.append(Stmt(ast.Assign([ast.Name(d, ast.Store())], fw.tangent(seq)), comment))
    out.append(Stmt(ast.Expr(_call(f"{fw.nm(op.out)}.append", [fw.expr(v)])), comment,
                    op))
    if fw.active(op.out):
        out.append(Stmt(ast.Expr(_call(f"{d}.append", [fw.tangent(v)])), comment))
    return out


def tangent_lengths(fw) -> list:
    """``if len(dxs) != len(xs): raise ValueError(...)`` for each list of any
    length the forward transform ``fw`` differentiates (the function's own
    parameters): a tangent list of another length would be read short (or
    its extra items ignored) instead of refused."""
    out = []
    for p in fw.func.params:
        v = p.value
        if v not in fw.wrt or v.kind not in ("list", "tuple") or p.items is not None \
                or p.tree is not None:
            continue
        d = fw.t(v)
        test = ast.Compare(_call("len", [_load(d)]), [ast.NotEq()],
                           [_call("len", [_load(v.name)])])
        message = ast.JoinedStr([
            ast.Constant(f"the tangent {d} has "),
            ast.FormattedValue(_call("len", [_load(d)]), -1, None),
            ast.Constant(f" items, {v.var} has "),
            ast.FormattedValue(_call("len", [_load(v.name)]), -1, None)])
        raise_ = ast.Raise(_call("ValueError", [message]), None)
        out.append(Block(ast.If(test, [], []), [Stmt(raise_, "")], [],
                         f"a tangent list of the length of {v.var}"))
    return out
