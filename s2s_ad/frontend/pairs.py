"""The forward/backward pairs of s2s-ad's own gradient modules, with their
tapes as separate values.

Contract: ``split(tree, globals_, namer)`` rewrites in place a function of a
module s2s-ad generated so that the tape a helper's forward function returns
to its backward function is no tuple: a pair is ``H_fwd`` and ``H_bwd`` in
the same module, ``H_bwd(tape, ...)`` opening with ``a, b, c = tape``.

* In ``H_fwd``: ``return value, (a, b, c)`` becomes ``return value, a, b, c``;
  a tape item set to ``None`` before the branch that may assign it
  (``t = None`` ... ``return value, (t, ...)``), and never compared, starts at
  a number instead (``False`` where it is assigned a comparison, else
  ``0.0``): ``H_bwd`` reads it only under the recorded decision of that
  branch, and the forward function only where the branch assigned it
  (arithmetic on None would fail).
* In ``H_bwd``: the parameter ``tape`` becomes the parameters ``a, b, c``;
  a recorded decision among them, tested as ``if c:``, is tested as
  ``if c != 0.0:`` (a parameter is lowered as a number; the truth is the
  same for a bool and a number).
* In any function: ``y, T = H_fwd(...)`` binds ``T_a, T_b, T_c``; a tape of
  those tapes (``Ts = [None] * n``, ``Ts[i] = T``, ``Ts.append(T)``,
  ``T = Ts[i]``, ``T = Ts.pop()``) becomes one tape per item; and
  ``H_bwd(T, ...)`` passes the items.
* A helper calling a helper: an item of ``H_bwd``'s tape that is another
  pair's tape (passed to ``G_bwd`` and used for nothing else) is itself split
  into that tape's items, in ``H_bwd``'s parameters and in the tape ``H_fwd``
  returns (``return value, a, T`` → ``return value, a, T_0, T_1``). A list
  of another pair's tapes is one list per item of those tapes; where such a
  list holds lists, ``H_bwd`` takes it as three parameters
  (:func:`~s2s_ad.frontend.pair_layout.nested_tapes`), which
  :mod:`s2s_ad.frontend.tape_offsets` then makes both functions pass.

A function whose tapes are used otherwise is left as it is (and refused,
located, where the lowering meets the tuple). Every rewrite passes the same
values to the same places. Which functions are a pair, and the items each
tape is split into, is :mod:`s2s_ad.frontend.pair_layout`'s.
"""

from __future__ import annotations

import ast
import types

from s2s_ad.frontend import own_helpers
from s2s_ad.frontend.pair_layout import (cotangent_items, expanded, nested_tapes, pairs_of,
                                         read_of, split_layout, unpacking)
from s2s_ad.frontend.int_names import int_names, int_tapes, new_list
from s2s_ad.names import Namer
from s2s_ad.syntax_walk import walk


def int_tapes_given(tree: ast.FunctionDef, globals_: dict) -> set:
    """The parameters of ``H_bwd`` (``tree``, its tape split) that are tapes
    of ints: the items at whose place every ``return`` of ``H_fwd`` puts a
    list it fills with ints only (a ``while`` loop's index, ``i_tape.append(i)``),
    read back as ints (an index) as the same tape in one function is."""
    return _ints_given(tree, globals_, int_tapes)


def int_items_given(tree: ast.FunctionDef, globals_: dict) -> set:
    """The parameters of ``H_bwd`` (``tree``, its tape split) at whose place
    every ``return`` of ``H_fwd`` puts a name holding an int (the position a
    run-time ``max`` chose, ``best = max(range(len(xs)), key=...)``), read
    back as ints (an index) as the name is in ``H_fwd``."""
    return _ints_given(tree, globals_, int_names)


def _ints_given(tree: ast.FunctionDef, globals_: dict, find) -> set:
    """The parameters of ``H_bwd`` (``tree``) whose tape items ``H_fwd``
    fills with names ``find(H_fwd's tree, globals_)`` gives."""
    for fwd, (bwd, items) in pairs_of(globals_).items():
        if bwd != tree.name:
            continue
        made = own_helpers.function_tree(globals_[fwd])
        returns = [r for r in walk(made) if isinstance(r, ast.Return)] if made else []
        if not returns or not all(
                isinstance(r.value, ast.Tuple) and len(r.value.elts) == 2
                and isinstance(r.value.elts[1], ast.Tuple)
                and len(r.value.elts[1].elts) == len(items) for r in returns):
            return set()
        ints = find(made, globals_)
        params = {a.arg for a in tree.args.args}
        return {name for k, name in enumerate(items) if name in params and all(
            isinstance(r.value.elts[1].elts[k], ast.Name) and r.value.elts[1].elts[k].id in ints
            for r in returns)}
    return set()


