"""Lists grown at run time: ``xs = []`` then ``xs.append(v)`` in a loop.

Contract: a list built in the function stays a lowering-time
:class:`~s2s_ad.frontend.structures.StaticList` (its length known, its items
SSA operands) until a loop that is not unrolled, or a branch, appends to it.
Just before that loop or branch the list becomes one IR value of kind
``"list"``: a ``list.new`` op holding the items it has so far. From then on

* ``xs.append(v)`` is a ``list.append`` op, a new SSA version of the list
  (every name bound to the old version is rebound to the new one, as every
  name of a Python list sees an append);
* a loop or branch that appends carries the list like any other value;
* ``xs[i]`` (``i`` a constant, a loop variable or integer arithmetic on
  one, negative too), ``len(xs)``, ``sum(xs)`` and loops over it
  (``for v in xs``, ``enumerate``, ``zip``, ``reversed``) read it as the
  code runs, exactly as they read a list parameter of any length.

All versions are one Python object in the generated code. The reverse sweep
gives the whole family one adjoint list of the final length; the reverse of
an append pops its item's adjoint (:mod:`s2s_ad.reverse.lists`), so the
adjoint list always has the length the list had at that point, and a
negative index means the same item backwards as forwards.

Before → after::

    xs = [x]                              xs = list.new x
    for i in range(n):                    xs_1 = for i in range(0, n, 1) carry (xs_2=xs)
        xs.append(xs[-1] * w)               t1 = getitem xs_2 -1
                                            t2 = mul t1 w
                                            xs_3 = list.append xs_2 t2

``xs[i] = v`` on such a list is a ``list.set`` op, a new version too
(:mod:`s2s_ad.frontend.list_writes`, which also makes ``[c] * n`` a list of
this kind).

A list created inside a loop or branch and grown in a nested one is a list
per run of that body (its adjoint is made where that run's reverse starts:
:func:`s2s_ad.reverse.lists.region_adjoints`).

A module-level list of numbers read at an index known only as the code runs
(``COEFFS[i]`` in a ``while``) is such a list too, of its constants, made
once before the outermost loop reading it (:func:`module_list`).

A slice of it (``xs[1:]``) is a list of its own, the loop the slice stands
for (:mod:`s2s_ad.frontend.list_slices`).

Refused, located: a list grown at run time that is unpacked (its length is
not known while lowering), returned from the function differentiated (a ``vjp`` pair may return it) or from inside a
helper's loop or branch, or appended to inside a loop over itself.
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import pair_layout, structures
from s2s_ad.syntax_walk import walk


def is_grown(lo, value) -> bool:
    """Is ``value`` a version of a list grown at run time?"""
    return isinstance(value, ir.Value) and id(value) in lo.grown


def register(lo, value: ir.Value, root: ir.Value) -> ir.Value:
    """``value`` is a version of the run-time list ``root``."""
    lo.grown.add(id(value))
    lo.list_roots[id(value)] = lo.list_roots.get(id(root), id(root))
    # Read like a list parameter of any length (control.sequence_param).
    lo.seq_params[id(value)] = ir.Param(value)
    return value


def appended_names(stmts: list) -> list[str]:
    """Names ``stmts`` call ``.append``/``.extend`` on (nested blocks included)."""
    return changed_lists(stmts)[0]


def changed_lists(stmts: list) -> tuple[list[str], list[str]]:
    """The names ``stmts`` call ``.append``/``.extend`` on, and those they
    write into by subscript (``ys[k] = v``, ``ys[k] += v``), nested blocks
    included, each in the order met: one walk for both (it is made for every
    branch, over all the branches nested in it)."""
    appended, written = [], []
    for stmt in stmts:
        for n in walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and isinstance(n.func.value, ast.Name) and n.func.attr in ("append", "extend"):
                appended.append(n.func.value.id)
            targets = n.targets if isinstance(n, ast.Assign) else \
                [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                for s in walk(t):
                    if isinstance(s, ast.Subscript) and isinstance(s.value, ast.Name) \
                            and isinstance(s.ctx, ast.Store):
                        written.append(s.value.id)
    return list(dict.fromkeys(appended)), list(dict.fromkeys(written))


def promote_for(lo, stmts: list, node: ast.AST) -> list[str]:
    """Before lowering a loop or branch whose body is ``stmts``: turn each
    list it appends to, or (in code of numbers) writes into by index
    (``ys[k] = v``: :mod:`s2s_ad.frontend.list_writes`), into a run-time
    list. Returns the names (in the environment) bound to a run-time list
    that ``stmts`` change."""
    names, written = changed_lists(stmts)
    for name in names:
        value = lo.env.get(name)
        if isinstance(value, structures.StaticList):
            # appended to: a change
            structures.refuse_argument_change(lo, value, node,
                                              f"this loop or branch appending to `{name}`")
            promote(lo, value, node, name, "appended to here")
    # a list a loop also rebinds (`xs = [xs[1] * x, xs[0]]`) is carried item by
    # item (loop_structures), its writes into the list of each iteration
    rebound = {n.id for s in stmts for n in walk(s) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} if isinstance(node, (ast.For, ast.While)) \
        else set()
    if not getattr(lo, "array_mode", False):
        for name in written:
            value = lo.env.get(name)
            if name not in names and name not in rebound \
                    and isinstance(value, structures.StaticList) \
                    and lo.sequence_param(value) is None and not any(
                    structures.is_structure(x) or not isinstance(x, (ir.Value, ir.Const))
                    or isinstance(x, ir.Value) and x.kind not in ("float", "int")
                    for x in value.items):
                structures.refuse_argument_change(lo, value, node,
                                                  f"this loop or branch writing into `{name}`")
                promote(lo, value, node, name, "written into here")
            names.append(name)
    return [n for n in dict.fromkeys(names) if is_grown(lo, lo.env.get(n))]


def promote_read(lo, loop: ast.For | ast.While) -> None:
    """Before lowering a loop: a list built in the function (its items
    numbers or arrays, outside every loop and branch) that the body reads at
    an index the loop changes (``xs[i]``, ``i`` the loop variable or assigned
    in the body) becomes a run-time list, read as the code runs."""
    if lo.region_depth > 0:
        return
    changing = {n.id for s in loop.body for n in walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if isinstance(loop, ast.For):
        changing |= {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    for n in (n for s in loop.body for n in walk(s)):
        if not (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
                and isinstance(n.value, ast.Name) and not isinstance(n.slice, ast.Slice)):
            continue
        if structures.module_numbers(lo, n.value.id) and any(
                isinstance(m, ast.Name) and m.id in changing for m in walk(n.slice)):
            module_list(lo, n.value.id, loop)  # made once, before the loop
            continue
        value = lo.env.get(n.value.id)
        if n.value.id in changing:
            continue  # rebound in the loop: carried item by item (loop_structures)
        if promotable(lo, value) and any(
                isinstance(m, ast.Name) and m.id in changing for m in walk(n.slice)):
            promote(lo, value, loop, n.value.id, "read here at an index the loop changes")


def promotable(lo, value) -> bool:
    """A list built in the function, of numbers or arrays, that is no
    parameter and no item of another structure: read at run time as it is."""
    if not isinstance(value, structures.StaticList) or lo.sequence_param(value) is not None:
        return False
    if any(structures.is_structure(x) or not isinstance(x, (ir.Value, ir.Const))
           or (isinstance(x, ir.Value) and x.kind in ("tuple", "list")) for x in value.items):
        return False
    return not any(v is not value and holds(v, value) for v in lo.env.values())


def helper_index(lo, node: ast.expr) -> bool:
    """Is ``node`` a parameter lowered as a number (a helper's ``h(x, i)``
    given a loop's ``i``, the function's own ``f(xs, i)``), or integer
    arithmetic on one (``i + 1``)? It indexes a list as it is: Python's list
    raises TypeError for a float there, as in the function itself (and
    ``mark_int`` refuses a gradient with respect to it)."""
    return _index_arithmetic(lo, node) is True


_INDEX_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _index_arithmetic(lo, node: ast.expr):
    """True where ``node`` is a helper's number parameter or integer
    arithmetic on one (``i + 1``, ``-1 - i``, ``2 * i``), False where it is
    integer arithmetic without one, None for anything else."""
    if isinstance(node, ast.Name):
        return _index_value(lo, lo.env.get(node.id), 0)
    if isinstance(node, ast.Constant):
        return False if type(node.value) is int else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in lo.env and lo.resolve(node.func) is builtins.len:
        return False  # (i + j) % len(xs)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _index_arithmetic(lo, node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _INDEX_OPS):
        sides = (_index_arithmetic(lo, node.left), _index_arithmetic(lo, node.right))
        return None if None in sides else any(sides)
    return None


_INDEX_PRIMS = frozenset({"add", "sub", "mul", "floordiv", "mod", "neg", "pos"})


def _index_value(lo, v, depth: int):
    """:func:`_index_arithmetic` of a value: a name bound to ``i - 1`` (as in
    the forward-mode module read back for a second derivative) is followed
    through the ops that computed it."""
    if isinstance(v, ir.Const):
        return False if type(v.value) is int else None
    if not isinstance(v, ir.Value) or depth > 8:
        return None
    # (a parameter of NumPy code is lowered as an array: a number or an array)
    if v.kind in ("float", "array") and id(v) in lo.param_ids:
        return True
    if v.kind == "int":
        return False
    op = lo.defs.get(id(v))
    if op is None or op.prim not in _INDEX_PRIMS or v.kind not in ("float", "array"):
        return None
    sides = [_index_value(lo, a, depth + 1) for a in op.args]
    return None if None in sides else any(sides)


def promote_indexed(lo, name: str, node: ast.AST) -> bool:
    """``c[i]`` outside every loop and branch, ``c`` a list built in the
    function and ``i`` known only as the code runs (a helper's index
    parameter): ``c`` becomes a run-time list there. Returns whether it did."""
    value = lo.env.get(name)
    if lo.region_depth > 0 or not promotable(lo, value):
        return False
    promote(lo, value, node, name)
    return True


def module_list(lo, name: str, node: ast.AST) -> ir.Value:
    """The module-level list of numbers ``name`` (``COEFFS = [1.0, -2.0]``) as
    a run-time list of its constants, for reads at an index known only as the
    code runs. Made outside every loop and branch once per function (kept in
    ``lo.module_lists``); inside one, where it is read."""
    made = getattr(lo, "module_lists", {}).get(name)
    if made is not None:
        return made
    items = tuple(lo.read(name, node))
    out = ir.Value(lo.namer.fresh(name), "list", name)
    op = ir.Op("list.new", items, out, lo.loc(node),
               f"{out.name} = [{', '.join(repr(x) for x in items)}]")
    lo.ops.append(op)
    lo.defs[id(out)] = op
    register(lo, out, out)
    if lo.region_depth == 0:
        if not hasattr(lo, "module_lists"):
            lo.module_lists = {}
        lo.module_lists[name] = out
    return out


def module_item(lo, node: ast.expr, var: str | None, hint: str | None):
    """``COEFFS[i]`` of a module-level list of numbers at an index known only
    as the code runs (a loop variable, a helper's int parameter): read from
    the run-time list :func:`module_list` makes. None for any other
    expression (a constant index is resolved while lowering)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and isinstance(node.ctx, ast.Load) and not isinstance(node.slice, ast.Slice)
            and structures.module_numbers(lo, node.value.id)
            and structures._static_int(lo, node.slice) is None):
        return None
    name = node.value.id
    lo.env[name] = module_list(lo, name, node)
    try:
        return lo.dynamic_subscript(node, var, hint)
    finally:
        del lo.env[name]


