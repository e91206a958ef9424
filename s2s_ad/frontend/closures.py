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

from s2s_ad.frontend.source import Source

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def outer_locals(tree: ast.FunctionDef) -> set[str]:
    """The local variables of ``tree``: its parameters, the names it
    assigns and the nested functions it defines (not those of nested
    scopes)."""
    out = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
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
        stack.extend(ast.iter_child_nodes(node))
    return out


def free_variables(node: ast.FunctionDef | ast.Lambda) -> list[str]:
    """Names ``node`` reads and does not bind itself, in order of first read."""
    bound = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    reads: dict[str, None] = {}
    body = node.body if isinstance(node.body, list) else [node.body]
    for part in body:
        for n in ast.walk(part):
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
    taken = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
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
    fn.__s2s_source__ = Source(fn, outer.file, tree, outer.lines, namespace)
    fn.__s2s_free__ = tuple(captured)
    return fn
