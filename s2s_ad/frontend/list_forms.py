"""Everyday ways of making and growing lists, written as the forms the
lowering reads (for :func:`s2s_ad.frontend.generated.normalise`, which runs
before every function is lowered).

Contract: each rewrite computes the same values as the code it replaces,
Python's own semantics, in place where Python's is in place.

* ``list(e)`` (the builtin ``list``, one argument) is ``[v for v in e]``: a
  new list of the same items, whatever ``e`` is that a comprehension reads
  (a list, a tuple, ``reversed(xs)``, ``zip(...)``, ``range(n)``, a dict's
  keys). ``list()`` is ``[]``. ``list(map(...))`` is left to
  :func:`s2s_ad.frontend.closures.rewrite_maps`.
* ``xs += e`` where ``xs`` is a list is ``xs.extend(e)``: Python's ``+=`` on
  a list extends it in place (every other name holding it sees the new
  items), which is what ``extend`` does; a ``+=`` on an array or a number
  is not touched.
* ``xs.copy()`` where ``xs`` is a list is ``[v for v in xs]``.
* ``tuple(e)`` of a name that holds a list (below), a list display or a
  list comprehension is ``(*[v for v in e],)``: a tuple of the same items (of
  anything else, a shape ``tuple(np.shape(x))`` say, it is read as it is).

Which names hold lists is read from the code alone: a name of the function
(not a parameter, not declared ``global``/``nonlocal``) every binding of
which is a list display, a list comprehension, ``[c] * n``, ``list(...)``,
``sorted(...)``, a sum of such lists, another such name or its ``.copy()``. A name bound in
any other way (a parameter, a loop target, unpacking, a call) is left as
written, so its ``+=`` keeps the meaning the lowering gives it (an array's
elementwise ``+=``).

Before → after::

    ys = list(reversed(xs))               ys = [item for item in reversed(xs)]
    hs += [h]                             hs.extend([h])
    zs = hs.copy()                        zs = [item for item in hs]
"""

from __future__ import annotations

import ast

from s2s_ad.frontend.jax_batching import located
from s2s_ad.names import Namer
from s2s_ad.syntax_walk import walk

__all__ = ["desugar", "list_names"]


def desugar(tree: ast.FunctionDef, namer: Namer, globals_: dict | None) -> None:
    """Rewrite ``tree`` in place (see the module)."""
    if not _candidates(tree):
        return  # (most functions: one walk, no rewrite)
    globals_ = globals_ or {}
    shadowed = _bound_names(tree)
    builtin_list = "list" not in shadowed and globals_.get("list", list) is list
    builtin_tuple = "tuple" not in shadowed and globals_.get("tuple", tuple) is tuple
    lists = list_names(tree, globals_, shadowed)
    if not builtin_list and not builtin_tuple and not lists:
        return

    def copy_of(seq: ast.expr, at: ast.AST) -> ast.ListComp:
        v = namer.fresh("item")
        return located(ast.ListComp(ast.Name(v, ast.Load()),
                                    [ast.comprehension(ast.Name(v, ast.Store()), seq, [], 0)]),
                       at)

    class Forms(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call):
            self.generic_visit(node)
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                return node
            if builtin_list and isinstance(node.func, ast.Name) and node.func.id == "list":
                if not node.args:
                    return ast.copy_location(ast.List([], ast.Load()), node)
                if len(node.args) == 1 and not _is_map(node.args[0]):
                    return copy_of(node.args[0], node)
            if builtin_tuple and isinstance(node.func, ast.Name) and node.func.id == "tuple" \
                    and len(node.args) == 1 and _sequence(node.args[0], lists):
                # `tuple(xs)`: the items spliced into a tuple display
                return located(ast.Tuple([ast.Starred(copy_of(node.args[0], node), ast.Load())],
                                         ast.Load()), node)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" \
                    and not node.args and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in lists:
                return copy_of(node.func.value, node)
            return node

        def visit_AugAssign(self, node: ast.AugAssign):
            self.generic_visit(node)
            if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
                    and node.target.id in lists:
                func = ast.Attribute(ast.Name(node.target.id, ast.Load()), "extend", ast.Load())
                call = ast.Call(func, [node.value], [])
                for n in (func, func.value, call):
                    ast.copy_location(n, node.target if n is not call else node)
                    n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
                return ast.copy_location(ast.Expr(call), node)
            return node

        def visit_FunctionDef(self, node):  # a nested function: its own names
            return node

        visit_Lambda = visit_AsyncFunctionDef = visit_FunctionDef

    forms = Forms()
    tree.body = [forms.visit(stmt) for stmt in tree.body]
    ast.fix_missing_locations(tree)


