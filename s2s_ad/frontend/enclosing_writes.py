"""Frontend: nested functions that change their enclosing function's state,
rewritten as functions of their inputs (applied to TensorFlow-flavoured code,
:mod:`s2s_ad.frontend.tf_forms`, where GradBench's objectives use them).

Contract: :func:`rewrite` changes, in place, the function ``src.tree``; each
rewrite is exact (the same values in the same order) and is made only where
every use of the nested function has one of the forms below; anything else
is left alone (and refused by the lowering, located, as before).

* A nested ``def F`` declaring ``nonlocal v`` (``v`` assigned in the
  enclosing function, no other nested function declaring it), whose only
  uses are the statements ``x = F(...)`` and ``F(...)``, or a comprehension
  ``tuple(F(...) for i in ...)`` (one ``for``, no ``if``; ``list(...)`` or a
  list comprehension alike) in a straight-line statement that reads ``v``
  nowhere else and does not evaluate it conditionally, takes ``v`` as a last
  parameter and returns ``(result, v)``; each call passes ``v`` in and takes
  it back (``r, v = F(..., v)``), and the comprehension becomes the loop,
  placed before its statement, that collects the results into a list, in
  order. Python reads and writes ``v`` at the same points.
* A nested generator function ``G`` (``yield e`` statements, no ``yield
  from``, no ``return``, the yield's value unused) whose only uses are
  ``tuple(G(...))`` or ``list(G(...))`` in straight-line statements is
  inlined before each such statement, its parameters and variables renamed,
  each ``yield e`` appending ``e`` to a list that stands in place of the
  call: those calls consume it whole at once, nothing runs between its items.

The collected list stands where Python has a tuple; they are read alike.

Before → after::

    def col(i):                      def col(i, j):
        nonlocal j                       ...
        ...                    ──▶       j += n
        j += n                           return c, j
        return c                     cols = []
    cols = tuple(col(i) for          for i_1 in range(d):
                 i in range(d))          r, j = col(i_1, j)
                                         cols.append(r)
"""

from __future__ import annotations

import ast
import builtins
import copy

from s2s_ad.names import unused
from s2s_ad.syntax_walk import walk

COLLECTORS = ("tuple", "list")


def rewrite(src) -> None:
    """Rewrite the nested ``nonlocal`` writers and generators of ``src.tree``."""
    tree = src.tree
    taken = {n.id for n in walk(tree) if isinstance(n, ast.Name)} \
        | {a.arg for a in walk(tree) if isinstance(a, ast.arg)} | set(src.globals)
    for fn in [s for s in walk(tree) if isinstance(s, ast.FunctionDef) and s is not tree]:
        owner = _owner(tree, fn)
        if owner is None:
            continue
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn)):
            _generator(owner, fn, src, taken)
            continue
        declared = [name for s in fn.body if isinstance(s, ast.Nonlocal) for name in s.names]
        if declared:
            _nonlocal(owner, fn, declared, taken, src)


def _owner(tree, fn):
    """The function whose body (at any depth of statements) defines ``fn``."""
    for f in [tree] + [n for n in walk(tree) if isinstance(n, ast.FunctionDef)]:
        if any(s is fn for s in _own_statements(f)):
            return f
    return None


def _own_statements(fn):
    """The statements of ``fn``'s body, nested ``def``s not entered."""
    todo = list(fn.body)
    while todo:
        s = todo.pop()
        yield s
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                todo += [c for c in getattr(s, field, []) if isinstance(c, ast.stmt)]


def _own_nodes(fn):
    """The nodes of ``fn``'s body, nested functions and lambdas not entered."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo += list(ast.iter_child_nodes(n))


def _uses(owner, fn) -> list:
    """(statement, node) for every reference to ``fn``'s name in ``owner``."""
    found = []
    for s in _own_statements(owner):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in _shallow(s):
            if isinstance(n, ast.Name) and n.id == fn.name:
                found.append((s, n))
    return found


