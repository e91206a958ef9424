"""The generated program, before it becomes text.

The reverse transform produces a :class:`CodeFunction`: Python ``ast``
statements, each with the comment that ties it to the user's source and,
for reverse-sweep statements, the forward op and operand it differentiates
(used by ``s2s-ad explain`` and the graph pictures). :mod:`s2s_ad.emit`
turns it into text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.rules import RULES
from s2s_ad.rules.templates import const_expr
from s2s_ad.syntax_walk import child_fields, walk


def call(name: str, args: list, keywords=()) -> ast.Call:
    """``name(*args, **keywords)`` with ``name`` dotted (``np.zeros_like``,
    ``dxs.pop``): the call the generated code makes."""
    head, *rest = name.split(".")
    func: ast.expr = ast.Name(head, ast.Load())
    for part in rest:
        func = ast.Attribute(func, part, ast.Load())
    return ast.Call(func, args, list(keywords))


def name_nodes(node: ast.AST) -> list[ast.Name]:
    """The ``ast.Name`` nodes in ``node`` (``ast.walk`` filtered, without its
    generator machinery: the passes over generated statements call this on
    every statement)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is ast.Name:
            out.append(n)
            continue
        for name in child_fields(n):  # (not the contexts, names or numbers)
            v = getattr(n, name, None)
            if isinstance(v, ast.AST):
                stack.append(v)
            elif isinstance(v, list):
                stack.extend([x for x in v if isinstance(x, ast.AST)])
    return out



def may_be_infinite(node: ast.AST) -> bool:
    """Whether a local derivative in ``node`` may be infinite where its op's
    value is finite: it divides, raises to a power or calls a function (a
    root, a logarithm, ...). An over-approximation: code guarded for it
    costs a test, no more."""
    for n in walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.Pow, ast.FloorDiv,
                                                          ast.Mod)):
            return True
        if isinstance(n, ast.Call):
            return True
    return False

@dataclass(eq=False)
class Stmt:
    """One simple statement. ``node`` None makes a comment-only line."""

    node: ast.stmt | None
    comment: str = ""
    origin: ir.Op | None = None
    """The forward op this statement computes or differentiates."""
    operand: int | None = None
    """For a reverse statement: which operand of ``origin`` it differentiates."""
    partial: str = ""
    """For a reverse statement: the local derivative, in the user's names."""
    target: str = ""
    """For a reverse statement: the adjoint it sets or adds to."""
    unpacks: str = ""
    """For ``xs_0, xs_1 = xs``: the sequence parameter it unpacks."""
    role: str = ""
    """For a reverse statement that moves adjoints or values instead of
    applying a local derivative, inside or around a branch or loop: "zero"
    (an adjoint starts at 0 before it), "phi" (a branch side's value takes
    the adjoint of the φ it fed), "carry" (a carried value's adjoint, into
    or out of an iteration), "init" (after the loop, to the value the
    carried one started as), "pop" (a forward value from its tape),
    "inplace" (an adjoint created once and then added to in place),
    "restore" (elements of an array written in place put back),
    "recompute" (a forward value computed again instead of taped)."""
    control: object = None
    """For a statement with a ``role``: the ``If``/``For``/``While`` it belongs to."""
    folded: "Stmt | None" = None
    """For ``dx = added_into(c, x, i, g)``: the statement, no longer written,
    whose contribution ``g`` (a read ``x[i]``) it adds into ``dx[i]``
    (:mod:`s2s_ad.reverse.scatters`); ``explain`` and ``graph`` show both."""


@dataclass(eq=False)
class Block:
    """A compound statement: ``head`` is an ``ast.For``/``ast.While``/``ast.If``
    whose own body is ignored; ``body`` (and ``orelse`` for ``if``) hold the
    nested statements."""

    head: ast.stmt
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)
    comment: str = ""
    origin: object = None
    """In a reverse sweep: the forward ``If``/``For``/``While`` it reverses."""

    @property
    def node(self) -> ast.stmt:
        """The whole statement as one ``ast`` node (for analyses over names)."""
        head = self.head
        body = [n for n in (s.node for s in self.body) if n is not None] or [ast.Pass()]
        orelse = [n for n in (s.node for s in self.orelse) if n is not None]
        if isinstance(head, ast.If):
            return ast.If(head.test, body, orelse)
        if isinstance(head, ast.For):
            return ast.For(head.target, head.iter, body, [], None)
        return ast.While(head.test, body, [])


