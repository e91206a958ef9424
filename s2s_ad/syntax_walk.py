"""``walk``: :func:`ast.walk` without its per-node generator layers.

The passes of s2s-ad walk whole functions and every generated statement many
times; ``ast.walk`` builds an ``iter_child_nodes`` and an ``iter_fields``
generator per node, which made up about a third of the transform's time.
This one visits the same nodes in the same order (breadth first, each node's
children queued before the node is yielded, so a caller changing a node it
was given sees the same later nodes as with ``ast.walk``), but for the
expression contexts: the ``Load``/``Store``/``Del`` markers, a quarter of
the nodes of a function, which no pass looks for (a pass reads them through
``node.ctx``). It reads only the fields that can hold nodes: not the names
and numbers (``Name.id``, ``Attribute.attr``, ``Constant.value``, ...), per
class, the table made on first sight of the class.
"""

from __future__ import annotations

import ast
from ast import AST
from collections import deque

_LEAF_FIELDS = frozenset(("id", "attr", "arg", "kind", "type_comment", "level", "module",
                          "simple", "is_async", "tag", "conversion", "ctx", "name", "asname",
                          "rest", "kwd_attrs"))
"""Fields that never hold a node (identifiers, strings, ints), and ``ctx``."""

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
"""An AST class -> the fields of its nodes that may hold nodes."""


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = tuple(f for f in cls._fields if f not in _LEAF_FIELDS
                   and not (cls is ast.Constant and f == "value")
                   and not (cls in (ast.Global, ast.Nonlocal) and f == "names"))
    _CHILD_FIELDS[cls] = fields
    return fields


def child_fields(node: AST) -> tuple[str, ...]:
    """The fields of ``node`` that may hold nodes (not its context)."""
    fields = _CHILD_FIELDS.get(node.__class__)
    return fields if fields is not None else _child_fields(node.__class__)


def walk(node: AST):
    """Every node under ``node``, ``node`` first, in ``ast.walk``'s order, but
    for the expression contexts (``ast.Load()``, ...)."""
    return _breadth_first(node, _CHILD_FIELDS, _child_fields)


_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}
"""An AST class -> its fields that hold statements, ``except`` handlers or
``case``s (``body``, ``handlers``, ``orelse``, ``finalbody``, ``cases``),
in the order of its ``_fields``."""


def _block_fields(cls: type) -> tuple[str, ...]:
    fields = tuple(f for f in cls._fields
                   if f in ("body", "handlers", "orelse", "finalbody", "cases"))
    _BLOCK_FIELDS[cls] = fields
    return fields


def blocks(tree: AST):
    """The nodes under ``tree`` that may hold a list of statements (statements,
    ``except`` handlers, ``case``s), ``tree`` first: :func:`walk`'s nodes and
    order without the expressions, which hold none. A pass that reads only
    ``node.body``/``node.orelse`` lists visits a tenth of the nodes."""
    return _breadth_first(tree, _BLOCK_FIELDS, _block_fields)


def _breadth_first(node: AST, table: dict, fields_of):
    """The nodes reached from ``node`` through the fields ``fields_of(class)``
    names (remembered in ``table``), breadth first, each node's children
    queued before the node is yielded."""
    todo = deque([node])
    pop, push = todo.popleft, todo.append
    while todo:
        node = pop()
        fields = table.get(node.__class__)
        if fields is None:
            fields = fields_of(node.__class__)
        for name in fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if isinstance(value, AST):
                push(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        push(item)
        yield node


def parents(tree: AST) -> dict:
    """``id(node) -> its parent`` for every node under ``tree`` but ``tree``
    and the expression contexts."""
    return {id(c): p for p in walk(tree) for c in child_nodes(p)}


def child_nodes(node: AST) -> list:
    """The nodes directly under ``node``, in :func:`walk`'s order (which
    inlines this loop: a call per node made it 40% slower)."""
    fields = _CHILD_FIELDS.get(node.__class__)
    if fields is None:
        fields = _child_fields(node.__class__)
    out = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, AST)])
    return out


def nested_beyond(tree: AST, limit: int) -> AST | None:
    """The first statement under ``tree`` (in no particular order) holding an
    expression nested more than ``limit`` levels deep (its own expressions at
    level 1), else None; counted without recursion."""
    stack = [(tree, 0, tree)]
    while stack:
        node, depth, stmt = stack.pop()
        if isinstance(node, ast.stmt):
            depth, stmt = 0, node
        elif depth > limit:
            return stmt
        stack.extend([(child, depth + 1, stmt) for child in child_nodes(node)])
    return None