def promote(lo, static: structures.StaticList, node: ast.AST, name: str,
            how: str = "read here at an index known only as the code runs") -> ir.Value:
    """``static`` as a ``list.new`` op; every name bound to it is rebound.
    ``how``: what the code at ``node`` does with it (for a refusal)."""
    inside = [n for n, v in lo.env.items() if v is not static and holds(v, static)]
    if inside:
        after = "the loop" if isinstance(node, (ast.For, ast.While)) else "this line"
        raise lo.src.error(node, f"the list `{name}` is {how} and is also an item of "
                           f"`{inside[0]}`; s2s-ad follows such a list (made a list of any "
                           f"length) under its own name only: build `{inside[0]}` after {after}")
    items = list(static.items)
    for x in items:
        if structures.is_structure(x) or (isinstance(x, ir.Value)
                                          and x.kind in ("tuple", "list")):
            raise lo.src.error(node, f"the list `{name}` holds a tuple or list; a list grown "
                               "at run time holds numbers or arrays")
    text = f"{name} = [{', '.join(repr(x) for x in items)}]"
    return _version(lo, name, "list.new", tuple(items), node, text, static, None)


NOT_AN_INDEX = ("a list index must be an integer (a loop variable or integer arithmetic on one, "
                "or an int read from a list of ints where it is used; one a loop carries from "
                "iteration to iteration is not known to be an int: read it from its list again "
                "where it is used)")
