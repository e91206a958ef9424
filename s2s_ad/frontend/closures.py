"""Nested functions and lambdas, lifted to helpers that take what they read.

Contract: :func:`lift` takes a nested ``def`` (or a ``lambda``) of the
function being lowered and returns a real Python function made from it: its
own parameters, then one keyword-only parameter per variable of the
enclosing function it reads (its *free* variables, :func:`free_variables`).
The function carries its :class:`~s2s_ad.frontend.source.Source`
(``__s2s_source__``, found by :func:`~s2s_ad.frontend.source.locate`) and
the names of those parameters (``__s2s_free__``). A call ``h(a)`` is then
lowered as a call of the lifted helper with the free variables' values *at
the call* as keywords: what Python's late binding reads. So a nested helper
gets a forward/backward pair (or is inlined) like any helper, in a loop, a
branch, or a helper of a helper.

Before → after::

    def cost(p, c):                     def all_pairs(a, b, *, c):   # lifted
        def all_pairs(a, b):                return (a - b) * c
            return (a - b) * c
        return all_pairs(p, 1.0)        cost: all_pairs(p, 1.0, c=c)
"""

from __future__ import annotations

import ast
import copy
import types

from s2s_ad.frontend import module_data
from s2s_ad.frontend.source import Source
from s2s_ad.syntax_walk import child_nodes, walk

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def outer_locals(tree: ast.FunctionDef) -> set[str]:
    """The local variables of ``tree``: its parameters, the names it
    assigns and the nested functions it defines (not those of nested
    scopes)."""
    out = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        stack.extend(child_nodes(node))
    return out


def free_variables(node: ast.FunctionDef | ast.Lambda) -> list[str]:
    """Names ``node`` reads and does not bind itself, in order of first read."""
    bound = {a.arg for a in walk(node.args) if isinstance(a, ast.arg)}
    reads: dict[str, None] = {}
    body = node.body if isinstance(node.body, list) else [node.body]
    for part in body:
        for n in walk(part):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Store):
                    bound.add(n.id)
                else:
                    reads[n.id] = None
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, ast.arg):
                bound.add(n.arg)
    return [n for n in reads if n not in bound]


def lift(outer: Source, node: ast.FunctionDef | ast.Lambda, name: str, locals_: set[str],
         local_fns: dict):
    """``node`` as a function of its own (see the module docstring).
    ``locals_`` are the enclosing function's local variables; ``local_fns``
    maps the names of nested functions lifted before to their functions."""
    for n in walk(node):
        if isinstance(n, (ast.Nonlocal, ast.Global)):
            word = "nonlocal" if isinstance(n, ast.Nonlocal) else "global"
            raise outer.error(n, f"`{word}` is not supported: s2s-ad differentiates pure "
                              "functions; return the new value from the nested function instead")
    free = free_variables(node)
    captured: dict[str, None] = {}
    for n in free:
        if n == name:
            continue  # the function itself (a recursive call, refused where it is made)
        if n in local_fns:
            for m in local_fns[n].__s2s_free__:
                captured[m] = None
        elif n in locals_:
            captured[n] = None
        elif getattr(outer.globals.get(n), "__s2s_free_as__", None):
            # a function passed to the enclosing function (funargs): its free
            # variables are parameters there, which calling it here reads
            passed = outer.globals[n]
            for m in passed.__s2s_free__:
                if passed.__s2s_free_as__.get(m) in locals_:
                    captured[passed.__s2s_free_as__[m]] = None
        elif isinstance(outer.globals.get(n), types.FunctionType) \
                and not hasattr(outer.globals[n], "__s2s_source__"):
            # a helper of the module reading module-level data: the enclosing
            # function has them as parameters, given on to it at each call
            for m in module_data.names(outer.globals[n]):
                if m in locals_:
                    captured[m] = None
    if isinstance(node, ast.Lambda):
        ret = ast.copy_location(ast.Return(copy.deepcopy(node.body)), node.body)
        tree = ast.FunctionDef(name=name, args=copy.deepcopy(node.args), body=[ret],
                               decorator_list=[], returns=None, type_comment=None)
        ast.copy_location(tree, node)
        tree.end_lineno, tree.end_col_offset = node.end_lineno, node.end_col_offset
    else:
        if node.decorator_list:
            raise outer.error(node.decorator_list[0], f"the nested function {node.name!r} is "
                              "decorated; s2s-ad would read its source, not the code the "
                              "decorator makes: remove the decorator")
        tree = copy.deepcopy(node)
    taken = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}
    for n in captured:
        if n not in taken:
            tree.args.kwonlyargs.append(ast.copy_location(ast.arg(n), tree))
            tree.args.kw_defaults.append(None)
    namespace = dict(outer.globals)
    namespace.update(local_fns)
    module = ast.Module([tree], [])
    ast.fix_missing_locations(module)
    try:
        code = compile(module, outer.fn.__code__.co_filename, "exec")
        exec(code, namespace)  # defines the function; default values are evaluated here
    except Exception as exc:
        raise outer.error(node, f"the nested function {name!r} cannot be made on its own "
                          f"({type(exc).__name__}: {exc}); its default values may read only "
                          "module-level names") from None
    fn = namespace[name]
    fn.__qualname__ = f"{outer.fn.__qualname__}.<locals>.{name}"
    fn.__s2s_source__ = Source(fn, outer.file, tree, outer.lines, namespace, jax=outer.jax)
    fn.__s2s_free__ = tuple(captured)
    return fn


