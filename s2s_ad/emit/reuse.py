"""Values the forward pass computed, read again instead of computed again.

A reverse sweep instantiates each local derivative from its rule: the
derivative of ``np.tanh`` is ``1 - H * H``, written out where it is used. In
the gradient of a forward-mode (JVP) module (a Hessian-vector product) the
forward pass often holds that very value already, because the JVP module
computed it for the tangent (``t5 = H * H; t6 = 1 - t5``). :func:`run`
replaces such a subexpression by the name that holds it::

    t5 = H * H                     t5 = H * H
    t6 = 1 - t5                    t6 = 1 - t5
    ...                      →     ...
    dt2 = dH_1 * (1 - H * H)       dt2 = dH_1 * t6

The value is the same bit for bit: the same operations on the same operands
in the same order. Only names whose value never changes take part: the
function's parameters and names assigned once, by a statement at the top
level (in no loop or branch), never written through (``x[i] = ...``,
``x += ...``), never given to a call that might write into them, never
copied to another name. Only arithmetic and calls of ``math``/NumPy
functions (no ``out=``) are matched.
"""

from __future__ import annotations

import ast

from s2s_ad.emit.code import Block, CodeFunction, Stmt
from s2s_ad.syntax_walk import walk

PURE_HELPERS = frozenset(("unbroadcast", "add_over", "spread", "matmul_adjoint", "dot_adjoint",
                          "astype_like", "inner_adjoint", "tensordot_adjoint", "contract"))
"""Helpers of a generated module that never write into their arguments."""

WRITING = frozenset(("copyto", "put", "place", "putmask", "fill_diagonal"))
"""NumPy functions that write into an argument."""


def run(fn: CodeFunction, modules: dict) -> None:
    """Replace, in ``fn``'s statements, each subexpression equal to the
    value of a name computed before it (see the module docstring)."""
    libraries = {modules.get("math", "math"), modules.get("numpy", "np"), "math", "np"}
    pure = {name for name in fn.helpers if name in PURE_HELPERS}
    stable = _stable(fn, libraries, pure)
    defs: dict = {}     # canonical form -> the name holding it
    forms: dict = {}    # stable name assigned once -> its canonical form
    for s in fn.body:
        if isinstance(s, Stmt) and s.node is not None:
            _replace(s.node, defs, forms, stable, libraries, pure)
            node = s.node
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id in stable:
                form = _form(node.value, forms, stable, libraries)
                if form is not None:
                    name = node.targets[0].id
                    forms[name] = form
                    if isinstance(node.value, (ast.BinOp, ast.UnaryOp, ast.Call)):
                        defs.setdefault(form, name)
        elif isinstance(s, Block):
            for inner in _statements(s):
                _replace(inner, defs, forms, stable, libraries, pure)


def _statements(block: Block):
    yield block.head
    for s in block.body + block.orelse:
        if isinstance(s, Block):
            yield from _statements(s)
        elif s.node is not None:
            yield s.node


def _replace(node: ast.AST, defs: dict, forms: dict, stable: set, libraries: set,
             pure: set) -> None:
    """Top down: a subexpression whose form a name holds becomes that name."""
    if not defs:
        return
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            setattr(node, field, _visit(value, defs, forms, stable, libraries, pure))
        elif isinstance(value, list):
            value[:] = [_visit(v, defs, forms, stable, libraries, pure) if isinstance(v, ast.expr)
                        else v for v in value]
            for v in value:
                if isinstance(v, (ast.stmt, ast.keyword, ast.comprehension)):
                    _replace(v, defs, forms, stable, libraries, pure)
        elif isinstance(value, (ast.keyword, ast.comprehension)):
            _replace(value, defs, forms, stable, libraries, pure)


def _visit(e: ast.expr, defs, forms, stable, libraries, pure) -> ast.expr:
    if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Call)) and isinstance(getattr(e, "ctx", None),
                                                                        (type(None), ast.Load)):
        form = _form(e, forms, stable, libraries)
        name = defs.get(form) if form is not None else None
        if name is not None:
            return ast.Name(name, ast.Load())
    if isinstance(e, ast.Name) or isinstance(getattr(e, "ctx", None), ast.Store):
        return e
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id not in pure:
        # a call that may write into what it is given (added_into adds into its
        # first argument, an array made there): no name read again goes in,
        # also not through a pure helper that may return its argument
        # (unbroadcast(g, x) is g where the shapes agree)
        return e
    _replace(e, defs, forms, stable, libraries, pure)
    return e


