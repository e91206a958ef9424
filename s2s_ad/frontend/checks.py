"""Input validation kept in the generated code: ``assert`` and ``if c: raise``;
``print``; ``:=``; ``match`` on a static value.

Contract: :func:`rewrite` normalises a function body (every nested statement
list) so that each ``raise`` the subset accepts stands alone in an ``if``
without ``else`` — a *check*:

* ``if c: raise E(...)`` followed by other arms (``elif``/``else``) becomes
  the check, then the other arms' statements; ``if c: A else: raise E(...)``
  becomes ``if not c: raise E(...)``, then ``A``;
* a ``raise`` ending a chain of ``if``/``elif`` arms that all ``return``
  becomes the missing ``else`` of that chain (then the rule above);
* ``match`` on a static value becomes the ``if``/``elif`` chain of its
  cases (:func:`_match_chain`).

:func:`lower` turns a check, and an ``assert``, into one ``check`` op
(operands: the condition, then the values its message formats) that raises
the same exception with the same message when the original would; it has
no derivative and no result, and every forward pass keeps it (and the loops,
branches and calls that hold it). What is left — a bare ``raise``, ``raise
... from``, exceptions other than Python's own, messages other than a string
or an f-string — is refused, located. ``try`` stays refused.

``print(...)`` as a statement is a ``print`` op, kept likewise (once per
call: not in the reruns of a checkpointed loop); a call to a function of
yours holding a check or a print, its result unused (``validate(x)``), is
lowered and kept. ``(name := value)`` binds ``name`` where it is evaluated;
where that may not happen on every path it is refused.

Before → after::

    if x < 0:                              t1 = lt x 0.0
        raise ValueError(f"neg: {x}")      check_1 = check t1 x exc='ValueError' ...
    assert y > 0, "y"                      generated: if t1: raise ValueError(f'neg: {x}')
"""

from __future__ import annotations

import ast
import builtins
import types

from s2s_ad import ir
from s2s_ad.frontend import index_checks, statics, structures
from s2s_ad.syntax_walk import walk

_CONVERSIONS = {-1: "", 115: "s", 114: "r", 97: "a"}


def _only_raises(stmts: list[ast.stmt]) -> bool:
    return len(stmts) == 1 and isinstance(stmts[0], ast.Raise)


def is_check(stmt: ast.stmt) -> bool:
    """``if c: raise ...`` with no ``else`` (after :func:`rewrite`)."""
    return isinstance(stmt, ast.If) and not stmt.orelse and _only_raises(stmt.body)


def _always_returns(stmts: list[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _attach(chain: ast.If, tail: list[ast.stmt]) -> bool:
    """Make ``tail`` the missing ``else`` of an ``if``/``elif`` chain whose
    arms all return (each ``elif`` split again); False (nothing changed)
    otherwise."""
    if not _always_returns(chain.body):
        return False
    if not chain.orelse:
        chain.orelse = tail
        return True
    if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) \
            and _attach(chain.orelse[0], tail):
        chain.orelse = _split(chain.orelse[0])
        return True
    return False


def rewrite(src, stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The statements with checks split out (see the module docstring);
    nested statement lists are rewritten in place. Idempotent."""
    for s in stmts:
        _walrus_places(src, s)
    return _rewrite(src, stmts)


def _rewrite(src, stmts: list[ast.stmt]) -> list[ast.stmt]:
    # each statement list once (nested ones first): linear in the code's size
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(s, (ast.If, ast.For, ast.While)) or (field == "body"
                                                                and isinstance(s, ast.With)):
                setattr(s, field, _rewrite(src, getattr(s, field)))
    if len(stmts) >= 2 and isinstance(stmts[-1], ast.Raise) and isinstance(stmts[-2], ast.If):
        if _attach(stmts[-2], [stmts[-1]]):
            stmts = stmts[:-1]
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Match):
            out += _rewrite(src, [_match_chain(src, s)])
        elif isinstance(s, ast.If):
            out += _split(s)
        else:
            out.append(s)
    return out


def _split(s: ast.If) -> list[ast.stmt]:
    """An ``if`` whose arms are already rewritten, with an arm that only
    raises split into the check and the other arm's statements."""
    if s.orelse and _only_raises(s.body):
        return [ast.copy_location(ast.If(s.test, s.body, []), s)] + s.orelse
    if s.orelse and _only_raises(s.orelse) and not _only_raises(s.body):
        test = ast.copy_location(ast.UnaryOp(ast.Not(), s.test), s.test)
        return [ast.copy_location(ast.If(test, s.orelse, []), s.orelse[0])] + s.body
    return [s]


def _walrus_places(src, stmt: ast.stmt) -> None:
    """Refuse ``:=`` where it may not run, or runs again and again: in an
    operand of ``and``/``or`` after the first, an arm of ``x if c else y``,
    a comprehension, a lambda, a ``while`` test (its name would be bound on
    one path only)."""
    def refuse(node, where):
        for n in walk(node):
            if isinstance(n, ast.NamedExpr):
                raise src.error(n, f"`:=` {where} is not supported: assign the name in a "
                                "statement of its own before")
    for node in walk(stmt):
        if isinstance(node, ast.BoolOp):
            for v in node.values[1:]:
                refuse(v, "in an operand of `and`/`or` after the first")
        elif isinstance(node, ast.IfExp):
            refuse(node.body, "in an arm of a conditional expression")
            refuse(node.orelse, "in an arm of a conditional expression")
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp,
                               ast.Lambda)):
            refuse(node, "in a comprehension or a lambda")
        elif isinstance(node, ast.While):
            refuse(node.test, "in a `while` test")