def _candidates(tree: ast.FunctionDef) -> bool:
    """Might ``tree`` hold a form this module rewrites: a call of ``list`` or
    ``tuple``, or ``+=``/``.copy()`` on a name the function binds to a list?"""
    targets, made = set(), set()
    for n in walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in ("list", "tuple"):
                return True
            if isinstance(f, ast.Attribute) and f.attr == "copy" and isinstance(f.value, ast.Name):
                targets.add(f.value.id)
        elif isinstance(n, ast.AugAssign):
            if isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name):
                targets.add(n.target.id)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(
                n.value, (ast.List, ast.ListComp, ast.BinOp, ast.Call, ast.Name)):
            made.update(t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                        if isinstance(t, ast.Name))
    return bool(targets & made)


def list_names(tree: ast.FunctionDef, globals_: dict | None = None,
               shadowed: set | None = None) -> set[str]:
    """The names of ``tree`` that hold lists wherever they are bound (see the
    module), nested functions' names apart."""
    params = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}
    declared: set[str] = set()
    binds: dict[str, list] = {}
    read = set()  # ids of the targets read here (the walk comes to them later)
    for node in _own_nodes(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for t in node.targets:
                binds.setdefault(t.id, []).append(node.value)
                read.add(id(t))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            binds.setdefault(node.target.id, []).append(node.value)
            read.add(id(node.target))
        elif isinstance(node, ast.AugAssign):
            read.add(id(node.target))  # `xs += e` keeps what xs is
        elif id(node) in read:
            pass
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            binds.setdefault(node.id, []).append(None)  # bound otherwise
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.setdefault(node.name, []).append(None)
        elif isinstance(node, ast.alias):
            binds.setdefault((node.asname or node.name).split(".")[0], []).append(None)
        elif isinstance(node, (ast.ExceptHandler,)) and node.name:
            binds.setdefault(node.name, []).append(None)
    shadowed = _bound_names(tree) if shadowed is None else shadowed
    globals_ = globals_ or {}
    makers = {name for name, fn in (("list", list), ("sorted", sorted))
              if name not in shadowed and globals_.get(name, fn) is fn}
    names = {n for n, values in binds.items()
             if n not in params and n not in declared and None not in values}
    while True:
        kept = {n for n in names if all(_is_list(v, names, makers) for v in binds[n])}
        if kept == names:
            return names
        names = kept


def _is_list(e: ast.expr, names: set, makers: set) -> bool:
    if isinstance(e, (ast.List, ast.ListComp)):
        return True
    if isinstance(e, ast.Name):
        return e.id in names
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return isinstance(e.left, ast.List) or isinstance(e.right, ast.List)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        return _is_list(e.left, names, makers) and _is_list(e.right, names, makers)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "copy":
        return not e.args and not e.keywords and isinstance(e.func.value, ast.Name) \
            and e.func.value.id in names  # `ys = xs.copy()`
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in makers


def _sequence(e: ast.expr, lists: set) -> bool:
    """A sequence ``tuple(...)`` is read of: a name holding a list, a list
    display or a list comprehension; not a shape (``tuple(np.shape(x))``, a name bound
    to one: read as it is), a generator or a call of a function of yours
    (TensorFlow-flavoured code's ``tuple(gen())`` is read by its own rewrite)."""
    if isinstance(e, ast.Name):
        return e.id in lists
    return isinstance(e, (ast.List, ast.ListComp))  # (`tuple((n,)) + tuple(shape)`: as it is)


def _is_map(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "map"


def _own_nodes(tree: ast.FunctionDef):
    """The nodes of ``tree``'s body and arguments' defaults, not those inside
    nested functions, lambdas or classes (whose own nodes are skipped; their
    name, a binding of this scope, is yielded)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))


def _bound_names(tree: ast.FunctionDef) -> set[str]:
    """Every name the function binds or takes (nested functions' too)."""
    return {n.id for n in walk(tree) if isinstance(n, ast.Name)
            and not isinstance(n.ctx, ast.Load)} | {
        a.arg for a in walk(tree) if isinstance(a, ast.arg)} | {
        n.name for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
        and n is not tree}
