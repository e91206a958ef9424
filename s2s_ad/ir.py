"""The SSA intermediate representation.

Contract: a :class:`Function` holds parameters and a :class:`Region` of
:class:`Op` s. Every :class:`Value` is defined exactly once (by a parameter or
by one op) before it is used. Ops carry the source location they came from, so
every later stage can point back at the user's line.

Control flow stays structured, as in MLIR's ``scf``: an :class:`If` holds two
regions whose ``yields`` become its results (the φ-nodes); a :class:`For`
and a :class:`While` hold a body region from the carried values to their next
values. ``break``/``continue``/``return`` are lowered by the frontend to flags,
so regions have no jumps.

Each op prints as one line (a structured op as a header line with its regions
indented below); that text is the ``s2s-ad ir`` output, the debugging dump and
the golden-test format::

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
    tape: "Value | None" = None
    """What the callee's forward function returns besides its result, for its
    backward function: defined by the call, like its result (inside a loop it
    is taped like any value the reverse sweep reads)."""
    kinds: "tuple[str, ...] | None" = None
    """The kinds of the callee's parameters in the lowering this call uses
    (set by :func:`s2s_ad.calls.collect`; None for a user rule)."""
    passed: tuple = ()
    """``(parameter, spec)`` for each parameter given a structure whole, whose
    leaves are the call's operands in its place (:mod:`s2s_ad.frontend.passing`)."""
    lowered: "Function | None" = field(default=None, compare=False, repr=False)
    """The callee as lowered for this call while the caller was (to learn the
    structure it returns); :func:`s2s_ad.frontend.calls.collect` reuses it
    when the call's arguments still ask for the same lowering (``lowered_for``)."""
    lowered_for: tuple = field(default=(), compare=False, repr=False)
    effects: bool = False
    """The callee (or a function it calls) holds a check (``assert``, ``if c:
    raise``) or a ``print``: every forward pass makes the call (s2s_ad.frontend.checks)."""
    returns: object = None
    """The spec of the structure the caller reads the result as (a dict,
    NamedTuple, dataclass or nested tuples the callee returns), or None."""

    @property
    def key(self) -> tuple:
        """Which forward/backward pair the call uses: see :func:`s2s_ad.calls.key`."""
        return self.fn, self.kinds

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
    """A block of ops (simple or structured). ``yields`` are the values it
    passes to the op that holds it: an :class:`If`'s results, a loop body's
    next carried values (then, for a loop that may stop early, its exit flag),
    a ``while`` condition."""

    ops: list["Node"] = field(default_factory=list)
    yields: list[Operand] = field(default_factory=list)


@dataclass(eq=False)
class If:
    """``outs = cond ? then.yields : orelse.yields``."""

    cond: Operand
    then: Region
    orelse: Region
    outs: list[Value]
    loc: Loc
    text: str = ""

    @property
    def regions(self) -> list[Region]:
        return [self.then, self.orelse]

    def __str__(self) -> str:
        outs = ", ".join(v.name for v in self.outs)
        return f"{outs + ' = ' if outs else ''}if {self.cond!r}"


@dataclass(eq=False)
class For:
    """``for index in range(start, stop, step)`` (or, with ``seq``, over the
    positions of a list; the body's first op then reads the element) with
    ``carried`` values starting at ``inits``; the body yields their next values
    and, when ``exit`` is set, last a bool that stops the loop after that
    iteration. ``trips`` counts the iterations run when the loop may stop early."""

    index: Value
    start: Operand
    stop: Operand
    step: Operand
    carried: list[Value]
    inits: list[Operand]
    body: Region
    outs: list[Value]
    loc: Loc
    text: str = ""
    seq: Value | None = None
    exit: bool = False
    trips: Value | None = None
    checkpoint: int = 0
    """Snapshots of the carried values the gradient may keep to recompute
    the loop instead of taping every iteration (0: tape every iteration;
    s2s_ad.reverse.checkpoint)."""
    implicit: bool = False
    """A loop the lowering made for an expression (a comprehension, a slice
    of a list of any length), not a ``for`` the code writes:
    ``checkpoint=True`` leaves it taped."""
    source_line: str = ""

    @property
    def regions(self) -> list[Region]:
        return [self.body]

    def __str__(self) -> str:
        outs = ", ".join(v.name for v in self.outs + ([self.trips] if self.trips else []))
        carried = ", ".join(f"{c.name}={i!r}" for c, i in zip(self.carried, self.inits))
        what = (f"{self.seq!r}" if self.seq is not None else
                f"range({self.start!r}, {self.stop!r}, {self.step!r})")
        exit_ = " until exit" if self.exit else ""
        return f"{outs + ' = ' if outs else ''}for {self.index.name} in {what} carry ({carried}){exit_}"


