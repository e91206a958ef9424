"""Deterministic, collision-free names for generated code.

Every name the generated module uses comes from one :class:`Namer`, seeded
with every identifier of the user's function, so a user variable called
``dx``, ``t1`` or ``grad_f`` can never be captured by a generated one. The
same input always produces the same names (no counters shared across calls).

>>> n = Namer(avoid={"x", "dx"})
>>> n.claim("x"), n.fresh("x"), n.fresh("dx")
('x', 'x_1', 'dx_1')
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from typing import Iterable
from s2s_ad.syntax_walk import walk


class Namer:
    def __init__(self, avoid: Iterable[str] = (), reserved: Iterable[str] = ()):
        self.avoid = set(avoid)
        """Names owned by the user: only :meth:`claim` may hand them out, once."""
        self.taken: set[str] = set(reserved)
        self._next: dict[str, int] = {}
        """base -> the first suffix :meth:`fresh` has not yet found taken (names
        are never given back, so the search resumes there: linear, not
        quadratic, in the names made from one base)."""
        self._log: list[tuple[str, str | None, int | None]] = []
        """(name, base, the base's earlier next suffix) of every name handed out."""

    def _free(self, name: str) -> bool:
        return name not in self.taken and not keyword.iskeyword(name) and name.isidentifier()

    def claim(self, name: str) -> str:
        """``name`` itself if nobody has it yet, else a fresh variant."""
        if self._free(name):
            self.taken.add(name)
            self._log.append((name, None, None))
            return name
        return self.fresh(name)

    def fresh(self, base: str) -> str:
        """A name derived from ``base`` that neither the user nor an earlier
        call owns."""
        # A base that is no identifier (``<lambda>``) would never become free.
        base = re.sub(r"\W", "_", base)
        if not base.isidentifier():
            base = "_" + base
        if self._free(base) and base not in self.avoid:
            self.taken.add(base)
            self._log.append((base, None, None))
            return base
        i = self._next.get(base, 1)
        while not (self._free(f"{base}_{i}") and f"{base}_{i}" not in self.avoid):
            i += 1
        name = f"{base}_{i}"
        self.taken.add(name)
        self._log.append((name, base, self._next.get(base)))
        self._next[base] = i + 1
        return name

    def mark(self) -> int:
        """A point to come back to with :meth:`undo`."""
        return len(self._log)

    def undo(self, mark: int) -> None:
        """Give back every name handed out since ``mark`` (a loop lowered
        again with wider kinds names its values afresh)."""
        while len(self._log) > mark:
            name, base, earlier = self._log.pop()
            self.taken.discard(name)
            if base is not None:
                if earlier is None:
                    del self._next[base]
                else:
                    self._next[base] = earlier


def unused(base: str, taken: set) -> str:
    """``base``, or ``base_1``, ``base_2``, ... : the first name not in
    ``taken``, which it is added to (the rewrites of the source before it is
    lowered take their names so)."""
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def identifiers(tree: ast.AST) -> set[str]:
    """Every identifier that appears in ``tree``."""
    out: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out


BUILTINS = frozenset(dir(builtins))
