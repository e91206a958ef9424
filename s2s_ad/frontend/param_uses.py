"""A parameter lowered as a number (or an array) that the code uses as a
list, a tuple or a structure: found while lowering, said with the
parameter's name.

Contract: ``grad`` and ``jvp`` made without a call (and the first lowering
of one with a call) lower each parameter as a number, or in NumPy code as
an array, before they know what it receives. :func:`used_as_sequence`
raises :class:`SequenceParameter` naming the parameter when the code uses
it as a list or tuple: the parameter itself (``xs[0]``, ``len(xs)``,
``for v in xs``), a value computed from it by arithmetic (``A = A * 1.05``
then ``A[0, 0]``: the parameter is an array), or an item of it read by a
key (``params[0]["W"]``, ``layer["W"]`` after ``layer = params[0]``: a list
of dicts). The caller then lowers the parameter as a list of any length, or
generates the code for the arguments of each call
(:func:`s2s_ad.cache.entry`), as ``vjp`` always does; made without a call,
the refusal asks for the length, the arrays or an example of the structure.

Before → after (``grad(f)`` then ``grad(f)(A, x)`` with ``A`` an array)::

    def f(A, x):                 lowered with A a number: `A[0, 0]` raises
        A = A * 1.05             SequenceParameter('A') → lowered again with
        return A[0, 0] * x       A an array, as the call passes it
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.errors import SourceError


class SequenceParameter(SourceError):
    """A parameter is used as a list or tuple, but its length was not given."""

    def __init__(self, name: str, *args):
        self.param = name
        super().__init__(*args)


def where(lo, node: ast.AST, message: str) -> tuple:
    err = lo.src.error(node, message)
    return err.message, err.file, err.line, err.col, err.source_line


def is_param(lo, value) -> bool:
    return any(p.value is value for p in getattr(lo, "params_so_far", ()))


def used_as_sequence(lo, value, node: ast.AST, kinds=("float",), keyed: bool = False) -> None:
    """Raise :class:`SequenceParameter` when ``value``, used at ``node`` as a
    list or tuple (``keyed``: indexed by a string key), is a parameter of
    ``kinds``, or a number computed from one."""
    if keyed:
        _keyed_item(lo, value, node, kinds)
    if not (isinstance(value, ir.Value) and value.kind in kinds):
        return
    if is_param(lo, value):
        exc = SequenceParameter(value.var, *where(lo, node, (
            f"parameter {value.var!r} is used as a list or tuple; give its length "
            f"(lengths={{{value.var!r}: N}}, --length {value.var}=N), or say it receives a "
            f"NumPy array (arrays=[{value.var!r}], --array {value.var}), or call the gradient "
            "with a list or an array, which does this for you (for a list of dicts, tuples or "
            f"other structures, or give an example of it: --like {value.var}=EXAMPLE)")))
        exc.owner = lo.src.fn  # (whose parameter: s2s_ad.frontend.callees.passed_on)
        raise exc
    root = _computed_from(lo, value) if value.kind == "float" and not getattr(
        lo, "array_mode", False) else None
    if root is not None:
        shown = ast.unparse(node.value) if isinstance(node, ast.Subscript) else ast.unparse(node)
        exc = SequenceParameter(root.var, *where(lo, node, (
            f"`{shown}` is computed from parameter {root.var!r}, lowered as a number, and is "
            f"used here as a list, tuple or array; say {root.var!r} receives a NumPy array "
            f"(arrays=[{root.var!r}], --array {root.var}), or call the gradient with the "
            "value, which does this for you")))
        exc.owner = lo.src.fn
        raise exc


def _computed_from(lo, value: ir.Value) -> ir.Value | None:
    """The first named number parameter the number ``value`` is computed from
    by the ops recorded while lowering (``A = A * 1.05``), else None. A
    branch's or loop's value (no op of its own) under a parameter's name
    (``if c: A = A * 2`` then ``A[0, 0]``) is taken for that parameter: the
    code is refused as lowered either way, and the parameter's kind is then
    taken from the call."""
    params = {p.value.var: p.value for p in getattr(lo, "params_so_far", ())
              if p.value.kind == "float" and p.value.var}
    stack, seen = [value], set()
    while stack and len(seen) < 256:
        v = stack.pop()
        if id(v) in seen or not isinstance(v, ir.Value):
            continue
        seen.add(id(v))
        if v is not value and v.kind == "float" and v.var and is_param(lo, v):
            return v
        # (a helper's result too: `r = pair(x)`, then `r[1][0]`)
        op = lo.defs.get(id(v)) or lo.__dict__.get("call_ops", {}).get(id(v))
        if isinstance(op, ir.Op):
            stack.extend(reversed([a for a in op.args if isinstance(a, ir.Value)]))
        elif v.kind == "float" and v.var in params:
            return params[v.var]
        else:
            stack.extend(_merged(lo, v))
    return None


def _merged(lo, v: ir.Value) -> list:
    """The values a branch's or loop's result ``v`` is one of (its arms'
    yields, a loop's initial and next values), when made in the current block."""
    for node in ir.walk(ir.Region(lo.ops)):
        outs = getattr(node, "outs", None)
        if isinstance(node, ir.Op) or not outs or not any(o is v for o in outs):
            continue
        k = next(i for i, o in enumerate(outs) if o is v)
        regions = [node.body] if isinstance(node, ir.While) else node.regions
        found = [r.yields[k] for r in regions if k < len(r.yields)]
        return found + list(getattr(node, "inits", ())[k:k + 1])
    return []


def _keyed_item(lo, value, node: ast.Subscript, kinds) -> None:
    """``params[0]["W"]`` (or ``layer["W"]``, ``layer = params[i]``,
    ``q = params.copy()``) on a parameter lowered as an array or number,
    before any argument was seen:
    the parameter is a list of dicts. Raise :class:`SequenceParameter` for it,
    so that ``grad``/``jvp`` generate the code for the structure they are
    called with (as ``vjp`` does), and say so where they cannot."""
    root, seen = value, 0
    while isinstance(root, ir.Value) and seen < 16 and not is_param(lo, root):
        op = lo.defs.get(id(root))
        if op is None or op.prim not in ("getitem", "array.getitem", "np.copy") or not op.args:
            return
        root, seen = op.args[0], seen + 1
    if not (isinstance(root, ir.Value) and root.kind in kinds) or (seen == 0 and root.var):
        return
    if root.var is None:  # an item of a list passed to this helper, lowered as a number
        raise lo.src.error(node, f"`{ast.unparse(node.value)}` is indexed by a key, so the list "
                           "it comes from holds dicts; it was given a length only (lengths=, "
                           "--length), which makes a list of numbers: give an example of its "
                           "structure (on the command line --like NAME=EXAMPLE, EXAMPLE a "
                           "module-level value), or call the gradient with the value, which "
                           "generates the code for its structure")
    exc = SequenceParameter(root.var, *where(lo, node, (
        f"parameter {root.var!r} is used as a structure of dicts (`{ast.unparse(node)}`); "
        "call the gradient with the value (a list or tuple of dicts), which generates the "
        f"code for its structure, or give an example of it (--like {root.var}=EXAMPLE)")))
    exc.owner = lo.src.fn
    raise exc