class LoopRecord(tuple):
    """``(line, header text, names of the values taped per iteration)`` of
    one loop, with ``info``: the kinds of those values (``"kinds"``) and, for
    a checkpointed loop, its plan (``"plan"``, s2s_ad.reverse.checkpoint)."""

    info: dict

    def __new__(cls, line: int, text: str, names: list, info: dict):
        record = super().__new__(cls, (line, text, names))
        record.info = info
        return record


@dataclass(eq=False)
class CodeFunction:
    name: str
    args: ast.arguments
    body: list[Stmt]
    returns: ast.expr
    source: ir.Function
    wrt: list[ir.Value]
    adjoints: dict[str, str] = field(default_factory=dict)
    """SSA value name -> its adjoint's name."""
    tape: list[ir.Value] = field(default_factory=list)
    """Forward values the reverse sweep reads."""
    seed: str = ""
    imports: list[str] = field(default_factory=list)
    """Import lines the body needs beyond the modules of ``source`` (user rules)."""
    header: str = ""
    """A comment shown above the ``def``."""
    role: str = "gradient"
    """"gradient", or "fwd"/"bwd" for the pair of a called function."""
    helpers: dict[str, str] = field(default_factory=dict)
    """Module-level functions the body calls (NumPy's ``unbroadcast``): name -> source."""
    loops: list = field(default_factory=list)
    """Per loop (line, header text, values pushed per iteration): what the
    forward pass records for the reverse sweep."""
    lists: dict[str, str] = field(default_factory=dict)
    """Array name -> the Python list of its elements a reverse loop runs on
    (:mod:`s2s_ad.reverse.element_lists`)."""
    temps: set[str] = field(default_factory=set)
    """Names of temporaries: values, tangents and adjoints of values the user
    did not name (:mod:`s2s_ad.emit.fuse` writes them inside their reader)."""


def while_block(cond: list, test: ast.expr, body: list, comment: str) -> Block:
    """``while test: body``, or, when the condition needs statements of its
    own (``cond``), ``while True: cond; if not test: break; body``."""
    if cond:
        stop = Block(ast.If(ast.UnaryOp(ast.Not(), test), [], []), [Stmt(ast.Break())])
        return Block(ast.While(ast.Constant(True), [], []), cond + [stop] + body, [], comment)
    return Block(ast.While(test, [], []), body, [], comment)


def unpack_params(func: ir.Function) -> list[Stmt]:
    """``xs_0, xs_1 = xs`` for each sequence parameter: it names the items
    and checks, at run time, that the sequence has the length the code was
    generated for (:func:`s2s_ad.optimize.drop_unused_items` turns it into a
    bare length check when no item name is read)."""
    out = [static_guard(func, p) for p in func.params if p.value.var in func.statics]
    for p in func.params:
        if p.value.var in func.not_none:
            error = ast.Call(ast.Name("ValueError", ast.Load()),
                             [ast.Constant(f"generated for {p.value.var} not None")], [])
            test = ast.Compare(ast.Name(p.value.name, ast.Load()), [ast.Is()],
                               [ast.Constant(None)])
            out.append(Stmt(ast.If(test, [ast.Raise(error, None)], []),
                            "`is None` was decided for a value"))
    for p in func.params:
        if p.tree is not None:
            at = ast.Name(p.value.name, ast.Load())
            out += [_length_test(n, e) for n, e in tree_lengths(p.tree, at)]
            out += [_static_test(value, e) for value, e in tree_statics(p.tree, at)]
            leaves = tree_leaves(p.tree, at)
            out += [Stmt(ast.Assign([ast.Name(v.name, ast.Store())], e), f"a leaf of {p.value.var}")
                    for v, e in leaves]
            out += _number_tests(func, [(v, ast.unparse(e)) for v, e in leaves])
            continue
        if p.items is None:
            continue
        target = ast.Tuple([ast.Name(v.name, ast.Store()) for v in p.items], ast.Store())
        if not p.items:
            target = ast.List([], ast.Store())
        out.append(Stmt(ast.Assign([target], ast.Name(p.value.name, ast.Load())),
                        f"{p.value.var} has {len(p.items)} items", unpacks=p.value.name))
        out += _number_tests(func, [(v, f"{p.value.var}[{i}]") for i, v in enumerate(p.items)])
    return out