def split(tree: ast.FunctionDef, globals_: dict, namer: Namer) -> ast.AST | None:
    """Split the tapes of ``tree`` (see the module). Returns a ``return`` of
    ``H_fwd`` whose tape could not be split into the items ``H_bwd`` takes
    (its callers bind those items: it is refused, located), else None."""
    pairs = pairs_of(globals_)
    if not pairs:
        return None
    if tree.name in pairs:
        _own_returns(tree)
    bwds = {bwd: items for bwd, items in pairs.values()}
    seed = {}
    if tree.name in bwds:
        seed = _own_parameters(tree, globals_)
        if seed is None:
            return None
    _cotangent_calls(tree, globals_, bwds)
    _call_sites(tree, pairs, namer, seed)
    if tree.name in pairs:
        # (a list of lists among them is returned as its three lists by tape_offsets)
        raw, nested, _ = split_layout(globals_.get(pairs[tree.name][0]))
        want = 1 + len(expanded(raw, nested, {}))
        for r in (n for n in walk(tree) if isinstance(n, ast.Return)):
            if not (isinstance(r.value, ast.Tuple) and len(r.value.elts) == want):
                return r
    return None


def _own_returns(tree: ast.FunctionDef) -> None:
    """``return value, (a, b, c)`` as ``return value, a, b, c`` (the items'
    count is checked where a call binds them: an item that is another pair's
    tape is split at its own call site, :func:`_call_sites`)."""
    returns = [n for n in walk(tree) if isinstance(n, ast.Return)]
    if not returns or not all(
            isinstance(r.value, ast.Tuple) and len(r.value.elts) == 2
            and isinstance(r.value.elts[1], ast.Tuple) for r in returns):
        return
    taped = {e.id for r in returns for e in r.value.elts[1].elts if isinstance(e, ast.Name)}
    tested = _bool_items(tree, taped)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Constant) \
                and stmt.value.value is None and stmt.targets[0].id in taped:
            name = stmt.targets[0].id
            # Read elsewhere, it is read where its branch assigned it (arithmetic
            # on None would fail): only a comparison of the name itself (`t is
            # None`) could see the None; np.shape(t) compared is read where t is set.
            compared = [m for c in walk(tree) if isinstance(c, ast.Compare)
                        for m in [c.left] + c.comparators
                        if isinstance(m, ast.Name) and m.id == name]
            if not compared:
                stmt.value = ast.copy_location(placeholder(_placeholder(tree, name,
                                                                        name in tested)),
                                               stmt.value)
    for r in returns:
        r.value.elts = [r.value.elts[0]] + list(r.value.elts[1].elts)


def placeholder(e: ast.expr) -> ast.expr:
    """``e``, marked as the value a tape item starts at before the branch
    that assigns it: the lowering lets such a value stand for one of any
    shape (a tuple of zeros where the branch assigns a tuple,
    :mod:`s2s_ad.frontend.control`), and a list item starts as the list its
    branch fills (:func:`s2s_ad.frontend.generated._placeholder_lists`)."""
    e.s2s_placeholder = True
    return e


def is_placeholder(e) -> bool:
    return getattr(e, "s2s_placeholder", False)


def _placeholder(tree: ast.FunctionDef, name: str, tested: bool) -> ast.expr:
    """The number a tape item set to None before its branch starts at:
    ``False`` for a decision, a tuple of zeros for an item every assignment
    makes a tuple of one length (``t = -1, np.shape(x)[-1]``), else ``0.0``."""
    if tested:
        return ast.Constant(False)
    made = [n.value for n in walk(tree) if isinstance(n, ast.Assign)
            and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name and not (isinstance(n.value, ast.Constant)
                                                 and n.value.value is None)]
    if made and all(isinstance(v, ast.Tuple) for v in made) \
            and len({len(v.elts) for v in made}) == 1:
        return ast.Tuple([ast.Constant(0) for _ in made[0].elts], ast.Load())
    return ast.Constant(0.0)


def _bool_items(tree: ast.FunctionDef, items: set) -> set:
    """Tape items the forward function assigns a comparison, ``and``/``or`` or ``not``."""
    out = set()
    for n in walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and n.targets[0].id in items and isinstance(n.value, (ast.Compare, ast.BoolOp)) \
                or (isinstance(n, ast.Assign) and isinstance(n.value, ast.UnaryOp)
                    and isinstance(n.value.op, ast.Not)
                    and isinstance(n.targets[0], ast.Name) and n.targets[0].id in items):
            out.add(n.targets[0].id)
    return out


