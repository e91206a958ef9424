"""The SSA intermediate representation.

Contract: a :class:`Function` holds parameters and a :class:`Region` of
:class:`Op` s. Every :class:`Value` is defined exactly once (by a parameter or
by one op) before it is used. Ops carry the source location they came from, so
every later stage can point back at the user's line.

Each op prints as one line; that text is the ``s2s-ad ir`` output, the
debugging dump and the golden-test format::

    func f(a, x):                 # examples/seed_ggml.py:1
      b = mul x x                 # :2
      y = mul a b                 # :3
      return y
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Loc:
    """A position in a user's file: 1-based line, 0-based character column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


@dataclass(eq=False)
class Value:
    """An SSA value. ``name`` is unique within its function and is the name the
    emitted Python uses; ``var`` is the user variable it was assigned to, if any.
    ``kind`` is ``"float"`` (a scalar that may carry a derivative), ``"array"``
    (a NumPy array or scalar of unknown shape, may carry a derivative), ``"int"``
    or ``"bool"`` (never do)."""

    name: str
    kind: str = "float"
    var: str | None = None

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    """A literal or module-level numeric constant."""

    value: Union[int, float, bool]

    def __repr__(self) -> str:
        return repr(self.value)


Operand = Union[Value, Const]


@dataclass(eq=False)
class Callee:
    """The target of a ``call`` op: a user function that gets its own
    forward/backward pair, or one with a user-registered derivative rule
    (``rule`` set), which the generated code imports and calls."""

    fn: object
    """The Python function called."""
    rule: object = None
    """A :class:`~s2s_ad.rules.user.UserRule`, when the user registered one."""

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", "?")

    def __repr__(self) -> str:
        return f"{getattr(self.fn, '__module__', '?')}.{getattr(self.fn, '__qualname__', '?')}"


@dataclass(eq=False)
class Op:
    """``out = prim(*args)``. ``prim`` names an entry of the rule table
    (``mul``, ``math.sin``, ...); ``text`` is the user's source of the
    expression it came from, kept for comments in the generated code."""

    prim: str
    args: tuple[Operand, ...]
    out: Value
    loc: Loc
    text: str = ""
    callee: Callee | None = None
    """For ``prim == "call"``: the function called (operands in its parameter order)."""
    attrs: dict = field(default_factory=dict)
    """Constant keyword attributes (``axis``, ``keepdims``, an index's
    structure), printed after the operands."""

    def __str__(self) -> str:
        args = " ".join(repr(a) for a in self.args)
        prim = f"call {self.callee.name}" if self.callee is not None else self.prim
        attrs = " ".join(f"{k}={_attr_text(v)}" for k, v in self.attrs.items())
        return " ".join(p for p in (f"{self.out.name} = {prim}", args, attrs) if p)


DIFFERENTIABLE = frozenset({"float", "array"})
"""Value kinds that may carry a derivative."""


def _attr_text(v) -> str:
    if isinstance(v, tuple):
        return "(" + ",".join(_attr_text(x) for x in v) + ")"
    return repr(v)


@dataclass(eq=False)
class Region:
    """A straight-line block of ops."""

    ops: list[Op] = field(default_factory=list)


@dataclass(eq=False)
class Param:
    """A parameter of the user's function. ``default`` is its default value
    (a number) when it has one; ``kwonly`` marks keyword-only parameters."""

    value: Value
    default: object = None
    has_default: bool = False
    kwonly: bool = False
    items: list[Value] | None = None
    """For a parameter that receives a list or tuple (of a length given when
    lowering): one scalar value per item; ``value`` then stands for the
    whole sequence (kind ``"list"`` or ``"tuple"``)."""


@dataclass(eq=False)
class Function:
    name: str
    params: list[Param]
    body: Region
    result: Operand
    loc: Loc
    modules: dict[str, str] = field(default_factory=dict)
    """Python module name -> the alias the generated code imports it as."""

    names: frozenset[str] = frozenset()
    """Every name the function's SSA values, parameters and module aliases use."""

    outputs: tuple[Operand, ...] | None = None
    """For a function returning a tuple or list: its items (then ``result``
    is None until an output is chosen, e.g. with ``output=0``)."""

    @property
    def param_values(self) -> list[Value]:
        return [p.value for p in self.params]

    def scalars(self, values: list[Value]) -> list[Value]:
        """``values`` with each sequence parameter replaced by its items."""
        items = {id(p.value): p.items for p in self.params if p.items is not None}
        out = []
        for v in values:
            out += items.get(id(v), [v])
        return out


def format_function(func: Function) -> str:
    """The text form of ``func`` (see the module docstring)."""
    head = f"func {func.name}({', '.join(p.value.name for p in func.params)}):"
    lines = [f"{head:<30}# {func.loc.file}:{func.loc.line}"]
    for op in func.body.ops:
        text = f"  {op}"
        lines.append(f"{text:<30}# :{op.loc.line}")
    if func.outputs is not None:
        lines.append(f"  return ({', '.join(repr(o) for o in func.outputs)})")
    else:
        lines.append(f"  return {func.result!r}")
    return "\n".join(lines) + "\n"


class IRError(AssertionError):
    """An SSA invariant does not hold: a bug in s2s-ad, never in user code."""


def verify(func: Function) -> None:
    """Check the SSA invariants: each value defined once, before its uses."""
    defined: set[int] = set()
    names: set[str] = set()

    def define(v: Value) -> None:
        if id(v) in defined or v.name in names:
            raise IRError(f"{v.name} defined twice\n{format_function(func)}")
        defined.add(id(v))
        names.add(v.name)

    def use(a: Operand, where: str) -> None:
        if isinstance(a, Value) and id(a) not in defined:
            raise IRError(f"{a.name} used before definition in {where}\n{format_function(func)}")

    for p in func.params:
        define(p.value)
        for v in p.items or ():
            define(v)
    for op in func.body.ops:
        for a in op.args:
            use(a, str(op))
        define(op.out)
    use(func.result, "return")
    for o in func.outputs or ():
        use(o, "return")