@dataclass(eq=False)
class While:
    """``while cond.yields[0]``: the ``cond`` region and the body both read
    ``carried``; ``trips`` counts the iterations the body ran."""

    carried: list[Value]
    inits: list[Operand]
    cond: Region
    body: Region
    outs: list[Value]
    trips: Value
    loc: Loc
    text: str = ""
    exit: bool = False
    checkpoint: int = 0
    """As for :class:`For` (a ``while`` keeps about √n snapshots whatever the budget)."""
    source_line: str = ""

    @property
    def regions(self) -> list[Region]:
        return [self.cond, self.body]

    def __str__(self) -> str:
        outs = ", ".join(v.name for v in self.outs + [self.trips])
        carried = ", ".join(f"{c.name}={i!r}" for c, i in zip(self.carried, self.inits))
        exit_ = " until exit" if self.exit else ""
        return f"{outs} = while carry ({carried}){exit_}"


Node = Union[Op, If, For, While]
Structured = (If, For, While)


def defined(node: Node) -> list[Value]:
    """The values ``node`` defines in its enclosing region."""
    if isinstance(node, Op):
        if node.callee is not None and node.callee.tape is not None:
            return [node.out, node.callee.tape]
        return [node.out]
    extra = [node.trips] if getattr(node, "trips", None) is not None else []
    return list(node.outs) + extra


def operands(node: Node) -> list[Operand]:
    """What ``node`` reads from its enclosing region (not counting its regions)."""
    if isinstance(node, Op):
        return list(node.args)
    if isinstance(node, If):
        return [node.cond]
    if isinstance(node, For):
        base = [node.start, node.stop, node.step] + ([node.seq] if node.seq is not None else [])
        return base + list(node.inits)
    return list(node.inits)


def is_int(a: Operand, value: int) -> bool:
    """``a`` is the integer constant ``value`` (not a bool)."""
    return isinstance(a, Const) and a.value == value and not isinstance(a.value, bool)


def range_args(loop: "For") -> list[Operand]:
    """The arguments of the loop's ``range(...)`` as Python writes it:
    ``[stop]``, ``[start, stop]`` or ``[start, stop, step]``."""
    if is_int(loop.step, 1):
        return [loop.stop] if is_int(loop.start, 0) else [loop.start, loop.stop]
    return [loop.start, loop.stop, loop.step]


EFFECTS = frozenset({"check", "print"})
"""Ops every forward pass runs whatever reads their (empty) result: a check
(``assert``, ``if c: raise``) and ``print`` (s2s_ad.frontend.checks)."""


def has_checks(func: "Function") -> bool:
    """Whether ``func`` holds an effect (:data:`EFFECTS`) or calls a helper holding one."""
    return any(isinstance(n, Op) and (n.prim in EFFECTS or (n.callee is not None
                                                          and n.callee.effects))
               for n in walk(func.body))


def has_control_flow(func: "Function") -> bool:
    return any(not isinstance(node, Op) for node in func.body.ops)


_END = object()


def walk(region: Region):
    """Every node of ``region``, nested regions included, in program order.

    Iterative: a recursive generator hands each node up through one
    ``yield from`` per enclosing region, which made walks of deeply nested
    code quadratic in its depth."""
    stack = [iter(region.ops)]
    while stack:
        node = next(stack[-1], _END)
        if node is _END:
            stack.pop()
            continue
        yield node
        if not isinstance(node, Op):
            stack.extend(iter(r.ops) for r in reversed(node.regions))


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
    tree: object = None
    """For a parameter receiving a nested structure (kind ``"tree"``,
    s2s_ad/frontend/pytrees.py): ``("leaf", value)``, ``("dict", ((key,
    tree), ...))``, ``("list"|"tuple", (tree, ...))`` or ``("object", cls,
    ((field, tree), ...))``, and ``("static", value)`` for a string, None or
    bool in it (no leaf: a constant of the code); ``items`` are its leaves in
    that order."""