def _own_parameters(tree: ast.FunctionDef, globals_: dict) -> dict | None:
    """``H_bwd(tape, ...)`` as ``H_bwd(a, b, c, ...)``; returns the items that
    are other pairs' tapes, with their names once split (for the call sites
    of those pairs' backward functions), or None (left as it is)."""
    tape = tree.args.args[0].arg if tree.args.args else None
    if tape is not None and not any(isinstance(n, ast.Name) and n.id == tape
                                    for n in walk(tree)):
        del tree.args.args[0]  # an empty tape
        _own_cotangents(tree, globals_)
        return {}
    k = unpacking(tree)
    first = tree.body[k] if k is not None else None
    if not (isinstance(first, ast.Assign) and isinstance(first.targets[0], ast.Tuple)
            and isinstance(first.value, ast.Name) and tree.args.args
            and first.value.id == tree.args.args[0].arg):
        return None
    names = [e.id for e in first.targets[0].elts]
    own = globals_.get(tree.name)
    found = nested_tapes(tree, tuple(names), globals_,
                         frozenset({own.__code__}) if isinstance(own, types.FunctionType)
                         else frozenset())
    if found is None:
        return None
    nested, flat = found
    tape = tree.args.args[0]
    tree.args.args[0:1] = [ast.copy_location(ast.arg(m), tape)
                           for m in expanded(names, nested, flat)]
    del tree.body[k]
    k = max(0, k - _own_cotangents(tree, globals_))  # (before or after the tape's)
    _own_copies(tree, names, k, globals_)
    # A recorded decision arrives as a parameter, which is lowered as a
    # number: `if c:` is `if c != 0.0:` (the same truth for a bool or a number).
    for n in walk(tree):
        for field in ("test", "operand"):
            e = getattr(n, field, None)
            if isinstance(e, ast.Name) and e.id in names and (
                    isinstance(n, (ast.If, ast.IfExp, ast.While))
                    or (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not))):
                setattr(n, field, _truth(e))
        if isinstance(n, ast.BoolOp):
            n.values = [_truth(v) if isinstance(v, ast.Name) and v.id in names else v
                        for v in n.values]
    return nested


def _own_cotangents(tree: ast.FunctionDef, globals_: dict) -> int:
    """``H_bwd(..., cotangents)`` opening with ``d0, d1 = cotangents`` as
    ``H_bwd(..., d0, d1)`` (:func:`pair_layout.cotangent_items`; its callers
    pass the items, :func:`_cotangent_calls`). Returns the number of
    statements taken from the top of the body (0 or 1)."""
    own = globals_.get(tree.name)
    found = cotangent_items(own.__code__) if isinstance(own, types.FunctionType) else None
    first = tree.body[0] if tree.body else None
    if found is None or not (isinstance(first, ast.Assign) and isinstance(first.value, ast.Name)
                             and first.value.id == found[0]):
        return 0
    p, names = found
    at = next(k for k, a in enumerate(tree.args.args) if a.arg == p)
    tree.args.args[at:at + 1] = [ast.copy_location(ast.arg(n), tree.args.args[at])
                                 for n in names]
    del tree.body[0]
    return 1


def _cotangent_calls(tree: ast.FunctionDef, globals_: dict, bwds: dict) -> None:
    """``H_bwd(T, (a, b))`` as ``H_bwd(T, a, b)`` (``c`` a name: ``c[0], c[1]``)
    where ``H_bwd`` takes its cotangents' items as parameters (:func:`_own_cotangents`)."""
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in bwds):
            continue
        fn = globals_.get(node.func.id)
        found = cotangent_items(fn.__code__) if isinstance(fn, types.FunctionType) else None
        if found is None:
            continue
        p, names = found
        params = [a.arg for a in own_helpers.function_tree(fn).args.args]
        j = params.index(p)
        if len(node.args) <= j or any(isinstance(a, ast.Starred) for a in node.args[:j + 1]):
            continue
        given = node.args[j]
        if isinstance(given, ast.Tuple) and len(given.elts) == len(names) \
                and not any(isinstance(e, ast.Starred) for e in given.elts):
            node.args[j:j + 1] = given.elts
        elif isinstance(given, ast.Name):
            node.args[j:j + 1] = [ast.fix_missing_locations(ast.copy_location(ast.Subscript(
                ast.Name(given.id, ast.Load()), ast.Constant(k), ast.Load()), given))
                for k in range(len(names))]


