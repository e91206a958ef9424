"""Random NumPy programs over the rule table's newer entries.

Contract: :func:`rules_program` draws a program of the ``--numpy`` family
(:func:`tests.programs_numpy.numpy_program`: ``f(a, b, s)``, ``a`` and ``b``
of shape ``(3,)``, ``(2, 3)`` or ``(4,)``, every parameter differentiated)
whose expressions, half the time, come from the functions that family never
draws: the elementwise ``arcsin arccos arcsinh arctanh log2 log10 log1p exp2
expm1 cbrt reciprocal tan sinh cosh power float_power logaddexp hypot arctan2
where clip``; ``var``/``std`` (``ddof`` 0 or 1), ``prod``, ``amax``/``amin``
along the last axis, kept and broadcast back; ``cumsum``/``cumprod``,
``flip``, ``roll``; ``repeat``, ``tile``, ``hstack``, ``vstack``,
``concatenate``, ``stack`` summed; ``inner``, ``cross`` (of three elements),
``einsum``, and a well-conditioned square matrix ``M = outer(tanh(a), b) / 10
+ 2·I`` through ``det``, ``inv``, ``solve``, ``trace``, ``diag``,
``tril``/``triu``, ``swapaxes``/``moveaxis``, ``@``; constructors with
``dtype=float``. Arguments of functions with a restricted domain are built to
be inside it, as in the other families; ``std``'s operand has ``arange``
added, so that its deviation is not zero (where its derivative is not
finite); ``prod``'s factors stay in [0.75, 1.25] (``1.5 + sin`` made values
near 10⁸ whose ``sin`` no finite difference can follow, seed 2003934); a
``cross`` product is weighted by ``b`` (the sum of ``cross(c·1, v)`` is 0
for any ``v``, a function that is zero up to rounding, seed 2004069).
"""

from __future__ import annotations

from tests.programs import chance, choice
from tests.programs_numpy import NumpyProgram, _Gen, numpy_program


class RulesGen(_Gen):
    def full(self, env: list[str], depth: int) -> str:
        """An expression with the arrays' shape (a scalar is broadcast over ``a``)."""
        return f"({self.expr(env, depth + 1)} + a * 0.0)"

    def bounded(self, env: list[str], depth: int) -> str:
        return f"np.tanh({self.expr(env, depth + 1)})"

    def matrix(self) -> str:
        return "(np.outer(np.tanh(a), b) * 0.1 + np.eye(np.size(a)) * 2.0)"

    def expr(self, env: list[str], depth: int = 0) -> str:
        d = self.d
        if depth >= self.max_depth or not chance(d, 50):
            return super().expr(env, depth)
        self.ops += 1
        sub = lambda: self.expr(env, depth + 1)  # noqa: E731
        full = lambda: self.full(env, depth)  # noqa: E731
        bounded = lambda: self.bounded(env, depth)  # noqa: E731
        positive = lambda: self.positive(env, depth)  # noqa: E731
        kind = d.integer(0, 8)
        if kind == 0:
            fn = choice(d, ["np.arcsin", "np.arccos", "np.arctanh"])
            return f"{fn}(0.9 * {bounded()})"
        if kind == 1:
            fn = choice(d, ["np.log2", "np.log10", "np.log1p", "np.cbrt", "np.reciprocal"])
            return f"{fn}({positive()})"
        if kind == 2:
            fn = choice(d, ["np.arcsinh", "np.exp2", "np.expm1", "np.sinh", "np.cosh", "np.tan"])
            arg = sub() if fn == "np.arcsinh" else f"0.5 * {bounded()}"
            return f"{fn}({arg})"
        if kind == 3:
            form = d.integer(0, 6)
            if form == 0:
                return f"np.power({positive()}, {choice(d, ['1.5', '2', '-0.5'])})"
            if form == 1:
                return f"np.float_power({positive()}, {bounded()})"
            if form == 2:
                return f"np.logaddexp({sub()}, {sub()})"
            if form == 3:
                return f"np.hypot({sub()}, {positive()})"
            if form == 4:
                return f"np.arctan2({sub()}, {positive()})"
            if form == 5:
                return f"np.where({sub()} > 0.0, {sub()}, {sub()})"
            return f"np.clip({sub()}, -0.5, {choice(d, ['0.5', 'None'])})"
        if kind == 4:  # a reduction along the last axis, kept and broadcast back
            x = full()
            red = choice(d, [f"np.var({x}, axis=-1, keepdims=True, ddof={d.integer(0, 1)})",
                             f"np.std({x} + np.arange(a.shape[-1]) * 1.0, axis=-1, keepdims=True)",
                             f"np.prod(1.0 + 0.25 * np.sin({x}), axis=-1, keepdims=True)",
                             f"np.{choice(d, ['amax', 'amin'])}({x}, axis=-1, keepdims=True)",
                             f"{x}.var(axis=-1, keepdims=True)"])
            return f"({choice(d, [x, sub()])} {choice(d, ['-', '*'])} {red})"
        if kind == 5:  # shape-preserving
            x = full()
            return choice(d, [f"np.cumsum({x}, axis=-1)",
                              f"np.cumprod(0.5 + 0.25 * np.tanh({x}), axis=-1)",
                              f"np.flip({x}, axis={choice(d, ['-1', 'None'])})",
                              f"np.roll({x}, {choice(d, ['1', '-2'])}, axis=-1)",
                              f"np.ones_like(a, dtype=float) * {sub()}"])
        if kind == 6:  # shape-changing, summed to a number
            x, y = full(), full()
            form = choice(d, [f"np.repeat({x}, 2, axis=-1) * np.repeat({y}, 2, axis=-1)",
                              f"np.tile({x}, 2) * {choice(d, ['0.5', 's'])}",
                              f"np.hstack(({x}, {y})) ** 2",
                              f"np.vstack(({x}, {y})) * {x}",
                              f"np.concatenate([{x}, {y}], axis=0) ** 2",
                              f"np.stack([{x}, {y}], axis=0) * {y}"])
            return f"np.sum({form})"
        if kind == 7:  # products
            x, y = full(), full()
            return choice(d, [f"np.sum(np.inner({x}, {y}))",
                              f"np.sum(np.cross(np.ravel({x})[:3], np.ravel({y})[:3]) * np.ravel(b)[:3])",
                              f"np.einsum('i,i->', np.ravel({x}), np.ravel({y}))",
                              f"np.sum(np.einsum('i,j->ij', np.ravel({x}), np.ravel({y})) "
                              f"* {self.matrix()})"])
        m, x = self.matrix(), full()
        return choice(d, [f"np.linalg.det({m})",
                          f"np.sum(np.linalg.inv({m}) * np.outer(np.ravel({x}), np.ravel(b)))",
                          f"np.sum(np.linalg.solve({m}, np.ravel({x})) * np.ravel(a))",
                          f"np.trace({m} @ {m})",
                          f"np.sum(np.diag({m}) * np.ravel({x}))",
                          f"np.sum(np.{choice(d, ['tril', 'triu'])}({m}, k={choice(d, ['0', '-1'])}) "
                          f"* np.outer(np.ravel({x}), np.ravel({x})))",
                          f"np.sum(np.swapaxes({m}, 0, 1) @ np.ravel({x}))",
                          f"np.sum(np.moveaxis({m}, 0, -1) * {m})"])


def rules_program(d, *, max_stmts: int = 4, max_depth: int = 3) -> NumpyProgram:
    return numpy_program(d, max_stmts=max_stmts, max_depth=max_depth, generator=RulesGen)