def _form(e: ast.expr, forms: dict, stable: set, libraries: set):
    """A hashable canonical form of ``e``, names assigned once read through
    their own forms; None where ``e`` is not pure arithmetic on stable names."""
    t = type(e)
    if t is ast.Name:
        if e.id in forms:
            return forms[e.id]
        return ("name", e.id) if e.id in stable else None
    if t is ast.Constant:
        return ("const", type(e.value).__name__, repr(e.value))
    if t is ast.BinOp:
        left = _form(e.left, forms, stable, libraries)
        right = _form(e.right, forms, stable, libraries) if left is not None else None
        return None if right is None else ("bin", type(e.op).__name__, left, right)
    if t is ast.UnaryOp:
        operand = _form(e.operand, forms, stable, libraries)
        return None if operand is None else ("unary", type(e.op).__name__, operand)
    if t is ast.Call and not e.keywords and isinstance(e.func, ast.Attribute) \
            and isinstance(e.func.value, ast.Name) and e.func.value.id in libraries \
            and e.func.attr not in WRITING:
        args = []
        for a in e.args:
            f = _form(a, forms, stable, libraries)
            if f is None:
                return None
            args.append(f)
        return ("call", e.func.value.id, e.func.attr, tuple(args))
    return None


def _stable(fn: CodeFunction, libraries: set, pure: set) -> set:
    """The names whose value never changes once set: parameters never
    assigned, and names assigned exactly once by a top-level ``name = ...``;
    in both cases never written through, never given to a call that might
    write into them, never copied to another name."""
    args = fn.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    count: dict = {p: 1 for p in params}
    once_at_top = set(params)
    spoiled: set = set()
    for s in fn.body:
        top = isinstance(s, Stmt)
        nodes = [s.node] if top and s.node is not None else \
            list(_statements(s)) if isinstance(s, Block) else []
        for node in nodes:
            simple = top and isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name)
            if simple:
                once_at_top.add(node.targets[0].id)
            for n in walk(node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    count[n.id] = count.get(n.id, 0) + 1
                elif isinstance(n, (ast.Subscript, ast.Attribute)) and \
                        isinstance(n.ctx, (ast.Store, ast.Del)):
                    spoiled.update(_bases(n))
                elif isinstance(n, ast.AugAssign):
                    spoiled.update(_bases(n.target))
                elif isinstance(n, ast.Call):
                    spoiled.update(_written_by(n, libraries, pure))
                elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                    spoiled.update(_copied(n.value))
    return {name for name, c in count.items()
            if c == 1 and name in once_at_top and name not in spoiled}


def _bases(target: ast.expr) -> set:
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return {target.id} if isinstance(target, ast.Name) else set()


def _copied(value: ast.expr) -> set:
    """Names an assignment makes another name share (``a = b``, ``a, c = b, d``)."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.Tuple, ast.List)):
        return {e.id for e in value.elts if isinstance(e, ast.Name)}
    return set()


def _written_by(call: ast.Call, libraries: set, pure: set) -> set:
    """The names a call may write into: every name among its arguments and the
    object of a method, unless it is a ``math``/NumPy function without
    ``out=`` or a helper that never writes."""
    f = call.func
    if isinstance(f, ast.Name) and f.id in pure:
        return set()
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
            and f.value.id in libraries and f.attr not in WRITING \
            and not any(k.arg == "out" for k in call.keywords):
        return set()
    out = set()
    for a in list(call.args) + [k.value for k in call.keywords]:
        out.update(_bases(a) if isinstance(a, (ast.Subscript, ast.Attribute)) else
                   {a.id} if isinstance(a, ast.Name) else set())
        if isinstance(a, ast.Starred):
            out.update(_bases(a.value) | ({a.value.id} if isinstance(a.value, ast.Name) else set()))
    if isinstance(f, ast.Attribute):
        out.update(_bases(f.value) | ({f.value.id} if isinstance(f.value, ast.Name) else set()))
    return out