def _shallow(stmt):
    """The nodes of one statement, its nested statements not entered."""
    todo = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, ast.stmt)]
    while todo:
        n = todo.pop()
        yield n
        todo += list(ast.iter_child_nodes(n))


def _collected(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id in COLLECTORS and len(node.args) == 1 and not node.keywords


def _blocks(fn) -> list:
    """The statement lists of ``fn``'s body (``body``/``orelse`` of its
    compound statements, nested functions not entered)."""
    found, todo = [], [fn.body]
    while todo:
        block = todo.pop()
        found.append(block)
        for s in block:
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo += [getattr(s, f) for f in ("body", "orelse")
                         if isinstance(getattr(s, f, None), list) and getattr(s, f)
                         and isinstance(getattr(s, f)[0], ast.stmt)]
    return found


def _generator(owner, fn, src, taken: set) -> None:
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return
    nodes = list(_own_nodes(fn))
    if any(isinstance(n, (ast.YieldFrom, ast.Try, ast.Nonlocal, ast.Global, ast.Return,
                          ast.Lambda, ast.FunctionDef, ast.ClassDef, ast.NamedExpr,
                          ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp))
           for n in nodes):
        return
    blocks = _blocks(fn)
    bare = {id(s.value) for b in blocks for s in b if isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Yield)}
    if any(isinstance(n, ast.Yield) and id(n) not in bare for n in nodes):
        return  # a yield's value is used, or one stands where the rewrite does not reach
    uses = _uses(owner, fn)
    if len(uses) != _references(owner, fn.name):
        return
    sites = []
    for stmt, name in uses:
        parents = {id(c): p for p in _shallow(stmt) for c in ast.iter_child_nodes(p)}
        parents.update({id(c): stmt for c in ast.iter_child_nodes(stmt)})
        call = parents.get(id(name))
        outer = parents.get(id(call))
        if not (isinstance(call, ast.Call) and call.func is name and _collected(outer)
                and outer.args[0] is call and _builtin(outer.func.id, src)) or call.keywords \
                or len(call.args) != len(args.args) or any(
                    isinstance(a, ast.Starred) for a in call.args):
            return
        up, conditional = outer, False
        while id(up) in parents and up is not stmt:
            up = parents[id(up)]
            conditional |= isinstance(up, (ast.Lambda, ast.IfExp, ast.BoolOp, ast.GeneratorExp,
                                           ast.ListComp, ast.SetComp, ast.DictComp))
        if conditional or isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
            return
        sites.append((stmt, outer, call))
    own = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} \
        | {a.arg for a in args.args}
    for stmt, outer, call in sites:
        _inline_generator(owner, fn, own, stmt, outer, call, taken)
    _block_of(owner, fn)[0].remove(fn)
    ast.fix_missing_locations(owner)


def _inline_generator(owner, fn, own: set, stmt, outer, call, taken) -> None:
    """``tuple(G(a, b))`` in ``stmt``: G's body placed before ``stmt``, its
    parameters and variables renamed, each ``yield e`` appending ``e`` to a
    list that stands in place of the call."""
    def fresh(base):
        return unused(base, taken)

    names = {v: fresh(v) for v in sorted(own)}
    items = fresh("items")
    body = []
    for param, arg in zip(fn.args.args, call.args):
        body.append(ast.Assign([ast.Name(names[param.arg], ast.Store())], arg))
    copied = [_renamed_copy(s, names) for s in fn.body]
    for block in [copied] + [b for s in copied for b in _blocks_of_statement(s)]:
        block[:] = [_append(items, s) if isinstance(s, ast.Expr) and isinstance(
            s.value, ast.Yield) else s for s in block]
    body = [ast.Assign([ast.Name(items, ast.Store())], ast.List([], ast.Load()))] + body + copied
    for s in body:
        for n in walk(s):
            ast.copy_location(n, stmt)
    block, index = _block_of(owner, stmt)
    block[index:index] = body
    _replace(outer, ast.Name(items, ast.Load()))