"""The refusal of a list index that is not known to be an int."""

_NESTED_HINT = ("; a table of a run-time size (a list of lists, a comprehension of "
                "comprehensions) is not supported: make one flat list, by one comprehension "
                "of two for clauses (flat = [e for i in range(n) for j in range(m)]) or by "
                "append in two loops, and read it at flat[i * m + j] (the row and the column "
                "may be ints read from lists of ints), or make it a NumPy array "
                "(np.reshape(np.array(flat), (n, m)), read at [i, j])")
"""How to write a list of lists of a run-time length instead (no backticks:
the names it spells are not the code's, which messages quote as written)."""


def append(lo, seq: ir.Value, call: ast.Call, method: str) -> None:
    """``xs.append(v)`` (or ``xs.extend(ys)`` of a list built in the
    function) on a run-time list: one ``list.append`` op per item."""
    arg = call.args[0]
    if method == "append":
        items = [lo.expr(arg)]
    else:
        items = structures.iteration(lo, arg)
    for v in items:
        if structures.is_structure(v) or (isinstance(v, ir.Value)
                                          and v.kind in ("tuple", "list")):
            raise lo.src.error(arg, "a list grown at run time holds numbers or arrays, "
                               f"not {structures.describe(v)}" + _NESTED_HINT)
        seq = _version(lo, call.func.value.id, "list.append", (seq, v), call,
                       ast.unparse(call), seq, seq)


