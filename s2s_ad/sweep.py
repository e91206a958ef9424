"""The reverse sweep as data: which local derivative feeds which adjoint.

Contract: :func:`read` takes the forward :class:`~s2s_ad.ir.Function` and the
:class:`~s2s_ad.code.CodeFunction` that :func:`s2s_ad.reverse.transform` made
from it, and returns a :class:`Sweep`: one :class:`Step` per local derivative
the reverse sweep applies, in sweep order, and one :class:`Adjoint` per value
that has one, listing the steps whose contributions it sums. It is what
``s2s-ad graph --backward`` draws and ``s2s-ad explain`` prints.

Steps are keyed by the IR values they connect, never by adjoint names: a
temporary's adjoint may share its consumer's variable (``t = a * b; y = t + c``
gives ``dt`` no variable of its own, its adjoint *is* ``dy``). Such a step has
no statement (``stmt`` None) but is still a local derivative (``∂y/∂t = 1``)
and still shown.

Before → after, for ``b = x * x; y = a * b`` with respect to ``a, x``::

    da = dy * b        Step(y = a * b, operand 0 → a)
    db = dy * a        Step(y = a * b, operand 1 → b)
    dx = db * x        Step(b = x * x, operand 0 → x)
    dx += db * x       Step(b = x * x, operand 1 → x)
                       Adjoint(x, "dx", steps=[the last two])
"""

from __future__ import annotations

import ast
import copy
import inspect
from dataclasses import dataclass, field

from . import ir
from .code import CodeFunction, Stmt
from .errors import S2SError
from .optimize import simplify
from .rules import RULES
from .templates import instantiate


class SweepError(S2SError, AssertionError):
    """The generated code and the IR disagree: a bug in s2s-ad, never in user code."""


@dataclass(eq=False)
class Step:
    """One local derivative applied by the reverse sweep: the adjoint of
    ``op.out`` times ``∂op.out/∂op.args[operand]``, added to the adjoint of
    ``value``."""

    op: ir.Op
    operand: int
    value: ir.Value
    partial: str
    """The local derivative, in the generated code's names (``x``, ``math.cos(t1)``)."""
    stmt: Stmt | None
    """The statement that applies it; None when the adjoint is shared, not computed."""
    reads: list[ir.Value] = field(default_factory=list)
    """Forward values the statement reads (what the forward pass must keep)."""
    contrib: str = ""
    """For a call: the variable the callee's backward pass puts this operand's
    contribution in (the adjoint itself, or a temporary then added)."""
    add: Stmt | None = None
    """For a call: the ``dx += dx_1`` that adds that temporary."""
    tape: str = ""
    """For a call: the callee's tape, which its backward pass reads."""
    cotangent: list[tuple[int | None, str]] = field(default_factory=list)
    """For a call: the adjoints its backward pass reads, ``(None, name)`` for
    a number, ``(k, name)`` per item of a returned tuple that has one."""
    item: int | None = None
    """For ``p = t[k]``: ``k``; the step adds to the adjoint of item ``k`` of ``t``."""
    stmts: list[Stmt] = field(default_factory=list)
    """Every statement that applies it, ``stmt`` last: NumPy's indexing takes
    several (``dx = np.zeros_like(x); dx[1] += dt1``)."""

    @property
    def is_call(self) -> bool:
        return self.op.callee is not None

    @property
    def target(self) -> str:
        """The value whose adjoint receives the contribution: ``x``, or ``t[k]``."""
        return self.value.name if self.item is None else f"{self.value.name}[{self.item}]"

    @property
    def expr(self) -> str:
        """The contribution, as the generated code computes it (``db * x``)."""
        if self.is_call:
            return self.contrib
        if self.stmt is None:
            return ""
        value = self.stmt.node.value
        if (isinstance(self.stmt.node, ast.Assign) and isinstance(value, ast.BinOp)
                and isinstance(value.op, (ast.Add, ast.Sub)) and isinstance(value.left, ast.Name)
                and value.left.id == self.stmt.target):
            # ``dW = dW + c`` (accumulating without mutating an array the
            # caller may share): the contribution is ``c``; ``dW = dW - c``
            # (``+ -c`` simplified), ``-c``
            return ast.unparse(value.right if isinstance(value.op, ast.Add)
                               else ast.UnaryOp(ast.USub(), value.right))
        return ast.unparse(value)

    @property
    def local(self) -> str:
        """`` = x`` for a local derivative written as an expression, else
        ``: what it is`` (``: transpose back``)."""
        try:
            ast.parse(self.partial, mode="eval")
        except SyntaxError:
            return f": {self.partial}"
        return f" = {self.partial}"

    @property
    def side(self) -> str:
        """``left operand`` / ``right operand`` / ``operand i`` when the op reads
        ``value`` more than once, else ``""``; for a call, the callee's parameter."""
        if self.is_call:
            return f"parameter {param_names(self.op)[self.operand]}"
        if sum(a is self.value for a in self.op.args) < 2:
            return ""
        if len(self.op.args) == 2:
            return ("left", "right")[self.operand] + " operand"
        return f"operand {self.operand}"