def walrus(lo, node: ast.NamedExpr) -> ir.Operand:
    """``(name := value)``: ``value`` lowered and bound to ``name`` there,
    the expression's value (its places are checked by :func:`rewrite`)."""
    value = lo.expr(node.value, target=node.target)
    lo.assign(node.target, value, node.value)
    return value


# -- match on a static value --------------------------------------------------

def _match_chain(src, node: ast.Match) -> ast.stmt:
    """``match subject:`` as the ``if``/``elif`` chain of its cases; each
    test is marked as reading the subject, which must be static (a string,
    None or a bool: decided while lowering, see :func:`subject_checked`)."""
    subject = node.subject
    if not _pure(subject):
        raise src.error(subject, "`match` on an expression is not supported: match a "
                        "parameter or a variable (`match mode:`)")
    chain: list[ast.stmt] = []
    for case in reversed(node.cases):
        test = _pattern_test(src, subject, case.pattern)
        if case.guard is not None:
            test = ast.BoolOp(ast.And(), [test, case.guard]) if test is not None else case.guard
        body = case.body
        if test is None:  # `case _:`
            chain = body
            continue
        test = ast.copy_location(test, case.pattern)
        ast.fix_missing_locations(test)
        test.s2s_match = subject  # read by subject_checked
        chain = [ast.copy_location(ast.If(test, body, chain), case.pattern)]
    if not chain:
        return ast.copy_location(ast.Pass(), node)
    first = chain[0]
    if isinstance(first, ast.If):
        return first
    # only `case _:` — its body runs
    return ast.copy_location(ast.If(ast.copy_location(ast.Constant(True), node), chain, []),
                             node)


def _pure(e: ast.expr) -> bool:
    return isinstance(e, ast.Name) or (isinstance(e, ast.Attribute) and _pure(e.value))


def _pattern_test(src, subject: ast.expr, p: ast.pattern) -> ast.expr | None:
    def sub() -> ast.expr:
        return ast.copy_location(ast.parse(ast.unparse(subject), mode="eval").body, p)
    if isinstance(p, ast.MatchAs) and p.pattern is None and p.name is None:
        return None
    if isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Constant) \
            and isinstance(p.value.value, str):
        return ast.Compare(sub(), [ast.Eq()], [p.value])
    if isinstance(p, ast.MatchSingleton):
        return ast.Compare(sub(), [ast.Is()], [ast.Constant(p.value)])
    if isinstance(p, ast.MatchOr):
        tests = [_pattern_test(src, subject, q) for q in p.patterns]
        if any(t is None for t in tests):
            return None
        return ast.BoolOp(ast.Or(), tests)
    raise src.error(p, "this `case` pattern is not supported: `match` selects code on a "
                    "static value, with `case \"name\":`, `case None:`, `case True:`, "
                    "`case \"a\" | \"b\":` and `case _:`")


