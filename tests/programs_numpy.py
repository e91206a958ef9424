"""Random small NumPy programs for differential testing.

Contract: :func:`numpy_program` draws, from the same drawers as
:mod:`tests.programs`, a module defining ``f(a, b, s)`` where ``a`` and ``b``
are float arrays of one shape (drawn: ``(3,)``, ``(2, 3)`` or ``(4,)``) and
``s`` a float, returning a scalar reduction of an elementwise expression DAG.
Fan-out, reassignment and broadcasting of the scalar ``s`` and of row vectors
are exercised; domain-restricted functions get safe arguments as in
:mod:`tests.programs` (``np.log(e * e + 0.5)``, ``np.sqrt(np.exp(np.tanh(e)))``).

>>> from tests.programs import RandomDraw
>>> "import numpy as np" in numpy_program(RandomDraw(0)).source
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.programs import chance, choice

SHAPES = [(3,), (2, 3), (4,)]


@dataclass
class NumpyProgram:
    source: str
    point: dict
    """a, b: arrays; s: a float."""
    ops: int
    wrt: tuple = ("a", "b", "s")
    """The parameters, all differentiated (a float in ``point`` is a scalar)."""
    output: int | None = None
    """For a function returning a tuple: the item differentiated."""


class _Gen:
    def __init__(self, d, max_depth: int):
        self.d = d
        self.max_depth = max_depth
        self.ops = 0

    def leaf(self, env: list[str]) -> str:
        d = self.d
        if chance(d, 80):
            return choice(d, env)
        return choice(d, ["2.0", "0.5", "s", "1.5"])

    def positive(self, env: list[str], depth: int) -> str:
        e = self.expr(env, depth + 1)
        self.ops += 2
        return choice(self.d, [f"({e} * {e} + 0.5)", f"np.exp(np.tanh({e}))",
                               f"(np.abs({e}) + 0.25)", f"(1.5 + np.sin({e}))"])

    def expr(self, env: list[str], depth: int = 0) -> str:
        d = self.d
        if depth >= self.max_depth or chance(d, 25):
            return self.leaf(env)
        self.ops += 1
        kind = d.integer(0, 10)
        sub = lambda: self.expr(env, depth + 1)  # noqa: E731
        if kind <= 2:
            return f"({sub()} {choice(d, ['+', '-', '*'])} {sub()})"
        if kind == 3:
            return f"({sub()} / {self.positive(env, depth)})"
        if kind == 4:
            fn = choice(d, ["np.sin", "np.cos", "np.tanh", "np.arctan", "np.negative", "np.square"])
            return f"{fn}({sub()})"
        if kind == 5:
            fn = choice(d, ["np.log", "np.sqrt"])
            return f"{fn}({self.positive(env, depth)})"
        if kind == 6:
            return f"np.exp(np.tanh({sub()}))"
        if kind == 7:
            return f"({sub()} ** {choice(d, ['2', '3'])})"
        if kind == 8:
            fn = choice(d, ["np.maximum", "np.minimum"])
            return f"{fn}({sub()}, {sub()})"
        if kind == 9:
            # a reduction broadcast back: fan-in of every element
            return f"({sub()} * np.{choice(d, ['sum', 'mean'])}({sub()}))"
        # a reduction keeping its axes, broadcast against its own operand or another
        x = choice(d, [n for n in env if n != "s"]) if chance(d, 50) else sub()
        axis = choice(d, ["-1", "None", "0"])
        red = f"np.{choice(d, ['sum', 'mean', 'max', 'min'])}({x}, axis={axis}, keepdims=True)"
        return f"({choice(d, [x, sub()])} {choice(d, ['-', '*'])} {red})"


def numpy_program(d, *, max_stmts: int = 4, max_depth: int = 3, generator=None) -> NumpyProgram:
    """``generator``: a subclass of ``_Gen`` drawing other expressions
    (tests.programs_rules)."""
    g = (generator or _Gen)(d, max_depth)
    env = ["a", "b", "s"]
    lines = []
    for _ in range(d.integer(0, max_stmts)):
        form = d.integer(0, 3)
        if form == 0:
            lines.append(f"c = {g.expr(env)}")
            if "c" not in env:
                env.append("c")
        elif form == 1:
            target = choice(d, [n for n in env if n != "s"])
            lines.append(f"{target} = {target} * {g.expr(env, 1)}")
        elif form == 2:
            target = choice(d, [n for n in env if n != "s"])
            lines.append(f"{target} = {target} + {g.expr(env, 1)}")
        else:
            lines.append(f"t = np.tanh({g.expr(env, 1)})")
            if "t" not in env:
                env.append("t")
    body = g.expr(env)
    result = choice(d, [f"np.sum({body})", f"np.mean({body})", f"np.sum({body} * a)",
                        f"np.sum(np.tanh({body}) * {choice(d, env)})"])
    text = "import numpy as np\n\n\ndef f(a, b, s):\n"
    text += "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"
    shape = choice(d, SHAPES)
    size = int(np.prod(shape))
    a = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    b = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    return NumpyProgram(text, {"a": a, "b": b, "s": round(d.real(-2.0, 2.0), 4)}, g.ops)


class _LoopGen:
    """Statements of a loop filling ``y`` (and maybe the rows of ``H``) by
    subscript assignment, reading earlier elements, the whole array and the
    accumulator ``acc`` (see :func:`numpy_loop_program`)."""

    def __init__(self, d, rows: bool):
        self.d = d
        self.rows = rows

    def scalar(self, depth: int = 0) -> str:
        d = self.d
        if depth >= 2 or chance(d, 30):
            return choice(d, ["a[i]", "b[i]", "y[i]", "y[i - 1]", "s", "acc", "0.5",
                              "np.sum(y) * 0.1", "np.mean(y * b)", "y[len(a) - 1 - i]"])
        kind = d.integer(0, 4)
        if kind <= 2:
            op = choice(d, ["+", "-", "*"])
            return f"({self.scalar(depth + 1)} {op} {self.scalar(depth + 1)})"
        fn = choice(d, ["np.sin", "np.tanh", "np.cos"])
        return f"{fn}({self.scalar(depth + 1)})"

    def vector(self) -> str:
        """An expression of shape (len(a) - 1,)."""
        d = self.d
        atom = lambda: choice(d, ["a[:-1]", "b[1:]", "y[:-1]", "y[1:]", "np.sin(y[:-1])"])  # noqa
        return choice(d, [f"{atom()} * {self.scalar(1)}", f"np.tanh({atom()} + {atom()})",
                          f"{atom()} * 0.5"])

    def stmt(self, depth: int = 0, in_loop: bool = True) -> list[str]:
        d = self.d
        form = d.integer(0, 9)
        if form == 0:
            return [f"y[i] = {self.scalar()}"]
        if form == 1:
            return [f"y[i] {choice(d, ['+=', '-='])} {self.scalar()}"]
        if form == 2:
            return [f"y[i] *= np.tanh({self.scalar()})"]
        if form == 3:
            return [f"y[1:] += {self.vector()}"]
        if form == 4:
            return [f"y[:2] = np.sin(y[1:3]) * {self.scalar(1)}"]
        if form == 5:
            return [f"acc = acc + {self.scalar()}"]
        if form == 6:
            return ["acc = acc + np.sum(y * b) * 0.1"]
        if form == 7 and depth == 0:
            then, orelse = self.stmt(1), self.stmt(1)
            return [f"if {self.scalar(1)} > 0:"] + ["    " + s for s in then] + \
                ["else:"] + ["    " + s for s in orelse]
        if form == 8 and depth == 0 and in_loop:
            stop = choice(d, ["break", "return np.sum(y * b) + acc", "continue"])
            return [f"if np.sum(y * y) > {choice(d, ['2.0', '6.0', '20.0'])}:", f"    {stop}"]
        if self.rows:
            if chance(d, 50):
                return ["for j in range(2):",
                        f"    H[i, j] = H[i - 1, j] * {self.scalar(1)} + np.sin(H[i, 1 - j])"]
            return [f"H[i, :] = np.tanh(H[i - 1] * {self.scalar(1)} + b[:2])"]
        return [choice(d, [f"y[len(a) - 1 - i] = {self.scalar()}", f"y[i:] *= {self.scalar(1)}",
                           f"z[i] = y[i] * {self.scalar(1)} + z[i - 1]"])]


def numpy_loop_program(d, *, max_stmts: int = 4) -> NumpyProgram:
    """A module defining ``f(a, b, s)`` (``a``, ``b`` of shape ``(n,)``, n in
    3..5, ``s`` a float) whose loop fills an array by subscript assignment:
    writes to ``y[i]``, ``y[i] op= e``, slices ``y[1:] += v``, ``y[i:] *= e``,
    reads of earlier elements and of the whole array between writes, a second
    array ``z`` and the rows of a matrix ``H`` (by row or element by element in
    an inner loop), branches, ``break``, ``continue`` and ``return``; a
    ``for`` or a ``while`` loop."""
    rows = chance(d, 30)
    g = _LoopGen(d, rows)
    init = choice(d, ["np.zeros(len(a))", "np.copy(a)", "np.ones_like(b)", "a.copy()"])
    lines = [f"y = {init}", "acc = 0.0", "z = np.ones(len(a))"]
    if rows:
        lines.append("H = np.zeros((len(a), 2))")
    if chance(d, 30):
        lines.append("acc = np.sum(y * a) * 0.5")
    kind = d.integer(0, 2)
    groups = [g.stmt() for _ in range(d.integer(1, max_stmts))]
    if kind == 2:  # a while loop: no break, continue or return (i = i + 1 must run)
        groups = [s for s in groups if not s[0].startswith("if np.sum(y * y)")]
    body = [line for s in groups for line in s]
    if kind == 0:
        lines.append("for i in range(len(a)):")
    elif kind == 1:
        lines.append("for i in range(1, len(a)):")
    else:
        lines += ["i = 0", "while i < len(a):"]
        body.append("i = i + 1")
    lines += ["    " + s for s in body]
    if chance(d, 30):
        lines.append("y[0] = acc * s")
    result = choice(d, ["np.sum(y * y) + acc", "np.sum(np.sin(y) * b) + acc * s",
                        "np.sum(y[1:] * a[:-1]) + acc", "y @ b + acc"])
    if rows:
        result += " + np.sum(H * H)"
    result += " + np.sum(z * b)"
    text = "import numpy as np\n\n\ndef f(a, b, s):\n"
    text += "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"
    n = d.integer(3, 5)
    a = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(n)])
    b = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(n)])
    return NumpyProgram(text, {"a": a, "b": b, "s": round(d.real(-2.0, 2.0), 4)}, len(body))