def _renamed_copy(stmt, names: dict):
    stmt = copy.deepcopy(stmt)
    for n in walk(stmt):
        if isinstance(n, ast.Name) and n.id in names:
            n.id = names[n.id]
    return stmt


def _blocks_of_statement(stmt) -> list:
    found, todo = [], [stmt]
    while todo:
        s = todo.pop()
        for f in ("body", "orelse"):
            block = getattr(s, f, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
                todo += block
    return found


def _references(owner, name: str) -> int:
    """How many times ``owner``'s code (nested functions too) reads ``name``."""
    return sum(isinstance(n, ast.Name) and n.id == name for n in walk(owner))


def _append(out: str, stmt):
    """``yield e`` → ``out.append(e)``."""
    value = stmt.value.value or ast.Constant(None)
    call = ast.Call(ast.Attribute(ast.Name(out, ast.Load()), "append", ast.Load()), [value], [])
    return ast.copy_location(ast.Expr(ast.copy_location(call, stmt)), stmt)


def _replace(old, new) -> None:
    """Make the node ``old`` the node ``new`` (its fields and class)."""
    old.__class__ = new.__class__
    for field in old._fields:
        if hasattr(old, field):
            delattr(old, field)
    for field in new._fields:
        setattr(old, field, getattr(new, field))


def _builtin(name: str, src) -> bool:
    return name not in src.globals and getattr(builtins, name, None) is not None


def _nonlocal(owner, fn, declared: list, taken: set, src) -> None:
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return
    nodes = list(_own_nodes(fn))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global)) for n in nodes):
        return
    bound = {n.id for s in _own_statements(owner) for n in walk(s)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} \
        | {a.arg for a in owner.args.args + owner.args.kwonlyargs + owner.args.posonlyargs}
    if not set(declared) <= bound:
        return  # `nonlocal` of a variable of a function further out
    # another function reading v would see it change only when the call
    # returns (a nested function or lambda of F's, or of the owner's)
    others = [n for n in walk(owner) if isinstance(n, (ast.FunctionDef, ast.Lambda))
              and n is not fn and n is not owner and any(
                  isinstance(x, ast.Name) and x.id in declared for x in walk(n))]
    uses = _uses(owner, fn)
    if others or len(uses) != _references(owner, fn.name):
        return
    plan = []
    for stmt, name in uses:
        site = _site(stmt, name, src, declared)
        if site is None:
            return
        plan.append(site)
    if not plan:
        return
    # the function: `nonlocal v` dropped, v a parameter, (result, v) returned
    fn.body = [s for s in fn.body if not isinstance(s, ast.Nonlocal)]
    args.args += [ast.arg(v) for v in declared]
    for ret in [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]:
        ret.value = ast.Tuple([ret.value or ast.Constant(None)] + [
            ast.Name(v, ast.Load()) for v in declared], ast.Load())
    if not isinstance(fn.body[-1], ast.Return):
        fn.body.append(ast.copy_location(ast.Return(ast.Tuple(
            [ast.Constant(None)] + [ast.Name(v, ast.Load()) for v in declared], ast.Load())),
            fn.body[-1]))
    for kind, stmt, call, standing in plan:
        _thread(kind, stmt, call, standing, declared, owner, taken)
    ast.fix_missing_locations(owner)