def _own_copies(tree: ast.FunctionDef, names: list, k: int, globals_: dict) -> None:
    """A tape item the backward function writes into by index (``y[0] =
    y_old.pop()``: the forward's writes undone, so the reverse sweep reads
    ``y`` as it was), and uses as no list (no ``pop``/``append``/``extend``),
    starts as a copy of its own, ``y = np.copy(y)``, where
    the tape's unpacking was. The function computes the same values; only
    the tape's array is no longer changed, and nothing reads a tape after
    its backward function. A parameter written into would be the caller's
    array changed, which the lowering refuses."""
    alias = own_helpers.numpy_alias(globals_)
    if alias is None:
        return
    written = own_helpers.indexed_names(tree) - {
        n.value.id for n in walk(tree) if isinstance(n, ast.Attribute)
        and n.attr in ("pop", "append", "extend") and isinstance(n.value, ast.Name)}
    at = tree.body[k] if k < len(tree.body) else tree
    copies = []
    for name in names:
        if name in written:
            call = ast.Call(ast.Attribute(ast.Name(alias, ast.Load()), "copy", ast.Load()),
                            [ast.Name(name, ast.Load())], [])
            copies.append(ast.fix_missing_locations(ast.copy_location(
                ast.Assign([ast.Name(name, ast.Store())], call), at)))
    tree.body[k:k] = copies


def _truth(e: ast.Name) -> ast.expr:
    return ast.fix_missing_locations(ast.copy_location(
        ast.Compare(e, [ast.NotEq()], [ast.Constant(0.0)]), e))


def _call_sites(tree: ast.FunctionDef, pairs: dict, namer: Namer, seed: dict) -> None:
    """Tapes of calls to ``H_fwd`` (and tapes of them) split into their items;
    ``seed``: tapes already split (parameters of a backward function)."""
    items: dict[str, tuple] = dict(seed)  # a tape's name -> the names of its items' variables
    namer.taken |= {m for parts in seed.values() for m in parts}

    def tape_of(name, n):
        if name not in items:
            items[name] = tuple(namer.fresh(f"{name}_{k}") for k in range(n))
        return items[name]

    # which names hold tapes, and of how many items (to a fixed point)
    changed = True
    while changed:
        changed = False
        for n in walk(tree):
            if not isinstance(n, (ast.Assign, ast.Expr)):
                continue
            found = _tape_flow(n, pairs, items)
            if found is not None and found[0] not in items:
                tape_of(*found)
                changed = True
    if not items:
        return
    # every use of a tape name must be one of the forms rewritten below
    allowed = {id(e) for n in walk(tree) if isinstance(n, ast.Return)
               and isinstance(n.value, ast.Tuple) for e in n.value.elts}
    for n in walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in {b for b, _ in pairs.values()} and n.args \
                and isinstance(n.args[0], ast.Name) and n.args[0].id in items:
            allowed.add(id(n.args[0]))
        if isinstance(n, (ast.Assign, ast.Expr)):
            allowed |= _tape_names_in(n, items)
    if any(isinstance(n, ast.Name) and n.id in items and id(n) not in allowed
           for n in walk(tree)):
        return
    for node in walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                block[:] = [s for stmt in block for s in _rewrite(stmt, items, pairs)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in {b for b, _ in pairs.values()} and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in items:
            node.args[0:1] = [ast.copy_location(ast.Name(m, ast.Load()), node.args[0])
                              for m in items[node.args[0].id]]


def _tape_flow(n, pairs, items):
    """``(name, n items)`` of a tape this statement binds, else None."""
    if isinstance(n, ast.Assign) and len(n.targets) == 1:
        t, v = n.targets[0], n.value
        if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[1], ast.Name) \
                and isinstance(v, ast.Call) and isinstance(v.func, ast.Name) \
                and v.func.id in pairs:
            return t.elts[1].id, len(pairs[v.func.id][1])
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                and isinstance(v, ast.Name) and v.id in items:
            return t.value.id, len(items[v.id])  # Ts[i] = T
        if isinstance(t, ast.Name):
            src = read_of(v)
            if src is not None and src in items:
                return t.id, len(items[src])  # T = Ts[i] / Ts.pop()
    if isinstance(n, ast.Expr) and _append_of(n) is not None:
        lst, val = _append_of(n)
        if isinstance(val, ast.Name) and val.id in items:
            return lst, len(items[val.id])
    return None