def _number_tests(func: ir.Function, leaves: list) -> list[Stmt]:
    """``if isinstance(p_w, np.ndarray): raise TypeError(...)`` for each leaf
    (or item) of a structure the NumPy code was generated to read as a
    number: its adjoint is a number, which for an array would be its sum."""
    alias = func.modules.get("numpy")
    if alias is None:
        return []
    out = []
    for v, where in leaves:
        if v.kind not in ("float", "int"):
            continue
        test = ast.Call(ast.Name("isinstance", ast.Load()),
                        [ast.Name(v.name, ast.Load()),
                         ast.Attribute(ast.Name(alias, ast.Load()), "ndarray", ast.Load())], [])
        error = ast.Call(ast.Name("TypeError", ast.Load()), [ast.Constant(
            f"generated for a number at {where}, given an array; generate the code for "
            "an example holding an array there")], [])
        out.append(Stmt(ast.If(test, [ast.Raise(error, None)], []),
                        "a number leaf: the code is for a number there"))
    return out


def static_guard(func: ir.Function, p: ir.Param) -> Stmt:
    """``if mode != 'l2': raise ValueError(...)``: the code was generated for
    one value of a static argument (a string, None or a bool) and is not
    run with another."""
    value = func.statics[p.value.var]
    if isinstance(value, ir.FunctionDefault):  # `act=np.tanh`: `if act is not np.tanh: raise`
        fn = default_expr(value, func.modules)
        test = ast.Compare(ast.Name(p.value.name, ast.Load()), [ast.IsNot()], [fn])
        error = ast.Call(ast.Name("TypeError", ast.Load()), [ast.Constant(
            f"generated for {p.value.var}={ast.unparse(fn)}, its default; differentiate a "
            f"function calling it with another (`lambda ...: {func.name}(..., "
            f"{p.value.var}=other)`)")], [])
        return Stmt(ast.If(test, [ast.Raise(error, None)], []),
                    "a function parameter: the code is for its default")
    return _static_test(value, ast.Name(p.value.name, ast.Load()),
                        "a static argument: the code is for this value")


def default_expr(value, modules: dict[str, str]) -> ast.expr:
    """A parameter's default as generated code: a constant, or a library
    function named through its module's alias (``np.tanh``)."""
    if isinstance(value, ir.FunctionDefault):
        return ast.Attribute(ast.Name(modules[value.module], ast.Load()), value.name, ast.Load())
    return const_expr(value, modules)


def _static_test(value, at: ast.expr,
                 why: str = "a static value in a structure: the code is for this value") -> Stmt:
    """``if <at> != value: raise ValueError(...)`` (``is not`` for None and
    bools; ``!=`` for a tuple of ints, which a list never equals): ``at``
    reads a static argument, or a static leaf of a structure
    (``layers[0].act``), the code was generated for ``value`` of."""
    op = ast.NotEq() if isinstance(value, (str, tuple)) else ast.IsNot()
    test = ast.Compare(at, [op], [ast.Constant(value)])
    message = f"generated for {ast.unparse(at)}={value!r}"
    error = ast.Call(ast.Name("ValueError", ast.Load()), [ast.Constant(message)], [])
    return Stmt(ast.If(test, [ast.Raise(error, None)], []), why)


def _length_test(n: int, at: ast.expr) -> Stmt:
    """``if len(<at>) != n: raise ValueError(...)``: the code reads ``n`` items
    (keys) of a list, tuple or dict of a structure parameter, and would
    leave out any other."""
    test = ast.Compare(ast.Call(ast.Name("len", ast.Load()), [at], []), [ast.NotEq()],
                       [ast.Constant(n)])
    message = f"generated for {ast.unparse(at)} of length {n}"
    error = ast.Call(ast.Name("ValueError", ast.Load()), [ast.Constant(message)], [])
    return Stmt(ast.If(test, [ast.Raise(error, None)], []),
                "a structure: the code is for this length")


