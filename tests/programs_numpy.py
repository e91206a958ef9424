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
        kind = d.integer(0, 9)
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
        # a reduction broadcast back: fan-in of every element
        return f"({sub()} * np.{choice(d, ['sum', 'mean'])}({sub()}))"


def numpy_program(d, *, max_stmts: int = 4, max_depth: int = 3) -> NumpyProgram:
    g = _Gen(d, max_depth)
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