@dataclass(eq=False)
class Adjoint:
    value: ir.Value
    name: str
    steps: list[Step] = field(default_factory=list)
    """The contributions it sums, in sweep order (one per use of ``value``)."""
    seeded: bool = False
    """The result's adjoint: it starts as the seed."""
    item: int | None = None
    """For a tuple a call returned: which item's adjoint this is."""

    @property
    def target(self) -> str:
        return self.value.name if self.item is None else f"{self.value.name}[{self.item}]"


@dataclass(eq=False)
class Sweep:
    func: ir.Function
    code: CodeFunction
    steps: list[Step]
    adjoints: list[Adjoint]
    """In the order they are first written (the seed first)."""
    seed_steps: list[Stmt] = field(default_factory=list)
    """Statements that shape the seed before the sweep uses it (for an array
    result: ``dout = dout * np.ones_like(out)``)."""

    def adjoint(self, value: ir.Value, item: int | None = None) -> Adjoint | None:
        for a in self.adjoints:
            if a.value is value and a.item == item:
                return a
        return None

    def items(self, value: ir.Value) -> list[Adjoint]:
        """The adjoints of the items of a tuple ``value``."""
        return [a for a in self.adjoints if a.value is value and a.item is not None]


def param_names(op: ir.Op) -> list[str]:
    """The called function's parameter names, in operand order."""
    try:
        names = list(inspect.signature(op.callee.fn).parameters)
    except (TypeError, ValueError):
        names = []
    return names + [f"#{i}" for i in range(len(names), len(op.args))]


def forward_text(op: ir.Op, modules: dict[str, str]) -> str:
    """``b = x * x``: the op in SSA names, as the generated forward pass writes it."""
    return f"{op.out.name} = {_rhs(op, modules)}"


def derivative_text(op: ir.Op, operand: int | None, modules: dict[str, str]) -> str:
    """``∂(x * x)/∂x``: the forward expression and the operand it is taken by;
    for a call and ``None``, the callee by all its parameters (``∂h/∂(x, k)``)."""
    if operand is None:
        return f"∂{op.callee.name}/∂({', '.join(param_names(op))})"
    if op.prim == "item":
        return f"∂{op.out.name}/∂{_rhs(op, modules)}"
    rhs = _rhs(op, modules)
    try:
        node = ast.parse(rhs, mode="eval").body
    except SyntaxError:  # a NumPy subscript assignment's pseudo-call, ``assign(y, 1:, t)``
        node = None
    if not isinstance(node, (ast.Call, ast.Name, ast.Constant, ast.Subscript)):
        rhs = f"({rhs})"
    arg = op.args[operand]
    name = arg.name if isinstance(arg, ir.Value) else repr(arg)
    return f"∂{rhs}/∂{name}"


def _rhs(op: ir.Op, modules: dict[str, str]) -> str:
    if op.prim == "item":
        return f"{op.args[0].name}[{op.args[1].value}]"
    if op.callee is not None:
        args = ", ".join(a.name if isinstance(a, ir.Value) else repr(a) for a in op.args)
        return f"{op.callee.name}({args})"
    rule = RULES[op.prim]
    attrs = getattr(op, "attrs", None)
    if attrs is None:
        return ast.unparse(instantiate(rule.forward_ast, op.args, None, modules))
    # an op with attributes (``axis=``): fill them in as the forward pass does
    return ast.unparse(instantiate(rule.forward_ast, op.args, None, modules,
                                   attrs={**dict(rule.attrs), **attrs}, given=attrs))