def tree_lengths(tree, at: ast.expr) -> list:
    """``(length, expression)`` for each list, tuple and dict of a structure
    parameter's tree (not a NamedTuple's or dataclass's fields: its class
    fixes them)."""
    if tree[0] in ("leaf", "static"):
        return []
    out = []
    if tree[0] == "dict":
        out.append((len(tree[1]), at))
        for key, sub in tree[1]:
            out += tree_lengths(sub, ast.Subscript(at, ast.Constant(key), ast.Load()))
    elif tree[0] in ("list", "tuple"):
        out.append((len(tree[1]), at))
        for i, sub in enumerate(tree[1]):
            out += tree_lengths(sub, ast.Subscript(at, ast.Constant(i), ast.Load()))
    else:
        for name, sub in tree[2]:
            out += tree_lengths(sub, ast.Attribute(at, name, ast.Load()))
    return out


def tree_statics(tree, at: ast.expr) -> list:
    """``(value, expression reading it from at)`` for each static leaf (a
    string, None or bool) of a structure parameter's tree."""
    return [(t[1], e) for t, e in _tree_ends(tree, at) if t[0] == "static"]


def tree_leaves(tree, at: ast.expr) -> list:
    """``(leaf value, expression reading it from at)`` for each leaf of a
    structure parameter's tree (:attr:`s2s_ad.ir.Param.tree`)."""
    return [(t[1], e) for t, e in _tree_ends(tree, at) if t[0] == "leaf"]


def _tree_ends(tree, at: ast.expr) -> list:
    """``(node, expression reading it from at)`` for each leaf and static
    leaf of a tree, in order."""
    if tree[0] in ("leaf", "static"):
        return [(tree, at)]
    out = []
    if tree[0] == "dict":
        for key, sub in tree[1]:
            out += _tree_ends(sub, ast.Subscript(at, ast.Constant(key), ast.Load()))
    elif tree[0] in ("list", "tuple"):
        for i, sub in enumerate(tree[1]):
            out += _tree_ends(sub, ast.Subscript(at, ast.Constant(i), ast.Load()))
    else:
        for name, sub in tree[2]:
            out += _tree_ends(sub, ast.Attribute(at, name, ast.Load()))
    return out


def tree_value(tree, at: ast.expr, leaf) -> ast.expr:
    """The structure of ``tree`` with each leaf replaced by ``leaf(value, at)``
    (``at`` the expression reading it from the argument):
    a dict, list or tuple literal, and for a dataclass or NamedTuple
    ``type(at)(field=..., ...)``, an instance of the argument's own class."""
    if tree[0] == "leaf":
        return leaf(tree[1], at)
    if tree[0] == "static":  # the argument's own value, as it was given
        return at
    if tree[0] == "dict":
        return ast.Dict([ast.Constant(k) for k, _ in tree[1]],
                        [tree_value(sub, ast.Subscript(at, ast.Constant(k), ast.Load()), leaf)
                         for k, sub in tree[1]])
    if tree[0] in ("list", "tuple"):
        items = [tree_value(sub, ast.Subscript(at, ast.Constant(i), ast.Load()), leaf)
                 for i, sub in enumerate(tree[1])]
        return ast.List(items, ast.Load()) if tree[0] == "list" else ast.Tuple(items, ast.Load())
    cls = ast.Call(ast.Name("type", ast.Load()), [at], [])
    return ast.Call(cls, [], [ast.keyword(name, tree_value(sub, ast.Attribute(at, name, ast.Load()),
                                                             leaf))
                              for name, sub in tree[2]])


def reverse_comment(op: ir.Op, i: int, arg: ir.Value, partial: str) -> str:
    """The comment of a reverse statement: the source line and op, and the
    local derivative it applies (or, for array rules given as whole
    adjoints, which operand it is for)."""
    if op.callee is None and RULES[op.prim].adjoint:
        return f"line {op.loc.line}: {op.text}, adjoint to {arg.name}"
    side = ""
    if sum(1 for a in op.args if a is arg) > 1:
        side = " (left operand)" if i == 0 else " (right operand)"
    # A temporary's name appears nowhere in the generated code: name only
    # the user's variables in the derivative.
    of = op.out.name if op.out.var is not None else ""
    return f"line {op.loc.line}: {op.text}, ∂{of}/∂{arg.name} = {partial}{side}"


def parameter(v: ir.Value) -> ast.arg:
    """A generated function's parameter for the user's ``v``: annotated
    ``int`` where ``v`` is one (``n: int`` in NumPy code), so that the module
    read back knows it as the function did (``[0.0] * n``, an index)."""
    return ast.arg(v.name, ast.Name("int", ast.Load()) if v.kind == "int" else None)