def rewrite_maps(src: Source) -> None:
    """``map(f, xs, ys)`` → ``(f(a, b) for a, b in zip(xs, ys))`` and
    ``list(map(...))`` → ``[f(a, b) for ...]`` in ``src.tree``, where ``map``
    and ``list`` are the builtins: ``f`` (a nested function, a ``lambda``,
    a function of yours) is then called item by item, as a comprehension."""
    import builtins

    def is_map(node) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "map" and len(node.args) >= 2 and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args)

    tree = src.tree
    if not any(is_map(n) for n in walk(tree)):
        return  # (nothing to rewrite: most functions)
    local = outer_locals(tree)
    if "map" in local or src.globals.get("map", builtins.map) is not builtins.map:
        return
    listed = "list" not in local and src.globals.get("list", builtins.list) is builtins.list
    taken = {n.id for n in walk(tree) if isinstance(n, ast.Name)}
    count = [0]

    def fresh() -> str:
        while True:
            count[0] += 1
            name = f"map_item{count[0]}"
            if name not in taken:
                return name

    class Maps(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call):
            wrap = ast.GeneratorExp
            if listed and isinstance(node.func, ast.Name) and node.func.id == "list" \
                    and len(node.args) == 1 and not node.keywords and is_map(node.args[0]):
                # (before the `map` inside it is made a generator)
                node, wrap = node.args[0], ast.ListComp
                node.args = [self.visit(a) for a in node.args]
            else:
                self.generic_visit(node)
                if not is_map(node):
                    return node
            names = [fresh() for _ in node.args[1:]]
            call = ast.Call(node.args[0], [ast.Name(n, ast.Load()) for n in names], [])
            if len(names) == 1:
                target, it = ast.Name(names[0], ast.Store()), node.args[1]
            else:
                target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
                it = ast.Call(ast.Name("zip", ast.Load()), node.args[1:], [])
            out = wrap(call, [ast.comprehension(target, it, [], 0)])
            given = {id(x) for a in node.args for x in walk(a)}
            for n in walk(out):  # new nodes point at the `map(...)` call
                if id(n) not in given and isinstance(n, (ast.expr, ast.comprehension)):
                    ast.copy_location(n, node)
                    if isinstance(n, ast.expr):
                        n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
            return out

    for i, stmt in enumerate(tree.body):
        tree.body[i] = Maps().visit(stmt)