def _version(lo, name: str, prim: str, args: tuple, node: ast.AST, text: str, old,
             source: ir.Value | None) -> ir.Value:
    """A new version of the list ``name`` made by ``prim`` (``list.new``, of the
    list ``source`` itself when None; ``list.append``): every name bound to
    ``old`` is rebound to it."""
    out = ir.Value(lo.namer.claim(name), "list", name)
    op = ir.Op(prim, args, out, lo.loc(node), text)
    lo.ops.append(op)
    lo.defs[id(out)] = op
    register(lo, out, out if source is None else source)
    for var, v in list(lo.env.items()):
        if v is old:
            lo.env[var] = out
    return out


def returned(lo, value: ir.Value, node: ast.AST) -> None:
    """``return xs`` of a list grown at run time: a helper may return it, once,
    at the end of its body; the caller reads it as a list of any length
    (:func:`call_result`). Refused, located, elsewhere."""
    if not lo.helper and not getattr(lo, "list_result", False):
        raise lo.src.error(node, "returning a list of any length is not supported from the "
                           "function differentiated (its gradient is of a number): return a "
                           "number computed from it (`sum(xs)`, `xs[-1]`); a helper may "
                           "return it")
    if not (is_grown(lo, value) or id(value) in lo.returned_lists) \
            or id(value) in lo.argument_objects:
        name = lo.src.tree.name
        if pair_layout.written_pair(lo.src.globals, name) is not None:
            # s2s-ad's own forward function keeping a list it was given on its tape
            # (read as the argument where each call can bind it: frontend/tape_params)
            raise lo.src.error(node, f"`{name}` of this gradient module keeps a list its "
                               "caller passed on its tape, and a caller calls it in a loop "
                               "(or passes the list otherwise than by position), where its "
                               "tape would hold that list under a second name: a derivative "
                               "of this module is not supported there; take the derivative "
                               "from the original function (`s2s_ad.hessian`, "
                               "`s2s_ad.jvp(s2s_ad.grad(f))`)")
        raise lo.src.error(node, "returning a list of any length the caller passed is not "
                           "supported: return a number computed from it, or build a new list "
                           "(`ys = []`, then `ys.append(...)` in a loop)")
    if lo.ret_mode or lo.region_depth > 0:
        raise lo.src.error(node, "a helper returns a list of any length once, at the end of "
                           "its body (not from inside a branch or loop)")