def _append_of(n: ast.Expr):
    c = n.value
    if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) \
            and c.func.attr == "append" and isinstance(c.func.value, ast.Name) \
            and len(c.args) == 1:
        return c.func.value.id, c.args[0]
    return None


def _tape_names_in(n, items) -> set:
    """ids of the tape names in statement ``n`` that :func:`_rewrite` handles."""
    out = set()
    if isinstance(n, ast.Assign) and len(n.targets) == 1:
        t, v = n.targets[0], n.value
        if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[1], ast.Name):
            out.add(id(t.elts[1]))
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                and isinstance(v, ast.Name):
            out |= {id(t.value), id(v)}
        if isinstance(t, ast.Name) and read_of(v) is not None:
            out.add(id(t))
            out.add(id(v.value) if isinstance(v, ast.Subscript) else id(v.func.value))
        if isinstance(t, ast.Name) and t.id in items and (new_list(v) or _is_placeholder(v)):
            out.add(id(t))
    if isinstance(n, ast.Expr) and _append_of(n) is not None:
        c = n.value
        out.add(id(c.func.value))
        out.add(id(c.args[0]))
    return out


def _is_placeholder(v) -> bool:
    """``None`` (or the number :func:`_own_returns` made of it): a tape that
    one branch of a forward function defines, set before the branch."""
    return isinstance(v, ast.Constant) and (v.value is None or v.value in (0.0, False)
                                           and not isinstance(v.value, str))


def _name(n: str, ctx) -> ast.Name:
    return ast.Name(n, ctx())


def _rewrite(stmt, items: dict, pairs: dict) -> list:
    """``stmt`` with each tape name replaced by its items (one statement per item)."""
    def each(make):
        return [ast.fix_missing_locations(ast.copy_location(make(k), stmt))
                for k in range(len(parts))]

    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        t, v = stmt.targets[0], stmt.value
        if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[1], ast.Name) \
                and t.elts[1].id in items and isinstance(v, ast.Call):
            t.elts = [t.elts[0]] + [_name(m, ast.Store) for m in items[t.elts[1].id]]
            return [stmt]
        if isinstance(t, ast.Name) and t.id in items and new_list(v):
            parts = items[t.id]
            return each(lambda k: ast.Assign([_name(parts[k], ast.Store)],
                                             _copy(v)))
        if isinstance(t, ast.Name) and t.id in items and _is_placeholder(v):
            # each item starts at a number: the backward function reads the
            # items only under the recorded decision of the branch that set them
            parts = items[t.id]
            return each(lambda k: ast.Assign([_name(parts[k], ast.Store)],
                                             placeholder(ast.Constant(0.0))))
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                and t.value.id in items and isinstance(v, ast.Name) and v.id in items:
            parts, src = items[t.value.id], items[v.id]
            return each(lambda k: ast.Assign(
                [ast.Subscript(_name(parts[k], ast.Load), _copy(t.slice), ast.Store())],
                _name(src[k], ast.Load)))
        if isinstance(t, ast.Name) and t.id in items and read_of(v) in items:
            parts, src = items[t.id], items[read_of(v)]
            if isinstance(v, ast.Subscript):
                return each(lambda k: ast.Assign([_name(parts[k], ast.Store)], ast.Subscript(
                    _name(src[k], ast.Load), _copy(v.slice), ast.Load())))
            return each(lambda k: ast.Assign([_name(parts[k], ast.Store)], ast.Call(
                ast.Attribute(_name(src[k], ast.Load), "pop", ast.Load()), [], [])))
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple):
        # a tape returned in the function's own tape (a helper calling a helper)
        elts = []
        for e in stmt.value.elts:
            if isinstance(e, ast.Name) and e.id in items:
                elts += [ast.copy_location(_name(m, ast.Load), e) for m in items[e.id]]
            else:
                elts.append(e)
        stmt.value.elts = elts
        return [stmt]
    if isinstance(stmt, ast.Expr) and _append_of(stmt) is not None:
        lst, val = _append_of(stmt)
        if lst in items and isinstance(val, ast.Name) and val.id in items:
            parts, src = items[lst], items[val.id]
            return each(lambda k: ast.Expr(ast.Call(
                ast.Attribute(_name(parts[k], ast.Load), "append", ast.Load()),
                [_name(src[k], ast.Load)], [])))
    return [stmt]


def _copy(e):
    return ast.parse(ast.unparse(e), mode="eval").body