@dataclass(frozen=True)
class FunctionDefault:
    """A parameter's default that is a library function, ``np.tanh`` (module
    ``"numpy"``, ``name`` ``"tanh"``): the generated code names it through
    its module's alias."""
    module: str
    name: str


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

    index_results: frozenset = frozenset()
    """Positions of ``outputs`` (0: ``result``) that are integer index arrays
    computed from ints (:mod:`s2s_ad.frontend.index_exprs`): a caller may
    index a subscript assignment with them."""

    integers: dict = field(default_factory=dict)
    """Parameter name -> the SourceError to raise if asked for a gradient with
    respect to it: it is used as an integer (a range bound, an index)."""

    statics: dict = field(default_factory=dict)
    """Parameter name -> the string, None or bool it was lowered for (a
    static argument: it selects code, it has no adjoint)."""

    not_none: tuple[str, ...] = ()
    """Parameters the code was generated for as numbers or arrays where the
    source tests ``p is None``: the generated code raises if given None."""

    passed: tuple = ()
    """``(parameter, spec)`` for the parameters lowered for a structure a
    caller passes whole: one parameter per leaf (:mod:`s2s_ad.frontend.passing`)."""

    returns: object = None
    """For a helper returning a dict, a NamedTuple, a dataclass or nested
    tuples and lists: its spec (:mod:`s2s_ad.frontend.passing`); ``outputs``
    are then its leaves, in order."""

    returns_argument: str | None = None
    """For a helper whose ``return`` gives one of its list parameters itself
    (``def h(xs): ...; return xs``): that parameter's name. The caller reads
    the call's result as the very list it passed (Python's same object), not
    as a new list of its items."""

    given_arrays: tuple[str, ...] = ()
    """The parameters lowered as arrays because the caller (or the arguments
    at the top level) passes arrays, in a function whose source never names
    NumPy (see :func:`s2s_ad.frontend.lowering.lower`)."""

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
    _format_region(func.body, "  ", lines)
    if func.outputs is not None:
        lines.append(f"  return ({', '.join(repr(o) for o in func.outputs)})")
    else:
        lines.append(f"  return {func.result!r}")
    return "\n".join(lines) + "\n"


def _format_region(region: Region, indent: str, lines: list[str]) -> None:
    for op in region.ops:
        text = f"{indent}{op}"
        lines.append(f"{text:<30}# :{op.loc.line}" if len(text) < 30 else f"{text}  # :{op.loc.line}")
        if isinstance(op, If):
            names = [("then", op.then), ("else", op.orelse)]
        elif isinstance(op, While):
            names = [("cond", op.cond), ("do", op.body)]
        elif isinstance(op, For):
            names = [("do", op.body)]
        else:
            continue
        for label, r in names:
            lines.append(f"{indent}  {label}:")
            _format_region(r, indent + "    ", lines)
            if r.yields:
                lines.append(f"{indent}    yield {', '.join(repr(y) for y in r.yields)}")


class IRError(AssertionError):
    """An SSA invariant does not hold: a bug in s2s-ad, never in user code."""


def verify(func: Function) -> None:
    """Check the SSA invariants: each value defined once, before its uses and
    visible there (a value defined inside a region is not visible after it);
    regions yield as many values as their op expects. A loop's results may
    share their carried values' names (they hold the carried value once the
    loop ends); no other two values share a name."""
    seen: set[int] = set()
    names: dict[str, Value] = {}

    def fail(message: str):
        raise IRError(f"{message}\n{format_function(func)}")

    def define(v: Value, scope: set[int], shares: Value | None = None) -> None:
        if id(v) in seen:
            fail(f"{v.name} defined twice")
        other = names.get(v.name)
        if other is not None and other is not shares:
            fail(f"{v.name} defined twice")
        seen.add(id(v))
        names.setdefault(v.name, v)
        scope.add(id(v))

    def use(a: Operand, scope: set[int], where: str) -> None:
        if isinstance(a, Value) and id(a) not in scope:
            fail(f"{a.name} used before definition (or outside its region) in {where}")

    def region(r: Region, scope: set[int], n_yields: int | None, where: str) -> None:
        scope = set(scope)
        for node in r.ops:
            for a in operands(node):
                use(a, scope, str(node))
            if isinstance(node, If):
                region(node.then, scope, len(node.outs), str(node))
                region(node.orelse, scope, len(node.outs), str(node))
            elif isinstance(node, (For, While)):
                inner = set(scope)
                if isinstance(node, For):
                    define(node.index, inner)
                    if len(node.inits) != len(node.carried):
                        fail(f"{node}: {len(node.inits)} initial values for "
                             f"{len(node.carried)} carried values")
                for c in node.carried:
                    define(c, inner)
                if isinstance(node, While):
                    region(node.cond, inner, 1, str(node))
                region(node.body, inner, len(node.carried) + node.exit, str(node))
                if len(node.outs) != len(node.carried):
                    fail(f"{node}: {len(node.outs)} results for {len(node.carried)} carried values")
                for o, c in zip(node.outs, node.carried):
                    define(o, scope, shares=c)
                if node.trips is not None:
                    define(node.trips, scope)
                continue
            for v in defined(node):
                define(v, scope)
        if n_yields is not None and len(r.yields) != n_yields:
            fail(f"a region of {where} yields {len(r.yields)} values, expected {n_yields}")
        for y in r.yields:
            use(y, scope, f"yield of {where}")
        if n_yields is None:
            use(func.result, scope, "return")
            for o in func.outputs or ():
                use(o, scope, "return")

    top: set[int] = set()
    for p in func.params:
        define(p.value, top)
        for v in p.items or ():
            define(v, top)
    region(func.body, top, None, "the function")