def subject_checked(lo, test: ast.expr) -> None:
    """Refuse a ``match`` whose subject is not static: its cases would be
    comparisons of numbers, which ``match`` does not make (``case 1.0:``
    would test equality of floats)."""
    subject = getattr(test, "s2s_match", None)
    if subject is None:
        return
    value = lo.expr(subject)
    if not (isinstance(value, ir.Const) and statics.is_static_value(value.value)):
        err = lo.src.error(subject, f"`match` on `{ast.unparse(subject)}`, a value computed "
                           "when the code runs, is not supported: `match` selects code on a "
                           "static value (a string, None or a bool); use `if`/`elif` "
                           "comparisons for numbers")
        if isinstance(subject, ast.Name) and value is lo.arguments.get(subject.id):
            raise statics.StaticUse(err)  # a call giving it a string gets code of its own
        raise err


def effect_call(lo, stmt: ast.Expr) -> None:
    """A call as a statement, its result unused: ``print(...)`` (kept, see
    :func:`_print`), or ``validate(x)``, a call to a function of yours that
    holds a check or a print (lowered, and kept by every forward pass);
    any other call is refused."""
    call = stmt.value
    if isinstance(call.func, ast.Name) and call.func.id == "print" and "print" not in lo.env \
            and "print" not in lo.local_fns and lo.resolve(call.func) is builtins.print:
        return _print(lo, call)
    name = call.func.id if isinstance(call.func, ast.Name) else None
    fn = lo.local_fns.get(name, lo.src.globals.get(name)) if name is not None else None
    if isinstance(fn, types.FunctionType) and name not in lo.env:
        mark = len(lo.ops)
        lo.expr(call)
        if any(isinstance(op, ir.Op) and op.callee is not None and op.callee.effects
               for op in lo.ops[mark:]):
            return None
    raise lo.src.error(stmt, f"`{ast.unparse(call.func)}(...)` is called for its side effect "
                       "(its result is unused): mutation, I/O and dynamic code are not "
                       "differentiable")


def _print(lo, call: ast.Call) -> None:
    """``print(...)`` kept in the forward pass (a ``print`` op): each
    argument a static value or constant (its text), a number or an array
    (printed when the code runs), or an f-string of them; ``sep``/``end``
    constant strings."""
    attrs: dict = {"args": []}
    values: list = []
    for k in call.keywords:
        if k.arg not in ("sep", "end") or not (isinstance(k.value, ast.Constant)
                                               and isinstance(k.value.value, (str, type(None)))):
            raise lo.src.error(k.value if k.arg else call, "`print` is kept with `sep=` and "
                               "`end=` constant strings only; remove the print (or this "
                               "argument)")
        attrs[k.arg] = k.value.value
    for a in call.args:
        if isinstance(a, ast.Starred):
            raise lo.src.error(a, "`print(*xs)` is not supported; remove the print or print "
                               "the items")
        if isinstance(a, ast.JoinedStr):
            parts, more = _message(lo, a)
            attrs["args"].append(tuple(p if isinstance(p, str) else (p[0] + len(values),) + p[1:]
                                       for p in parts))
            values += more
            continue
        value = lo.expr(a)
        if isinstance(value, ir.Const):
            attrs["args"].append(str(value.value))
        elif isinstance(value, ir.Value) and value.kind in ("float", "int", "bool", "array"):
            attrs["args"].append(len(values))
            values.append(value)
        else:
            raise lo.src.error(a, "`print` of numbers, arrays and static values is kept in the "
                               f"generated code; `{ast.unparse(a)}` is neither: remove the print")
    attrs["args"] = tuple(attrs["args"])
    out = ir.Value(lo.namer.fresh("printed"), "bool")
    op = ir.Op("print", tuple(values), out, lo.loc(call), ast.unparse(call), attrs=attrs)
    lo.ops.append(op)
    lo.defs[id(out)] = op


# -- lowering a check --------------------------------------------------------

