"""The reverse sweep as data: which local derivative feeds which adjoint.

Contract: :func:`read` takes the forward :class:`~s2s_ad.ir.Function` and the
:class:`~s2s_ad.code.CodeFunction` that :func:`s2s_ad.reverse.transform`
made from it, and returns a :class:`ControlSweep`: the generated reverse
sweep as a tree of :class:`Line` s, one per statement, in the order the
code runs them, a reverse loop or branch holding the lines of its body. Each
line says what it is (``kind``): a local derivative with the forward op and
operand it differentiates, a pop from the tape, an adjoint carried from one
iteration to the one before, … It is what ``s2s-ad explain`` prints and
``s2s-ad graph --backward`` draws; every statement of the sweep is
explained or :class:`SweepError` is raised.

Lines are read from the *final* code (after copy elimination), so the names
they write and read are the generated program's. An adjoint variable in a
loop holds the adjoints of several SSA values over time (``dx_1`` is the
adjoint of ``x`` at the start of each iteration); the lines keep that
variable, and the forward op each contribution comes from.

Before → after, for ``for i in range(n): x = r * x * (1.0 - x)``::

    dr = 0.0                        Line(zero, writes dr)
    for _ in range(n):              Line(loop, control=the For, body=[
        x_1 = x_1_tape.pop()            Line(pop, writes x_1),
        dt1 = dx_1 * t2                 Line(derivative, op x_2 = t1 * t2, operand 0),
        ...                             ...])
    dx = dx_1                       Line(init: x_1 started as x)
"""

from __future__ import annotations

import ast
import copy
import inspect
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.emit.code import Block, CodeFunction, Stmt
from s2s_ad.errors import S2SError
from s2s_ad.rules import RULES, forward_template
from s2s_ad.rules.templates import instantiate
from s2s_ad.reverse import element_lists, out_of_place
from s2s_ad.syntax_walk import walk


class SweepError(S2SError, AssertionError):
    """The generated code and the IR disagree: a bug in s2s-ad, never in user code."""


@dataclass(eq=False)
class Step:
    """One local derivative the reverse sweep applies, for showing it: the
    adjoint of ``op.out`` times ``∂op.out/∂op.args[operand]``, added to the
    adjoint of ``value``."""

    op: ir.Op
    operand: int
    value: ir.Value
    partial: str
    """The local derivative, in the generated code's names (``x``, ``math.cos(t1)``)."""
    stmt: Stmt | None = None

    @property
    def is_call(self) -> bool:
        return self.op.callee is not None

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
        return ast.unparse(instantiate(forward_template(op), op.args, None, modules))
    # an op with attributes (``axis=``): fill them in as the forward pass does
    return ast.unparse(instantiate(forward_template(op), op.args, None, modules,
                                   attrs={**dict(rule.attrs), **attrs}, given=attrs))


ROLES = ("zero", "phi", "carry", "init", "pop", "recompute", "inplace", "restore")


@dataclass(eq=False)
class Line:
    kind: str
    """"seed", "shape" (an array seed takes the result's shape), "derivative",
    "call" (a callee's backward pass), "add" (a call's contribution added to an
    adjoint that had one), "item" (a tuple item's adjoint read twice), one of
    :data:`ROLES`, "loop"/"if" for a reverse loop or branch, or "other" for a
    statement that says what it does only in its comment."""
    stmt: Stmt | None = None
    block: Block | None = None
    op: ir.Op | None = None
    """The forward op a derivative, call, add, item or recompute line comes from."""
    operand: int | None = None
    control: object = None
    """The forward ``If``/``For``/``While`` a loop, if or role line belongs to."""
    body: list["Line"] = field(default_factory=list)
    orelse: list["Line"] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    adds: bool = False
    """The line adds to ``writes[0]`` (``dx += e``, ``dx = dx + e``) instead of setting it."""
    expr: ast.expr | None = None
    """What it assigns or adds (``e``); for a loop or if, the head's iterable or test."""
    loops: list = field(default_factory=list)
    """The forward loops whose reverses hold this line, outermost first."""
    folded: bool = False
    """A contribution the statement before adds in (``added_into``), not a statement."""

    @property
    def reads(self) -> list[str]:
        """The names ``expr`` reads, each once, in reading order."""
        out: list[str] = []
        if self.expr is not None:
            for n in walk(self.expr):
                if isinstance(n, ast.Name) and n.id not in out:
                    out.append(n.id)
        return out

    @property
    def text(self) -> str:
        """The statement as the generated code writes it (a head without its body)."""
        if self.block is not None:
            head = self.block.head
            if isinstance(head, ast.For):
                return f"for {ast.unparse(head.target)} in {ast.unparse(head.iter)}:"
            return f"if {ast.unparse(head.test)}:"
        return statement_text(self.stmt.node)

    @property
    def contribution(self) -> str:
        return ast.unparse(self.expr) if self.expr is not None else ""


