"""Derivative rules: one declarative table of local derivatives per primitive.

A :class:`Rule` says how to compute a primitive in the forward pass and, for
each operand, the local partial derivative, both as Python expression
templates over ``x`` (first operand), ``y`` (second operand) and ``out`` (the
forward result, so ``exp`` reuses its own value). ``None`` as a partial means
the derivative is zero wherever it exists (``//``, ``round``, comparisons):
no adjoint flows through that operand.

The reverse sweep multiplies the output's adjoint by the partial and adds the
result to the operand's adjoint. ``tests/test_rules.py`` checks every partial
against ``sympy.diff``.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class Rule:
    prim: str
    forward: str
    """Template of the forward computation, e.g. ``"x * y"``, ``"math.sin(x)"``."""
    partials: tuple[str | None, ...]
    """Per operand: template of d out / d operand, or None (zero)."""
    result: str = "float"
    """Kind of the result: "float", "int", "bool", or "num" (int when every operand is)."""
    math: str = ""
    """The local derivative in mathematical notation, for comments and docs."""
    notes: str = ""
    """A convention worth stating (ties, subgradients)."""
    domain: tuple = field(default=(-2.0, 2.0), compare=False)
    """Per operand sampling interval for tests: (lo, hi) or a tuple of them."""
    adjoint: bool = False
    """The partials are whole contributions (vector-Jacobian products) over
    ``g``, the output's adjoint, instead of factors the reverse sweep
    multiplies ``g`` by (``np.sum``: ``spread(keep(g), x)``)."""
    broadcast: bool = False
    """Elementwise under NumPy broadcasting: a contribution to an operand whose
    shape may differ from the result's is summed back to that shape."""
    attrs: tuple = ()
    """Keyword attributes the primitive accepts, as (name, default) pairs;
    templates use the names (``np.sum(x, axis=axis, keepdims=keepdims)``)."""
    variadic: bool = False
    """Takes any number of operands; templates read them as ``args``/``rest``."""
    refused: tuple = ()
    """``(i, why)`` pairs: operands whose derivative s2s-ad does not compute
    (none is defined, or none is written). Their partial is None; a
    differentiated value reaching one is refused, located, with ``why``,
    instead of getting no derivative through it."""

    @property
    def arity(self) -> int:
        return len(self.partials)

    def flows(self, i: int) -> bool:
        """Whether a derivative flows to operand ``i``."""
        if self.variadic:
            return self.partials[min(i, len(self.partials) - 1)] is not None
        return i < len(self.partials) and self.partials[i] is not None

    def refusal(self, i: int) -> str | None:
        """Why operand ``i``'s derivative is refused, or None."""
        return next((why for j, why in self.refused if j == i), None)

    @cached_property
    def forward_ast(self) -> ast.expr:
        return ast.parse(self.forward, mode="eval").body

    @cached_property
    def partial_asts(self) -> tuple[ast.expr | None, ...]:
        return tuple(None if p is None else ast.parse(p, mode="eval").body for p in self.partials)

    def result_kind(self, kinds: list[str]) -> str:
        if self.result == "num":
            return "int" if all(k in ("int", "bool") for k in kinds) else "float"
        return self.result


from .control import CONTROL_RULES  # noqa: E402
from .scalar import SCALAR_RULES  # noqa: E402
from .numpy import NUMPY_RULES  # noqa: E402
from .numpy_more import NUMPY_MORE_RULES  # noqa: E402
from .own import OWN_RULES  # noqa: E402

RULES: dict[str, Rule] = {r.prim: r for r in SCALAR_RULES + NUMPY_RULES + NUMPY_MORE_RULES
                          + OWN_RULES + CONTROL_RULES}
SCALAR_PRIMS = frozenset(r.prim for r in SCALAR_RULES)
"""The primitives of Python's operators and the ``math`` module's functions
(their partials are formulas of numbers: no index, shape or axis in them)."""


def lookup(prim: str) -> Rule:
    return RULES[prim]


def markdown_table(rules=None) -> str:
    """The rule table as Markdown, as docs/rules.md shows it (a test keeps
    the page equal to this)."""
    rows = ["| primitive | forward | partial derivatives | note |", "| --- | --- | --- | --- |"]
    for r in rules or RULES.values():
        names = "xy" if r.arity <= 2 and not r.variadic else [f"x{i}" for i in range(r.arity)]
        if r.variadic:
            names = ["each operand"] * r.arity
        # Rules that give whole contributions (NumPy's) show them over g, the output's adjoint.
        label = "adjoint to {}" if r.adjoint else "∂/∂{}"
        partials = "; ".join(f"{label.format(names[i])}: `{p}`" if p is not None
                             else f"{label.format(names[i])}: refused" if r.refusal(i)
                             else f"{label.format(names[i])}: 0"
                             for i, p in enumerate(r.partials))
        rows.append(f"| `{r.prim}` | `{r.forward}` | {partials} | {r.notes} |")
    return "\n".join(rows) + "\n"


__all__ = ["Rule", "RULES", "lookup", "markdown_table"]


@functools.lru_cache(maxsize=256)
def _parsed(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body


def forward_template(op) -> ast.expr:
    """The template of ``op``'s forward computation: its rule's, or, for an
    ``index.expr`` op, the expression it carries (``attrs["code"]``: an
    integer index array computed as written, s2s_ad/frontend/index_exprs.py);
    for a ``shape`` op the source wrote as the attribute of an array
    (``attrs["attribute"]``), ``x.shape`` as written: the value has the
    attribute wherever the function runs, and reading it costs a fifth of
    ``np.shape(x)``'s dispatch (41 against 166 ns)."""
    if op.prim == "index.expr":
        return _parsed(op.attrs["code"])
    if op.prim == "shape" and op.attrs.get("attribute"):
        return _parsed("x.shape")
    return RULES[op.prim].forward_ast