def straight_line(func: ir.Function) -> None:
    """:func:`read` takes straight-line functions; loops and branches are
    read by :func:`s2s_ad.sweep_control.read`."""
    for op in func.body.ops:
        if not isinstance(op, ir.Op) or (op.prim not in RULES and op.callee is None
                                         and op.prim != "item"):
            kind = op.prim if isinstance(op, ir.Op) else type(op).__name__.lower()
            raise SweepError(f"sweep.read takes straight-line functions, not this `{kind}` "
                             f"(line {op.loc.line}); sweep_control.read reads loops and branches")


def read(func: ir.Function, code: CodeFunction) -> Sweep:
    """The reverse sweep of ``code`` (made from ``func``) as steps and adjoints."""
    straight_line(func)
    marks = [i for i, s in enumerate(code.body) if s.node is None and s.comment == "reverse sweep"]
    reverse = [s for s in code.body[marks[0] + 1:] if s.node is not None] if marks else []
    by_op: dict[tuple[int, int | None], list[Stmt]] = {}
    seed_steps = []
    for s in reverse:
        if s.origin is None:
            if not (isinstance(s.node, ast.Assign) and isinstance(s.node.targets[0], ast.Name)
                    and s.node.targets[0].id == code.seed):
                text = ast.unparse(ast.fix_missing_locations(copy.deepcopy(s.node)))
                raise SweepError(f"a reverse statement without a forward op: {text}")
            seed_steps.append(s)
            continue
        by_op.setdefault((id(s.origin), s.operand), []).append(s)
    forward = {v.name: v for v in func.scalars(func.param_values)}
    forward.update({op.out.name: op.out for op in func.body.ops})

    adjoints: dict[tuple[int, int | None], Adjoint] = {}
    order: list[Adjoint] = []
    has: set[int] = set()

    def adjoint(v: ir.Value, item: int | None = None, name: str = "") -> Adjoint:
        key = (id(v), item)
        if key not in adjoints:
            adjoints[key] = Adjoint(v, name or code.adjoints[v.name], item=item)
            order.append(adjoints[key])
            has.add(id(v))
        return adjoints[key]

    result = func.result
    if isinstance(result, ir.Value) and result.name in code.adjoints:
        adjoint(result).seeded = True

    steps: list[Step] = []
    used: set[int] = set()
    for op in reversed(func.body.ops):
        if id(op.out) not in has:
            continue
        stmts = by_op.get((id(op), None), [])
        if op.callee is not None:
            new = _call_steps(op, stmts, code)
        elif op.prim == "item":
            new = [_item_step(op, stmts, adjoint, adjoints[(id(op.out), None)].name)]
        else:
            new = _op_steps(op, by_op, code, adjoints[(id(op.out), None)].name, forward)
        if op.callee is None and op.prim != "item":
            # every statement of the op's adjoint (NumPy's indexing takes several)
            used |= {id(s) for (oid, _), ss in by_op.items() if oid == id(op) for s in ss}
        for step in new:
            used |= {id(s) for s in (step.stmt, step.add) if s is not None}
            steps.append(step)
            adjoint(step.value, step.item, step.contrib if step.item is not None else "") \
                .steps.append(step)
    # An array result's seed takes the result's shape first (no op of its own).
    used |= {id(s) for s in reverse if s.origin is None}
    left = [ast.unparse(ast.fix_missing_locations(copy.deepcopy(s.node))) for s in reverse
            if id(s) not in used and s not in seed_steps]
    if left:
        raise SweepError(f"reverse statements the IR does not explain: {left}")
    return Sweep(func, code, steps, order, seed_steps)


def _item_step(op: ir.Op, stmts: list[Stmt], adjoint, g: str) -> Step:
    """``p = t[k]``: ``p``'s adjoint becomes that of item ``k`` of ``t``
    (no code); a second read of the item adds, in a fresh variable."""
    tup, k = op.args[0], op.args[1].value
    step = Step(op, 0, tup, "1", None, item=k, contrib=g)
    if stmts:
        (add,) = stmts
        step.add = add
        # the item's adjoint is the sum's variable from here on
        adjoint(tup, k, g).name = add.node.targets[0].id
    return step


