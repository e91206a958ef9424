"""Random NumPy programs with augmented assignment through aliases and views.

Contract: :func:`alias_program` draws a module defining ``f(a, b, s: float)``
(``a``, ``b`` float arrays of one shape from :data:`tests.programs_numpy.SHAPES`,
``s`` a float) whose statements write arrays in place by ``y op= e``
(``+= -= *= /= **=``) while other names may refer to the same memory: a second
name (``z = y``), a view (``y[1:]``, ``y[...]``, ``y.T``, ``y.reshape(-1)``,
``y.ravel()``, ``np.asarray(y)``), written through too (``v += 1.5``), a
parameter (``y = a``), a helper's parameter (``h(y)`` with ``u += 1.0``
inside), inside a ``for`` loop or a branch; numbers (``t = s; s += 0.5``) too.
``clean`` is True when no statement made an alias, a view or an in-place
write into an argument: such a program must be accepted; the others may be
refused, with a located message (tests/fuzz.py ``--numpy-aliasing`` checks both).

>>> from tests.programs import RandomDraw
>>> "def f(a, b, s: float):" in alias_program(RandomDraw(0)).source
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.programs import chance, choice
from tests.programs_numpy import SHAPES, NumpyProgram, _Gen

HELPERS = {  # (scaled is harmless; s2s-ad refuses writing into its result, which it cannot see)
    "bump": "def bump(u):\n    u += 1.0\n    return u * u\n",
    "scaled": "def scaled(u):\n    u = u * 1.0\n    u *= 0.5\n    return u + 1.0\n",
    "keeps": "def keeps(u):\n    v = u\n    u -= 0.25\n    return v * 2.0\n",
    "same": "def same(u):\n    return u\n",
}
"""Helpers without NumPy (numbers unless an array is passed): bump and keeps
write into their argument; same returns it (its result aliases it)."""

VIEWS = ["{y}[1:]", "{y}[...]", "{y}.T", "{y}.reshape(-1)", "{y}.ravel()", "np.asarray({y})",
         "{y}[0]"]


@dataclass
class AliasProgram(NumpyProgram):
    clean: bool = True
    """No alias, view or in-place write into an argument: must be accepted."""


class _AliasGen:
    def __init__(self, d):
        self.d = d
        self.expr_gen = _Gen(d, 2)
        self.arrays = ["y"]     # local arrays (same shape as a)
        self.views: list[str] = []
        self.helpers: set[str] = set()
        self.clean = True
        self.n = 0

    def fresh(self, stem: str, depth: int, pool: list) -> str | None:
        """A new name at the top level; inside a loop or branch an existing
        one of ``pool`` (a name first bound there could be undefined after),
        or None."""
        if depth:
            old = [n for n in pool if n.startswith(stem)]
            return choice(self.d, old) if old else None
        self.n += 1
        pool.append(f"{stem}{self.n}")
        return pool[-1]

    def expr(self) -> str:
        return self.expr_gen.expr(self.arrays + ["a", "b", "s"], 1)

    def augassign(self, target: str) -> str:
        d = self.d
        op = choice(d, ["+=", "-=", "*=", "/=", "**="])
        if op == "/=":
            return f"{target} /= {self.expr_gen.positive(self.arrays + ['a', 'b'], 1)}"
        if op == "**=":
            return f"{target} **= 2"
        if chance(d, 15):
            return f"{target} {op} {target}[::-1] * 0.5"  # reads the array it writes
        return f"{target} {op} {self.expr()}"

    def stmt(self, depth: int) -> list[str]:
        d = self.d
        y = choice(d, self.arrays)
        form = d.integer(0, 11)
        if form <= 2:
            return [self.augassign(y)]
        if form == 3 and (z := self.fresh("z", depth, self.arrays)) and z != y:
            self.clean = False
            return [f"{z} = {y}"]
        if form == 4 and (v := self.fresh("v", depth, self.views)):
            self.clean = False
            return [f"{v} = {choice(d, VIEWS).format(y=y)}"]
        if form == 5 and self.views:
            v = choice(d, self.views)
            if chance(d, 30):  # writing through the view changes the array it views
                return [f"{v} {choice(d, ['+=', '*='])} {choice(d, ['1.5', 's'])}"]
            return [f"r = r + np.sum({v} * {choice(d, ['1.5', 's'])})"]
        if form == 6 and (e := self.expr()) and (c := self.fresh("c", depth, self.arrays)):
            return [f"{c} = b * {e}"]  # an array of a's shape
        if form == 7 and depth == 0:
            body = [s for _ in range(d.integer(1, 2)) for s in self.stmt(1)]
            return [f"for i in range({choice(d, ['2', '3'])}):"] + ["    " + s for s in body]
        if form == 8 and depth == 0:
            then, orelse = self.stmt(1), self.stmt(1)
            return ["if s > 0:"] + ["    " + s for s in then] + ["else:"] + \
                ["    " + s for s in orelse]
        if form == 9 and (c := self.fresh("c", depth, self.arrays)):
            h = choice(d, sorted(HELPERS))
            self.helpers.add(h)
            self.clean = False  # a helper's result may be its argument
            return [f"{c} = {h}({y})"]
        if form == 10:
            return ["t = s", f"s {choice(d, ['+=', '*='])} 0.5", "r = r + t * s"]
        if form != 11:
            return [self.augassign(y)]
        # an argument written in place, maybe through another name
        self.clean = False
        if chance(d, 50):
            return [f"{y} = {choice(d, ['a', 'b'])}", self.augassign(y)]
        return [self.augassign(choice(d, ["a", "b"]))]


def alias_program(d, *, max_stmts: int = 6) -> AliasProgram:
    g = _AliasGen(d)
    lines = [f"y = {choice(d, ['a * 1.0', 'np.copy(a)', 'a + b', 'np.sin(a)'])}", "r = 0.0"]
    for _ in range(d.integer(1, max_stmts)):
        lines += g.stmt(0)
    terms = " + ".join(f"np.sum({x} * {choice(d, ['a', 'b', x])})"
                       for x in g.arrays[-3:])
    views = "".join(f" + np.sum({v})" for v in g.views[-2:] if chance(d, 60))
    text = "import numpy as np\n\n\n" + "".join(HELPERS[h] + "\n\n" for h in sorted(g.helpers))
    text += "def f(a, b, s: float):\n" + "".join(f"    {line}\n" for line in lines)
    text += f"    return {terms}{views} + r\n"
    shape = choice(d, SHAPES)
    size = int(np.prod(shape))
    a = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    b = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    return AliasProgram(text, {"a": a, "b": b, "s": round(d.real(-2.0, 2.0), 4)},
                        g.expr_gen.ops + len(lines), clean=g.clean)