@dataclass(eq=False)
class ControlSweep:
    func: ir.Function
    code: CodeFunction
    lines: list[Line]
    seed: str
    """The result's adjoint ("" when the result does not depend on the parameters)."""
    values: dict[str, ir.Value]
    """SSA name -> value, for every value of the function."""

    def walk(self, lines: list[Line] | None = None):
        """Every line, nested ones included, in code order."""
        for line in self.lines if lines is None else lines:
            yield line
            yield from self.walk(line.body)
            yield from self.walk(line.orelse)

    @property
    def adjoint_names(self) -> set[str]:
        """Every adjoint variable of the sweep (what it writes besides forward values)."""
        out = {self.seed} if self.seed else set()
        for line in self.walk():
            if line.kind not in ("pop", "recompute", "restore"):
                out.update(line.writes)
        return out


def tape_of(line: Line) -> str:
    """The tape list a "pop" line reads: ``s = s_tape.pop()``, or
    ``s = s_tape[i]`` for a loop that keeps a slot per iteration."""
    e = line.expr
    return e.value.id if isinstance(e, ast.Subscript) else e.func.value.id


def statement_text(node: ast.stmt) -> str:
    """``dx, dx_1 = h_bwd(t, dt)`` / ``dx += dx_1`` as the generated code writes them."""
    if isinstance(node, ast.AugAssign):
        return f"{ast.unparse(node.target)} += {ast.unparse(node.value)}"
    if isinstance(node, ast.Expr):  # add_at(dx, idx, g): a scatter into dx
        return ast.unparse(node.value)
    target = node.targets[0]
    if isinstance(target, ast.Tuple):
        names = ", ".join(ast.unparse(e) for e in target.elts)
        lhs = names + ("," if len(target.elts) == 1 else "")
    else:
        lhs = ast.unparse(target)
    value = node.value
    if isinstance(value, ast.Tuple) and value.elts:  # ``a, b = b, a``, as the code writes it
        return f"{lhs} = {', '.join(ast.unparse(e) for e in value.elts)}"
    return f"{lhs} = {ast.unparse(value)}"


def all_values(func: ir.Function) -> dict[str, ir.Value]:
    """SSA name -> value for the parameters and every value the body defines."""
    out = {v.name: v for v in func.param_values}
    out.update({v.name: v for v in func.scalars(func.param_values)})
    for node in ir.walk(func.body):
        for v in ir.defined(node):
            out[v.name] = v
        if isinstance(node, ir.For):
            out[node.index.name] = node.index
        if isinstance(node, (ir.For, ir.While)):
            out.update({c.name: c for c in node.carried})
    return out