def lower(lo, stmt: ast.stmt) -> None:
    """Lower an ``assert`` or a check (``if c: raise E(...)``) to a
    ``check`` op; a check decided while lowering (static values) that never
    raises is dropped."""
    if isinstance(stmt, ast.Assert):
        test, negate, exc, called, msg = stmt.test, True, "AssertionError", bool(stmt.msg), \
            stmt.msg
        where = stmt
    else:
        where = stmt.body[0]
        exc, called, msg = _exception(lo, where)
        test, negate = stmt.test, False
        subject_checked(lo, test)  # `case "x": raise ...` of a `match`
        _length_check(lo, test)
    own = None if isinstance(stmt, ast.Assert) else index_checks.read(lo, test)
    if own is not None:  # a check s2s-ad's own module makes around index arrays
        cond, negate = own
    else:
        cond = lo.condition(test, truthy=True)
    if isinstance(cond, ir.Const) and bool(cond.value) == negate:
        return  # decided: never raises
    parts, values = (None, []) if msg is None else _message(lo, msg)
    name = lo.namer.fresh("check")
    out = ir.Value(name, "bool")
    text = ast.unparse(stmt).splitlines()[0] if isinstance(stmt, ast.Assert) else \
        f"if {ast.unparse(test)}: {ast.unparse(where)}"
    op = ir.Op("check", (cond, *values), out, lo.loc(where), text,
               attrs={"exc": exc, "negate": negate, "called": called, "message": parts})
    lo.ops.append(op)
    lo.defs[id(out)] = op


def _length_check(lo, test: ast.expr) -> None:
    """``if len(xs) != N: raise ...`` on a list parameter lowered for any
    length (as s2s-ad's own per-length modules open): refused here, so the
    code is generated per length instead (:func:`s2s_ad.pipeline.lower_lists`),
    where the check is decided for each length."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], ast.NotEq) and isinstance(test.left, ast.Call) \
            and isinstance(test.left.func, ast.Name) and test.left.func.id == "len" \
            and len(test.left.args) == 1 and isinstance(test.left.args[0], ast.Name) \
            and isinstance(test.comparators[0], ast.Constant) \
            and structures.is_runtime(lo, lo.env.get(test.left.args[0].id)):
        raise lo.src.error(test, "a check of the length of a list parameter: the code is "
                           "generated per length")


def _exception(lo, node: ast.Raise) -> tuple:
    if node.cause is not None:
        raise lo.src.error(node, "`raise ... from ...` is not supported; raise the exception "
                           "alone")
    exc = node.exc
    if exc is None:
        raise lo.src.error(node, "a bare `raise` (re-raise) is not supported: `try` is not")
    call = isinstance(exc, ast.Call)
    func = exc.func if call else exc
    if not (isinstance(func, ast.Name) and _builtin_exception(lo, func.id)):
        raise lo.src.error(exc, "only Python's own exceptions (`ValueError`, `TypeError`, "
                           "`AssertionError`, ...) may be raised by a check: the generated "
                           "module names them without importing anything")
    if call and (exc.keywords or len(exc.args) > 1):
        raise lo.src.error(exc, "an exception raised by a check takes at most one argument, "
                           "its message (a string or an f-string)")
    msg = exc.args[0] if call and exc.args else None
    return func.id, call, msg


def _builtin_exception(lo, name: str) -> bool:
    if name in lo.src.globals or name in lo.env:
        return False  # shadowed by the module or a local
    cls = getattr(builtins, name, None)
    return isinstance(cls, type) and issubclass(cls, Exception)


def _message(lo, node: ast.expr) -> tuple[tuple, list]:
    """The message as parts (a string, or ``(k, conversion, spec)`` for the
    k-th value formatted) and the values it reads."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,), []
    if not isinstance(node, ast.JoinedStr):
        raise lo.src.error(node, "the message of a check must be a string or an f-string")
    parts, values = [], []
    for piece in node.values:
        if isinstance(piece, ast.Constant):
            parts.append(piece.value)
            continue
        spec = ""
        if piece.format_spec is not None:
            if not all(isinstance(p, ast.Constant) for p in piece.format_spec.values):
                raise lo.src.error(piece, "a format spec computed from values is not supported")
            spec = "".join(p.value for p in piece.format_spec.values)
        conv = _CONVERSIONS[piece.conversion]
        value = lo.expr(piece.value)
        if isinstance(value, ir.Const):
            text = {"s": str, "r": repr, "a": ascii}.get(conv, lambda v: v)(value.value)
            parts.append(format(text, spec))
            continue
        if not (isinstance(value, ir.Value) and value.kind in ("float", "int", "bool", "array")):
            raise lo.src.error(piece.value, "a check's message may format numbers and arrays; "
                               f"`{ast.unparse(piece.value)}` is neither")
        parts.append((len(values), conv, spec))
        values.append(value)
    return tuple(parts), values