def call_result(lo, out: ir.Value, node: ast.AST) -> None:
    """``ys = rollout(x, n)``, ``rollout`` returning a list grown at run time:
    ``ys`` is read like a list parameter of any length (by index, ``len``,
    ``sum``, loops, passed on to helpers) and not changed; its adjoint is a
    list of the same length (:mod:`s2s_ad.reverse.lists`: the call is the
    root of the list's family in the caller). A call inside a loop or branch
    makes a list per run of its body, whose adjoint is made where that run's
    reverse starts."""
    out.kind = "list"
    lo.seq_params[id(out)] = ir.Param(out)
    lo.returned_lists.add(id(out))


def carried(lo, value: ir.Value, source: ir.Value) -> None:
    """A loop's or branch's version of a run-time list (a carried value, a
    loop result, a φ), the same list as ``source``: register it."""
    register(lo, value, source)


def same_list(lo, a, b) -> bool:
    """Are ``a`` and ``b`` versions of one run-time list (one ``list.new``)?"""
    return lo.list_roots.get(id(a)) == lo.list_roots.get(id(b)) is not None


def check_aliases(lo, carried: list[str], node: ast.AST) -> None:
    """Refuse a loop over which two names hold one run-time list: the loop
    carries values by name, so the name that is not changed would keep the
    list as it was before the loop. The message says how the loop changes it:
    appends to it, writes into it, or rebinds the name."""
    for var in carried:
        value = lo.env.get(var)
        if not is_grown(lo, value):
            continue
        others = [n for n, v in lo.env.items() if n != var and holds(v, value)]
        if others:
            appended, written = changed_lists(getattr(node, "body", []))
            how = "appends to" if var in appended else "writes into" if var in written \
                else "changes"
            raise aliased(lo, node, var, others[0], f"this loop {how}")


def aliased(lo, node: ast.AST, name: str, other: str, how: str) -> SourceError:
    """The refusal of a list changed through ``name`` (``how``: "this loop
    appends to") while ``other`` holds it too."""
    return lo.src.error(node, f"`{name}` and `{other}` hold the same list, which {how} through "
                        f"`{name}`; s2s-ad follows a list changed at run time under one name: "
                        "drop the assignment that makes them the same list and use one of the "
                        "two names throughout")


def holds(v, value) -> bool:
    """Is ``value`` bound to ``v``, or an item of the structure ``v``?"""
    if v is value:
        return True
    if isinstance(v, tuple):
        return any(holds(x, value) for x in v)
    items = getattr(v, "items", None)
    if isinstance(v, (structures.StaticList, structures.StaticDict, structures.StaticObject)):
        return any(holds(x, value) for x in (items.values() if isinstance(items, dict)
                                              else items))
    return False


def mutation(lo, stmt: ast.Expr) -> bool:
    """``xs.append(v)`` / ``xs.extend(ys)`` on a run-time list: lower it and
    return True; False when ``stmt`` is not one."""
    call = stmt.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and isinstance(call.func.value, ast.Name) \
            and id(lo.env.get(call.func.value.id)) in lo.returned_lists:
        name = call.func.value.id
        raise lo.src.error(call, f"`{name}` is a list of any length a helper returned; s2s-ad "
                           "reads it as it is (by index, len, sum, loops, passed on) and does "
                           f"not change it: grow it in the helper, or copy it first (`ys = []`, "
                           f"then `for v in {name}: ys.append(v)`)")
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and is_grown(lo, lo.env.get(call.func.value.id))):
        return False
    method = call.func.attr
    if method not in ("append", "extend"):
        raise lo.src.error(call, f"`{ast.unparse(call.func)}` is not supported; a list grown "
                           "at run time supports append and extend")
    if call.keywords or len(call.args) != 1:
        raise lo.src.error(call, f"`{method}` takes one argument")
    append(lo, lo.env[call.func.value.id], call, method)
    return True


def check_iterated(lo, seq, stmts: list, node: ast.AST) -> None:
    """Refuse appending to the list a ``for`` loop iterates over."""
    if seq is None or not is_grown(lo, seq):
        return
    for name in appended_names(stmts):
        if lo.env.get(name) is seq:
            raise lo.src.error(node, f"the loop iterates over `{name}` and appends to it; "
                               "iterate over `range(len(...))` of its length before the loop")