def _op_steps(op: ir.Op, by_op: dict, code: CodeFunction, g: str,
              forward: dict[str, ir.Value]) -> list[Step]:
    steps = []
    rule = RULES[op.prim]
    for i, arg in enumerate(op.args):
        if not rule.flows(i) or not isinstance(arg, ir.Value) or arg.name not in code.adjoints:
            continue
        partial = rule.partial_asts[min(i, len(rule.partial_asts) - 1)]
        stmts = by_op.get((id(op), i), [])
        if not stmts:
            # The reverse transform lets a temporary share its consumer's
            # adjoint when the local derivative is 1: nothing is computed.
            local = simplify(instantiate(partial, op.args, op.out, code.source.modules))
            text = ast.unparse(local)
            if isinstance(local, ast.Call) and isinstance(local.func, ast.Name) \
                    and local.func.id == "spread":
                # a sum's adjoint left unspread: its operand's one use broadcasts it
                text = rule.math
            if code.adjoints[arg.name] != g:
                raise SweepError(f"no statement differentiates {op} by operand {i}")
            steps.append(Step(op, i, arg, text, None))
        else:
            # NumPy's indexing adjoints take several statements (a fresh
            # array, then the scatter into it): the step shows the last.
            stmt = stmts[-1]
            reads: list[ir.Value] = []
            for s in stmts:
                node = s.node.value if hasattr(s.node, "value") else s.node
                reads += [v for v in _ordered_reads(node, forward) if v not in reads]
                # the index of ``dx[i] += g`` is read too
                target = s.node.target if isinstance(s.node, ast.AugAssign) else \
                    s.node.targets[0] if isinstance(s.node, ast.Assign) else None
                if isinstance(target, ast.Subscript):
                    reads += [v for v in _ordered_reads(target.slice, forward) if v not in reads]
            steps.append(Step(op, i, arg, stmt.partial, stmt, reads, stmts=list(stmts)))
    return steps


def _added(node: ast.stmt) -> str | None:
    """The temporary an accumulation adds: ``dx += dx_1`` or ``dx = dx + dx_1``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.value, ast.Name):
        return node.value.id
    if (isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.op, ast.Add) and isinstance(node.value.right, ast.Name)):
        return node.value.right.id
    return None


def _call_steps(op: ir.Op, stmts: list[Stmt], code: CodeFunction) -> list[Step]:
    """``dx, dx_1 = h_bwd(t_tape, dt)`` then ``dx += dx_1``: one step per
    active operand, all applied by the one call of the callee's backward pass."""
    calls = [s for s in stmts if isinstance(s.node, ast.Assign)
             and isinstance(s.node.value, ast.Call)]
    if len(calls) != 1:
        raise SweepError(f"expected one backward call for {op}, found {len(calls)}")
    call = calls[0]
    targets = call.node.targets[0].elts
    tape = call.node.value.args[0].id
    bwd = call.node.value.func.id
    cot = call.node.value.args[1]
    if isinstance(cot, ast.Tuple):
        cotangent = [(k, e.id) for k, e in enumerate(cot.elts) if isinstance(e, ast.Name)]
    else:
        cotangent = [(None, cot.id)]
    adds = {_added(s.node): s for s in stmts if _added(s.node) is not None}
    params = param_names(op)
    g = ", ".join(name for _, name in cotangent)
    steps = []
    for i, arg in enumerate(op.args):
        if not isinstance(arg, ir.Value) or arg.name not in code.adjoints:
            continue
        name = targets[i].id
        steps.append(Step(op, i, arg, f"{g} · ∂{op.out.name}/∂{params[i]} by {bwd}", call,
                          contrib=name, add=adds.get(name), tape=tape, cotangent=cotangent))
    return steps


def _ordered_reads(node: ast.expr, forward: dict[str, ir.Value]) -> list[ir.Value]:
    """The forward values ``node`` reads, each once, in reading order."""
    out: list[ir.Value] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in forward and forward[n.id] not in out:
            out.append(forward[n.id])
    return out