def signature(func: ir.Function, seed: str) -> ast.arguments:
    """The user's signature, defaults included, plus ``*, seed=1.0``."""
    positional = [p for p in func.params if not p.kwonly]
    kwonly = [p for p in func.params if p.kwonly]
    defaults = [default_expr(p.default, func.modules) for p in positional if p.has_default]
    kw_defaults = [default_expr(p.default, func.modules) if p.has_default else None
                   for p in kwonly]
    return ast.arguments(
        posonlyargs=[], args=[parameter(p.value) for p in positional], vararg=None,
        kwonlyargs=[parameter(p.value) for p in kwonly] + [ast.arg(seed)],
        kw_defaults=kw_defaults + [ast.Constant(1.0)], kwarg=None, defaults=defaults)


def check_statement(op: ir.Op, exprs: list[ast.expr], modules: dict) -> Stmt:
    """``if c: raise E(message)`` for a ``check`` op (``if not c`` for an
    ``assert``), ``exprs`` the expressions of its operands: the condition,
    then the values its message formats (:mod:`s2s_ad.frontend.checks`)."""
    cond = exprs[0]
    cls = op.attrs.get("isinstance")
    if cls is not None:  # `isinstance` decided for this class (frontend/conditions.py)
        module, _, name = cls.rpartition(".")
        what: ast.expr = ast.Name(name, ast.Load()) if not module else \
            ast.Attribute(ast.Name(modules.get(module, module), ast.Load()), name, ast.Load())
        cond = ast.Call(ast.Name("isinstance", ast.Load()), [cond, what], [])
    if op.attrs.get("negate"):
        cond = negated(cond)
    exc: ast.expr = ast.Name(op.attrs["exc"], ast.Load())
    parts = op.attrs.get("message")
    if parts is not None:
        exc = ast.Call(exc, [_formatted(parts, exprs[1:])], [])
    elif op.attrs.get("called"):
        exc = ast.Call(exc, [], [])
    return Stmt(ast.If(cond, [ast.Raise(exc, None)], []), f"line {op.loc.line}: {op.text}", op)


_OPPOSITES = {ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
              ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def negated(cond: ast.expr) -> ast.expr:
    """``not cond``, written ``a not in b`` (``!=``, ``is not``) where ``cond``
    is one such comparison."""
    if isinstance(cond, ast.Compare) and len(cond.ops) == 1 \
            and type(cond.ops[0]) in _OPPOSITES:
        return ast.Compare(cond.left, [_OPPOSITES[type(cond.ops[0])]()], cond.comparators)
    return ast.UnaryOp(ast.Not(), cond)


def _formatted(parts: tuple, exprs: list[ast.expr]) -> ast.expr:
    """A string (one part) or an f-string: each part a string or ``(k,
    conversion, spec)`` formatting ``exprs[k]``."""
    pieces: list[ast.expr] = []
    for p in parts:
        if isinstance(p, str):
            pieces.append(ast.Constant(p))
            continue
        k, conv, spec = p
        pieces.append(ast.FormattedValue(
            exprs[k], {"": -1, "s": 115, "r": 114, "a": 97}[conv],
            ast.JoinedStr([ast.Constant(spec)]) if spec else None))
    if len(pieces) == 1 and isinstance(pieces[0], ast.Constant):
        return pieces[0]
    return ast.JoinedStr(pieces)


def effect_statement(op: ir.Op, exprs: list[ast.expr], modules: dict) -> Stmt:
    """The statement of an op of :data:`s2s_ad.ir.EFFECTS`: a check, or
    ``print(...)`` of its arguments (each a constant text, a value, or an
    f-string), with its ``sep``/``end``."""
    if op.prim == "check":
        return check_statement(op, exprs, modules)
    args = [ast.Constant(a) if isinstance(a, str) else
            exprs[a] if isinstance(a, int) else _formatted(a, exprs) for a in op.attrs["args"]]
    keywords = [ast.keyword(k, ast.Constant(op.attrs[k])) for k in ("sep", "end")
                if op.attrs.get(k) is not None]
    return Stmt(ast.Expr(ast.Call(ast.Name("print", ast.Load()), args, keywords)),
                f"line {op.loc.line}: {op.text}", op)