def read(func: ir.Function, code: CodeFunction) -> ControlSweep:
    """The reverse sweep of ``code`` (made from ``func``) as a tree of lines."""
    marks = [i for i, s in enumerate(code.body)
             if isinstance(s, Stmt) and s.node is None and s.comment == "reverse sweep"]
    stmts = code.body[marks[0] + 1:] if marks else []
    # a loop run on lists of array elements is explained on the arrays
    stmts = element_lists.unlisted(stmts, code.lists)
    seed = code.seed if isinstance(func.result, ir.Value) and func.result.name in code.adjoints \
        else ""
    lines = [Line("seed", writes=[seed])] if seed else []
    lines += _lines(stmts, code, [])
    return ControlSweep(func, code, lines, seed, all_values(func))


def _lines(stmts: list, code: CodeFunction, loops: list) -> list[Line]:
    out = []
    for s in stmts:
        if isinstance(s, Block):
            out.append(_block(s, code, loops))
        elif s.node is not None:
            out.append(_line(s, code, loops))
            if s.folded is not None:
                out.append(_folded(s, code, loops))
    return out


def _folded(s: Stmt, code: CodeFunction, loops: list) -> Line:
    """The read ``x[i]`` whose adjoint ``g`` the statement ``dx =
    added_into(c, x, i, g)`` adds into ``dx[i]``: a line of its own, shown as
    ``dx[i] += g`` (what the helper does), after the contribution ``c``."""
    target, (_, _, index, g) = s.node.targets[0], s.node.value.args
    shown = copy.copy(s.folded)
    shown.node = ast.AugAssign(ast.Subscript(ast.Name(target.id, ast.Load()), index, ast.Store()),
                               ast.Add(), g)
    line = _line(shown, code, loops)
    line.folded = True
    return line


def _block(b: Block, code: CodeFunction, loops: list) -> Line:
    if b.origin is None:
        raise SweepError(f"a reverse block without its forward loop or branch: {b.comment}")
    if isinstance(b.head, ast.For):
        inner = loops + [b.origin]
        return Line("loop", block=b, control=b.origin, expr=b.head.iter, loops=loops,
                    body=_lines(b.body, code, inner))
    return Line("if", block=b, control=b.origin, expr=b.head.test, loops=loops,
                body=_lines(b.body, code, loops), orelse=_lines(b.orelse, code, loops))


def _line(s: Stmt, code: CodeFunction, loops: list) -> Line:
    node = s.node
    writes, adds, expr = _assignment(node)
    line = Line("", stmt=s, op=s.origin if isinstance(s.origin, ir.Op) else None,
                operand=s.operand, control=s.control, writes=writes, adds=adds, expr=expr,
                loops=loops)
    if s.role:
        line.kind = s.role
    elif line.op is None:
        # an array result's seed takes its shape; anything else is shown
        # with its comment
        line.kind = "shape" if writes == [code.seed] else "other"
    elif line.op.callee is not None:
        line.kind = "call" if isinstance(node.value, ast.Call) else "add"
    elif line.op.prim == "item":
        line.kind = "item"
    elif s.operand is None:
        raise SweepError(f"a reverse statement of {line.op} names no operand")
    else:
        line.kind = "derivative"
    return line


def _assignment(node: ast.stmt) -> tuple[list[str], bool, ast.expr | None]:
    """(names written, adds?, the expression assigned or added)."""
    if isinstance(node, ast.AugAssign):
        base = node.target.value if isinstance(node.target, ast.Subscript) else node.target
        return [base.id], True, node.value
    if isinstance(node, ast.Expr):  # add_at(dx, idx, g): adds g into dx
        call = node.value
        return [call.args[0].id], True, call
    target = node.targets[0]
    if isinstance(target, ast.Tuple):
        return [e.id for e in target.elts if isinstance(e, ast.Name)], False, node.value
    if isinstance(target, ast.Subscript):
        added = out_of_place.adds_to(node)  # ``dy[i] = dy[i] + g``: adds g
        return [target.value.id], True, node.value if added is None else added
    value = node.value
    if (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name) and value.left.id == target.id):
        # ``dW = dW + c`` (never in place on an array the caller may share)
        return [target.id], True, value.right
    return [target.id], False, value


def unparse(node: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(copy.deepcopy(node)))