def _site(stmt, name, src, declared):
    """``(kind, statement, call or comprehension, the node it stands in)`` for
    one use of a nested function; None where its state cannot be threaded."""
    targets = []
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        targets = [n.id for n in walk(stmt.targets[0]) if isinstance(n, ast.Name)]
    elif not isinstance(stmt, (ast.Expr, ast.Return)):
        return None
    if set(targets) & set(declared):
        return None
    value = getattr(stmt, "value", None)
    if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(value, ast.Call) \
            and value.func is name and not value.keywords \
            and not any(isinstance(a, ast.Starred) for a in value.args):
        return ("call", stmt, value, value)
    parents = {id(c): p for p in _shallow(stmt) for c in ast.iter_child_nodes(p)}
    parents.update({id(c): stmt for c in ast.iter_child_nodes(stmt)})
    call = parents.get(id(name))
    comp = parents.get(id(call))
    if not (isinstance(call, ast.Call) and call.func is name and isinstance(
            comp, (ast.GeneratorExp, ast.ListComp)) and comp.elt is call):
        return None
    outer = parents.get(id(comp))
    standing = outer if _collected(outer) and outer.args[0] is comp and _builtin(
        outer.func.id, src) else comp
    if isinstance(comp, ast.GeneratorExp) and standing is comp:
        return None  # a generator consumed by something else
    gen = comp.generators[0]
    if len(comp.generators) != 1 or gen.ifs or gen.is_async \
            or not isinstance(gen.target, ast.Name) or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(isinstance(n, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp,
                          ast.DictComp, ast.NamedExpr)) for a in call.args for n in walk(a)):
        return None
    up = standing
    while id(up) in parents and parents[id(up)] is not stmt:
        up = parents[id(up)]
        if isinstance(up, (ast.Lambda, ast.IfExp, ast.BoolOp, ast.GeneratorExp, ast.ListComp,
                           ast.SetComp, ast.DictComp)):
            return None  # evaluated conditionally or repeatedly
    inside = {id(n) for n in walk(call)}
    if any(isinstance(n, ast.Name) and n.id in declared and id(n) not in inside
           for n in _shallow(stmt)):
        return None  # the statement reads the state before or after the calls
    return ("loop", stmt, comp, standing)


def _thread(kind, stmt, call, standing, declared, owner, taken) -> None:
    """Rewrite one use: the state passed in and taken back."""
    def fresh(base):
        return unused(base, taken)

    def threaded(c):
        c.args = list(c.args) + [ast.Name(v, ast.Load()) for v in declared]
        return c

    block, index = _block_of(owner, stmt)
    if kind == "call":
        result = fresh("result")
        store = ast.Tuple([ast.Name(result, ast.Store())] + [
            ast.Name(v, ast.Store()) for v in declared], ast.Store())
        new = [ast.copy_location(ast.Assign([store], threaded(call)), stmt)]
        if isinstance(stmt, ast.Assign):
            stmt.value = ast.Name(result, ast.Load())
            new.append(stmt)
        block[index:index + 1] = new
        return
    comp, gen = call, call.generators[0]
    items, loop_var, result = fresh("items"), fresh(gen.target.id), fresh("result")
    element = comp.elt
    for n in walk(element):
        if isinstance(n, ast.Name) and n.id == gen.target.id:
            n.id = loop_var
    store = ast.Tuple([ast.Name(result, ast.Store())] + [
        ast.Name(v, ast.Store()) for v in declared], ast.Store())
    body = [ast.Assign([store], threaded(element)),
            ast.Expr(ast.Call(ast.Attribute(ast.Name(items, ast.Load()), "append", ast.Load()),
                              [ast.Name(result, ast.Load())], []))]
    loop = ast.For(ast.Name(loop_var, ast.Store()), gen.iter, body, [])
    new = [ast.Assign([ast.Name(items, ast.Store())], ast.List([], ast.Load())), loop]
    new = [ast.fix_missing_locations(ast.copy_location(s, stmt)) for s in new]
    for s in new:
        for n in walk(s):
            ast.copy_location(n, stmt)
    _replace(standing, ast.Name(items, ast.Load()))
    block[index:index] = new


def _block_of(owner, stmt):
    """The list of statements holding ``stmt``, and its index there."""
    for node in [owner] + list(_own_statements(owner)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for i, s in enumerate(block):
                    if s is stmt:
                        return block, i
    raise LookupError(stmt)
