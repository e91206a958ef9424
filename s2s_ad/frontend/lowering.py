"""Frontend: Python ``ast`` → SSA IR.

Contract: :func:`lower` accepts a :class:`~s2s_ad.source.Source` whose
function lies in the supported subset (see ``docs/subset.md``) and returns an
:class:`~s2s_ad.ir.Function` in which every nested expression has become a
three-address op and every (re)assignment a new SSA value. Anything outside
the subset raises :class:`~s2s_ad.errors.SourceError` naming the construct,
the file, line and column. The subset is an allow-list: a node kind not
handled here is refused, never guessed at.

Before → after::

    def f(a, x):                func f(a, x):
        b = x * x       ──▶       b = mul x x
        y = a * b                 y = mul a b
        return y                  return y
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import numbers
import types

from s2s_ad import ir
from s2s_ad.frontend import pytrees, runtime_lists, structures, unroll
from s2s_ad.frontend.aliasing import InPlaceNames
from s2s_ad.errors import SourceError
from s2s_ad.frontend.numpy import ArrayLowering, numpy_use
from s2s_ad.frontend.control import RET, RETVAL, ControlFlow, always_returns
from s2s_ad.names import Namer, identifiers
from s2s_ad.rules import RULES
from s2s_ad.rules import user as user_rules
from s2s_ad.frontend.source import Source

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
          ast.Mod: "mod", ast.FloorDiv: "floordiv"}
UNARYOPS = {ast.USub: "neg", ast.UAdd: "pos"}
COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
BUILTIN_PRIMS = {builtins.abs: "abs", builtins.max: "max", builtins.min: "min",
                 builtins.float: "float", builtins.int: "int", builtins.round: "round",
                 builtins.pow: "pow", builtins.len: "len"}
BUILTIN_NAMES = {"abs", "max", "min", "float", "int", "round", "len", "range", "reversed",
                 "enumerate"}
MATH_CONSTANTS = {"pi", "e", "tau", "inf", "nan"}

# What each refused statement or expression is called in messages, and the
# way out where there is one.
REFUSED = {
    ast.Try: "`try` is not differentiable; move it outside the function you differentiate",
    ast.With: "`with` is not supported; move it outside the function you differentiate",
    ast.AsyncWith: "`async with` is not supported",
    ast.AsyncFor: "`async for` is not supported",
    ast.Global: "`global` is not supported: s2s-ad differentiates pure functions",
    ast.Nonlocal: "`nonlocal` is not supported: s2s-ad differentiates pure functions",
    ast.Yield: "generators (`yield`) are not supported",
    ast.YieldFrom: "generators (`yield from`) are not supported",
    ast.Await: "`await` is not supported",
    ast.Lambda: "`lambda` is not supported; define a helper with `def`",
    ast.FunctionDef: "nested function definitions are not supported; define helpers at module level",
    ast.ClassDef: "class definitions inside the function are not supported",
    ast.Import: "`import` inside the function is not supported; import at module level",
    ast.ImportFrom: "`import` inside the function is not supported; import at module level",
    ast.Delete: "`del` is not supported",
    ast.Raise: "`raise` is not supported inside a differentiated function",
    ast.Assert: "`assert` is not supported inside a differentiated function",
    ast.ListComp: "list comprehensions are not supported yet",
    ast.GeneratorExp: "generator expressions are not supported",
    ast.SetComp: "set comprehensions are not supported",
    ast.DictComp: "dict comprehensions are not supported",
    ast.List: "lists are not supported yet; s2s-ad differentiates scalar code",
    ast.Dict: "dicts are not supported yet",
    ast.Set: "sets are not supported",
    ast.Starred: "starred expressions are not supported",
    ast.JoinedStr: "f-strings are not supported",
    ast.NamedExpr: "assignment expressions (`:=`) are not supported",
    ast.Match: "`match` is not supported",
}


MAX_NESTING = 100
"""Deepest expression nesting lowered. Python's own printer (ast.unparse,
used for comments) recurses several frames per level, so a 500-term sum
``x + x + ... + x`` would exhaust the interpreter's stack; refusing it with a
location is better than a RecursionError from inside s2s-ad."""


def lower(src: Source, lengths: dict | None = None, arrays=()) -> ir.Function:
    """Lower ``src`` to SSA IR (see the module docstring).

    ``lengths`` maps parameters that receive a list or tuple to its length
    (an int, for a list) or ``(container, length)`` with container
    ``"list"`` or ``"tuple"``; each item becomes a scalar parameter value.
    ``arrays`` names the parameters that receive NumPy arrays: they are of
    kind ``"array"`` and the function is lowered as NumPy code, whether or
    not its source names NumPy (the caller's argument kinds decide, not the
    callee's text)."""
    _check_nesting(src)
    arrays = (arrays,) if isinstance(arrays, str) else arrays
    first = _Lowering(src, lengths, arrays)
    try:
        return first.function()
    except structures.SequenceParameter:
        raise
    except SourceError:
        if not first.unroll_skipped:
            raise
    # A loop over range(constant) that appends was lowered as a loop, and
    # something needs the list's length while lowering (a slice, unpacking):
    # unroll such loops, as before lists grew at run time.
    again = _Lowering(src, lengths, arrays)
    again.unroll_limit = unroll.UNROLL_LIMIT
    return again.function()


def names_numpy(src: Source) -> bool:
    """Whether the source of ``src``'s function uses NumPy (then its
    parameters are arrays unless annotated; see :mod:`s2s_ad.frontend_numpy`)."""
    return numpy_use(src)[1]


def _check_nesting(src: Source) -> None:
    """Refuse an expression nested deeper than MAX_NESTING (counted without recursion)."""
    for stmt in ast.walk(src.tree):
        if not isinstance(stmt, ast.stmt):
            continue
        stack = [(child, 1) for child in ast.iter_child_nodes(stmt) if isinstance(child, ast.expr)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_NESTING:
                raise src.error(stmt, f"this statement nests expressions more than {MAX_NESTING} "
                                "levels deep; split it into several assignments")
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Lowering(ArrayLowering, InPlaceNames, ControlFlow):
    def __init__(self, src: Source, lengths: dict | None = None, arrays=()):
        self.src = src
        self.checkpoint_marks: dict[int, int] = {}
        """id(ast loop) -> the snapshots a `with s2s_ad.checkpoint():` around it asks for."""
        self.lengths = dict(lengths or {})
        self.arrays = frozenset(arrays)
        self.tree = src.tree
        user_names = identifiers(self.tree)
        self.namer = Namer(avoid=user_names)
        self.env: dict[str, ir.Operand] = {}
        self.ops: list[ir.Op] = []
        self.modules: dict[str, str] = {}
        self.temps = 0
        self.call_values: set[int] = set()
        """ids of values returned by calls to user functions (they may be tuples)."""
        self.defs: dict[int, ir.Op] = {}
        self.param_ids: set[int] = set()
        self.integers: dict[str, SourceError] = {}
        self.undefined: dict[str, tuple] = {}
        self.loop_depth = 0
        self.region_depth = 0
        self.ret_mode = False
        self.seq_params: dict[int, ir.Param] = {}
        self.unroll_limit = unroll.SHORT_UNROLL
        """Most iterations of a range(constant) loop that appends unrolled."""
        self.unroll_skipped = False
        """Was a longer such loop lowered as a loop (a run-time list)?"""
        self.grown: set[int] = set()
        self.list_roots: dict[int, int] = {}
        """id(version of a run-time list) -> id of its list.new value: which list it is."""
        """ids of the versions of lists grown at run time (frontend/runtime_lists.py)."""

    # -- entry -------------------------------------------------------------

    def function(self) -> ir.Function:
        self.setup_numpy()
        params = self.parameters()
        # What each parameter is bound to on entry: writing into that very
        # object (``xs[0] = v``, ``xs.append(v)``) would change the caller's.
        self.arguments = {a.arg: self.env.get(a.arg) for a in self.tree.args.posonlyargs
                          + self.tree.args.args + self.tree.args.kwonlyargs}
        self.params_so_far = params
        self._params = params
        # Module aliases come after the parameters (whose names are fixed by
        # the signature) and before any local, so a local called `math`
        # is renamed rather than shadowing the module.
        self.modules["math"] = self.namer.claim("math")
        self.claim_numpy()
        for name in sorted(BUILTIN_NAMES):
            self.namer.taken.add(name)
        body = list(self.tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        while body and self.length_guard(body[0]):
            body = body[1:]
        # A `return` inside a branch or loop makes every return set the flags
        # `ret`/`result` (see lower_control); otherwise the last statement's
        # value is the result.
        nested = any(isinstance(n, ast.Return) and n is not stmt
                     for stmt in body for n in ast.walk(stmt))
        if nested:
            self.ret_mode = True
            self.env[RET] = ir.Const(False)
            self.env[RETVAL] = ir.Const(0.0)
        self.block(body)
        if not always_returns(body):
            raise self.src.error(self.tree, f"function {self.tree.name!r} must end with "
                                 "`return <scalar expression>` on every path")
        result = self.env[RETVAL]
        for op in ir.walk(ir.Region(self.ops)):
            if not isinstance(op, ir.Op):
                continue
            for a in op.args:
                if isinstance(a, ir.Value) and a.kind == "tuple" and op.prim not in ("item",
                                                                                    "getitem"):
                    raise SourceError(f"`{a.var or a.name}` holds the tuple a call returned; "
                                      "index it or unpack it before computing with it",
                                      op.loc.file, op.loc.line, op.loc.col,
                                      self.src.line(op.loc.line))
        loc = self.loc(self.tree)
        outputs = result if isinstance(result, tuple) else None
        func = ir.Function(self.tree.name, params, ir.Region(self.ops),
                           None if outputs is not None else result, loc,
                           modules=self.modules, names=frozenset(self.namer.taken),
                           outputs=outputs, integers=self.integers,
                           given_arrays=() if self.names_numpy else tuple(sorted(self.arrays)))
        ir.verify(func)
        return func

    def parameters(self) -> list[ir.Param]:
        args = self.tree.args
        if args.vararg is not None:
            raise self.src.error(args.vararg, "`*args` parameters are not supported")
        if args.kwarg is not None:
            raise self.src.error(args.kwarg, "`**kwargs` parameters are not supported")
        fn = self.src.fn
        positional = list(args.posonlyargs) + list(args.args)
        defaults = list(fn.__defaults__ or ())
        first_default = len(positional) - len(defaults)
        params = []
        for i, a in enumerate(positional):
            has = i >= first_default
            params.append(self.param(a, defaults[i - first_default] if has else None, has, False))
        kwdefaults = fn.__kwdefaults__ or {}
        for a in args.kwonlyargs:
            params.append(self.param(a, kwdefaults.get(a.arg), a.arg in kwdefaults, True))
        if self.lengths:
            raise SourceError(f"lengths names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, self.lengths))}")
        unknown = sorted(self.arrays - {p.value.var for p in params})
        if unknown:
            raise SourceError(f"arrays names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, unknown))}")
        return params

    def param(self, node: ast.arg, default, has_default: bool, kwonly: bool) -> ir.Param:
        if has_default and node.arg in self.lengths:
            raise self.src.error(node, f"parameter {node.arg!r} receives a list; it cannot have "
                                 "a default value")
        if has_default and not isinstance(default, numbers.Real):
            raise self.src.error(node, f"the default value of parameter {node.arg!r} is "
                                 f"{type(default).__name__}; only numeric defaults are supported")
        name = self.namer.claim(node.arg)
        shape = self.lengths.pop(node.arg, None)
        if isinstance(shape, tuple) and shape[0] == "tree":
            if pytrees.is_flat(shape[1]):
                shape = (shape[1][0], len(shape[1][1]))  # a list of leaves: as before
            else:
                param = pytrees.tree_param(self, node, name, shape[1], default, has_default,
                                           kwonly)
                self.param_ids.add(id(param.value))
                return param
        if shape is not None:
            param = structures.sequence_param(self, node, name, shape, default, has_default,
                                              kwonly)
            self.seq_params[id(self.env[node.arg])] = param
            self.param_ids.add(id(param.value))
            return param
        value = ir.Value(name, self.param_kind(node, default, has_default), node.arg)
        self.env[node.arg] = value
        self.param_ids.add(id(value))
        return ir.Param(value, default, has_default, kwonly)

    def length_guard(self, stmt: ast.stmt) -> bool:
        """Is ``stmt`` the check s2s-ad's generated code opens with, ``if
        len(xs) != N: raise ValueError(...)``, on a parameter lowered for
        exactly N items? Then the code generated from here is for N items
        too (and checks it again): the guard is kept by construction."""
        if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Raise)):
            return False
        test = stmt.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.NotEq) and isinstance(test.left, ast.Call)
                and isinstance(test.left.func, ast.Name) and test.left.func.id == "len"
                and len(test.left.args) == 1 and isinstance(test.left.args[0], ast.Name)
                and isinstance(test.comparators[0], ast.Constant)):
            return False
        value = self.env.get(test.left.args[0].id)
        param = self.seq_params.get(id(value)) if value is not None else None
        items = getattr(getattr(param, "value", None), "items", None)
        items = items if items is not None else getattr(param, "items", None)
        return items is not None and len(items) == test.comparators[0].value

    # -- statements --------------------------------------------------------

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript) \
                and self.array_mode:
            if len(stmt.targets) != 1:
                raise self.src.error(stmt, "chained assignment into a subscript is not supported")
            self.assign_subscript(stmt.targets[0], stmt.value, stmt=stmt)
        elif isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, target=stmt.targets[0] if len(stmt.targets) == 1 else None)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return  # a bare annotation binds nothing
            self.assign(stmt.target, self.expr(stmt.value, target=stmt.target), stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and self.array_mode:
            op = BINOPS.get(type(stmt.op))
            if op is None:
                raise self.src.error(stmt, f"the operator {type(stmt.op).__name__} is not supported")
            self.assign_subscript(stmt.target, stmt.value, op=op, stmt=stmt)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.refuse_target(stmt.target)
            op = BINOPS.get(type(stmt.op))
            if op is None:
                raise self.src.error(stmt, f"the operator {type(stmt.op).__name__} is not supported")
            left = self.read(stmt.target.id, stmt.target)
            right = self.expr(stmt.value)
            self.check_inplace(stmt, left)
            value = self.emit(op, [left, right], stmt, var=stmt.target.id, text=ast.unparse(stmt))
            self.bind(stmt.target.id, value)
            self.after_inplace(stmt, left, value)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.If):
            self.if_stmt(stmt)
        elif isinstance(stmt, ast.For):
            self.for_stmt(stmt)
        elif isinstance(stmt, ast.While):
            self.while_stmt(stmt)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                return  # a string statement (comment-like) does nothing
            call = stmt.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                self.refuse_argument_mutation(call.func.value, call)
            if runtime_lists.mutation(self, stmt) or structures.mutation(self, stmt):
                return
            if type(stmt.value) in REFUSED:  # `yield x`, `await x`
                raise self.refuse(stmt.value)
            if isinstance(stmt.value, ast.Call):
                raise self.src.error(stmt, f"`{ast.unparse(stmt.value.func)}(...)` is called for "
                                     "its side effect (its result is unused): mutation, I/O and "
                                     "dynamic code are not differentiable")
            raise self.src.error(stmt, "an expression statement has no effect on the result; "
                                 "calls for their side effects are not supported")
        else:
            raise self.refuse(stmt)

    def assign(self, target: ast.expr, value, value_node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, ast.Subscript):
            self.refuse_argument_mutation(target.value, target)
            structures.store(self, target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            value = structures.unpack(self, value, target, value_node)
            if len(value) != len(target.elts):
                raise self.src.error(target, f"cannot unpack {len(value)} values into "
                                     f"{len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v, value_node)
        else:
            raise self.refuse_target(target)

    def bind(self, var: str, value: ir.Operand) -> None:
        """Give ``var`` the value ``value``. Binding happens only here, after
        the whole right-hand side is lowered, so ``a, b = b, a`` reads the old
        values; an op defined for this very assignment already carries
        ``var``'s SSA name."""
        self.env[var] = value

    def return_value(self, stmt: ast.Return) -> ir.Operand:
        if stmt.value is None:
            raise self.src.error(stmt, "`return` without a value: the function must return a scalar")
        if isinstance(stmt.value, (ast.Name, ast.Constant)):
            value = self.expr(stmt.value)
        else:
            value = self.expr(stmt.value, hint="out")
        if structures.is_structure(value):
            return structures.outputs(self, value, stmt.value)
        if isinstance(value, ir.Value) and value.kind == "list":
            raise self.src.error(stmt.value, "returning a list of any length is not supported; "
                                 "return a number computed from it (`sum(xs)`, `xs[-1]`)")
        if isinstance(value, ir.Value) and value.kind == "tuple":
            raise self.src.error(stmt.value, "returning the tuple a call returns is not "
                                 "supported; unpack it (`a, b = helper(x)`) and return `a, b`")
        return value

    # -- expressions -------------------------------------------------------

    def expr(self, node: ast.expr, target: ast.expr | None = None, hint: str | None = None):
        """Lower ``node``; return an operand, or a tuple of them for a tuple
        literal. When ``target`` is a plain name, the outermost op is named
        after it (``y = a * b`` defines ``y``, not a temporary); else ``hint``
        names it."""
        var = target.id if isinstance(target, ast.Name) else None
        if isinstance(node, ast.Tuple):
            targets = [None] * len(node.elts)
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(node.elts):
                targets = target.elts  # `a, b = b, a * b` names the product b_1
            return tuple(self.expr(e, t) for e, t in zip(node.elts, targets))
        if isinstance(node, ast.Constant):
            return self.constant(node.value, node)
        if isinstance(node, ast.Name):
            return self.read(node.id, node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and self.array_mode:
            return self.emit("matmul", [self.expr(node.left), self.expr(node.right)], node, var,
                             hint=hint)
        if isinstance(node, ast.Attribute):
            field = pytrees.attribute(self, node)  # p.w of a dataclass or NamedTuple
            if field is not None:
                return field
        if isinstance(node, ast.Subscript) and self.array_mode:
            return self.subscript(node, var, hint)
        if isinstance(node, ast.Attribute) and self.array_mode \
                and not self.is_global_path(node.value):
            return self.array_attribute(node, var, hint)
        if isinstance(node, ast.BinOp):
            prim = BINOPS.get(type(node.op))
            if prim is None:
                raise self.src.error(node, f"the operator `{_opsym(node.op)}` is not supported "
                                     "on scalars")
            return self.emit(prim, [self.expr(node.left), self.expr(node.right)], node, var, hint=hint)
        if isinstance(node, ast.IfExp):
            return self.if_expr(node, var, hint)
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, var)
        if isinstance(node, ast.Subscript):
            return self.dynamic_subscript(node, var, hint)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return self.not_op(node, var, hint)
            if isinstance(node.op, ast.Invert):
                raise self.src.error(node, "the operator `~` is not supported")
            operand = self.expr(node.operand)
            if isinstance(operand, ir.Const) and isinstance(node.op, ast.USub):
                return ir.Const(-operand.value)
            return self.emit(UNARYOPS[type(node.op)], [operand], node, var, hint=hint)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.src.error(node, "chained comparisons are not supported; "
                                     "write `a < b and b < c`")
            prim = COMPARE.get(type(node.ops[0]))
            if prim is None:
                raise self.src.error(node, f"the comparison {type(node.ops[0]).__name__} "
                                     "is not supported")
            return self.emit(prim, [self.expr(node.left), self.expr(node.comparators[0])], node, var,
                             hint=hint)
        if isinstance(node, ast.Call):
            return self.call(node, var, hint)
        if isinstance(node, structures.STRUCTURE_NODES):
            return structures.lower_expr(self, node, var)
        if isinstance(node, ast.Attribute):
            obj = self.resolve(node)
            if isinstance(obj, numbers.Real):
                return self.constant(obj, node)
            raise self.src.error(node, f"`{ast.unparse(node)}` is not a number s2s-ad can use")
        raise self.refuse(node)

    def call(self, node: ast.Call, var: str | None, hint: str | None = None) -> ir.Operand:
        if self.array_mode and isinstance(node.func, ast.Attribute) \
                and not self.is_global_path(node.func.value):
            return self.method_call(node, var, hint)
        if self.array_mode:
            prim = self.numpy_prim(self.resolve(node.func))
            if prim is None and self.resolve(node.func) is builtins.len and node.args \
                    and not self.holds_structure(node.args[0]):
                prim = "len"
            if prim is not None:
                return self.numpy_call(prim, node, var, hint)
            special = self.special_call(self.resolve(node.func), node, var, hint)
            if special is not None:
                return special
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.src.error(a, "`*args` in calls is not supported")
        for k in node.keywords:
            if k.arg is None:
                raise self.src.error(k.value, "`**kwargs` in calls is not supported")
        fn = self.resolve(node.func)
        if fn is builtins.sum or fn is builtins.len:
            return structures.builtin(self, fn, node, var, hint)
        if isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>":
            raise self.src.error(node, f"`{ast.unparse(node.func)}` is a `lambda` defined "
                                 "outside the function; calls to lambdas are not supported: "
                                 "define it with `def`")
        if isinstance(fn, types.FunctionType) and not _is_library(fn):
            return self.user_call(fn, node, var, hint)
        prim = self.primitive(fn, node)  # a function without a rule says so first
        if node.keywords:
            raise self.src.error(node, "keyword arguments in calls to "
                                 f"`{ast.unparse(node.func)}` are not supported")
        if prim in ("max", "min") and len(node.args) == 1:
            # max(xs), max(x * x for x in xs): the items, then as max(a, b, c)
            arg = node.args[0]
            args = (structures.comprehension(self, arg) if isinstance(arg, ast.GeneratorExp)
                    else structures.iteration(self, arg))
            if not args:
                raise self.src.error(node, f"`{prim}` of an empty sequence")
            if len(args) == 1:
                return args[0]
        else:
            args = [self.expr(a) for a in node.args]
        if any(structures.is_structure(a) for a in args):
            raise self.src.error(node, "tuple, list or dict arguments are not supported here")
        if prim in ("max", "min"):
            # max(a, b, c) is max(max(a, b), c): the same element wins ties.
            acc = args[0]
            for i, a in enumerate(args[1:], 1):
                last = i == len(args) - 1
                acc = self.emit(prim, [acc, a], node, var if last else None, hint=hint if last else None)
            return acc
        if prim == "math.log" and len(args) == 2:
            prim = "math.log_base"
        if prim == "round" and len(args) == 2:
            raise self.src.error(node, "`round(x, ndigits)` is not supported")
        rule = RULES[prim]
        if len(args) != rule.arity:
            raise self.src.error(node, f"`{ast.unparse(node.func)}` takes {rule.arity} "
                                 f"argument(s) here, got {len(args)}")
        return self.emit(prim, args, node, var, hint=hint)

    def user_call(self, fn: types.FunctionType, node: ast.Call, var: str | None,
                  hint: str | None) -> ir.Value:
        """A call to a user function: a ``call`` op whose operands are the
        arguments in the callee's parameter order, keywords matched and
        defaults filled in, so every call site of a helper has one shape."""
        what = ast.unparse(node.func)
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise self.src.error(node, f"`{what}` takes `{p}`; calls to functions with "
                                     "*args or **kwargs parameters are not supported")
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if any(structures.is_structure(a) or (isinstance(a, ir.Value) and a.kind in ("tuple",
                                                                                   "list"))
               for a in [*args, *kwargs.values()]):
            raise self.src.error(node, f"tuple, list or dict arguments to `{what}` are not "
                                 "supported; pass numbers")
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.src.error(node, f"call to `{what}`: {exc}") from None
        bound.apply_defaults()
        operands = []
        for name, value in bound.arguments.items():
            if not isinstance(value, (ir.Value, ir.Const)):
                if isinstance(value, bool) or not isinstance(value, numbers.Real):
                    raise self.src.error(node, f"`{what}`: the default value of parameter "
                                         f"{name!r} is {type(value).__name__}; only numeric "
                                         "defaults are supported")
                value = self.constant(value, node)
            operands.append(value)
        callee = ir.Callee(fn, user_rules.lookup(fn))
        if var is not None:
            name = self.namer.claim(var)
        else:
            name = self.namer.fresh(hint or fn.__name__)
        # In NumPy code a helper may return an array of any shape.
        out = ir.Value(name, "array" if self.array_mode else "float", var)
        callee.tape = ir.Value(self.namer.fresh(f"{name}_tape"), "tape")
        text = ast.unparse(node)
        if var is not None:
            text = f"{var} = {text}"
            self.env[var] = out
        self.ops.append(ir.Op("call", tuple(operands), out, self.loc(node), text, callee))
        self.call_values.add(id(out))
        return out

    def primitive(self, fn, node: ast.Call) -> str:
        """The rule-table name of the callable ``fn``."""
        for b, prim in BUILTIN_PRIMS.items():
            if fn is b:
                return prim
        name = getattr(fn, "__name__", None)
        if name and getattr(math, name, None) is fn and f"math.{name}" in RULES:
            return f"math.{name}"
        what = ast.unparse(node.func)
        if fn in (builtins.eval, builtins.exec, builtins.compile):
            raise self.src.error(node, f"`{what}` runs code s2s-ad cannot see; dynamic code "
                                 "is not supported")
        if name and getattr(math, name, None) is fn:
            raise self.src.error(node, f"`{what}` has no derivative rule in s2s-ad")
        if self.array_mode and (getattr(fn, "__module__", None) or "").startswith("numpy"):
            raise self.src.error(node, f"`{what}` has no derivative rule in s2s-ad; the NumPy "
                                 "functions, methods and attributes it knows are listed in "
                                 "docs/numpy.md; give it a rule (s2s_ad.defvjp, see "
                                 "docs/custom_rules.md) or write it with those")
        raise self.src.error(node, f"the call `{what}` is not supported: s2s-ad knows "
                             "Python's arithmetic, `math` and abs/min/max/pow/float/int/round, "
                             "and your own functions; give anything else a derivative rule "
                             "(s2s_ad.defvjp, see docs/custom_rules.md)")

    def resolve(self, node: ast.expr):
        """The Python object a global name or attribute chain refers to."""
        if isinstance(node, ast.Name):
            if node.id in self.env:
                raise self.src.error(node, f"`{node.id}` is a local value, not something "
                                     "s2s-ad can call or look into")
            if node.id in self.src.globals:
                return self.src.globals[node.id]
            if hasattr(builtins, node.id):
                return getattr(builtins, node.id)
            raise self.src.error(node, f"name `{node.id}` is not defined")
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if not isinstance(base, types.ModuleType):
                raise self.src.error(node, f"`{ast.unparse(node)}`: attribute access is only "
                                     "supported on modules (like `math.sin`)")
            if not hasattr(base, node.attr):
                raise self.src.error(node, f"module {base.__name__} has no attribute {node.attr!r}")
            return getattr(base, node.attr)
        raise self.src.error(node, f"`{ast.unparse(node)}` is not supported as a callee")

    def read(self, name: str, node: ast.AST) -> ir.Operand:
        if name in self.env:
            if self.array_mode:
                self.check_stale(name, self.env[name], node)
            return self.env[name]
        if name in self.undefined:
            where, why = self.undefined[name]
            raise self.src.error(node, f"`{name}` may be undefined here: {why} "
                                 f"(line {where.lineno})")
        obj = self.src.globals.get(name, getattr(builtins, name, None))
        if isinstance(obj, numbers.Real):
            return self.constant(obj, node)
        if isinstance(obj, (list, tuple)) and obj and all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) for v in obj):
            # A module-level list of numbers: constants, read when the gradient is made.
            return tuple(self.constant(v, node) for v in obj)
        if name in self.src.fn.__code__.co_freevars:
            raise self.src.error(node, f"`{name}` is a variable of an enclosing function "
                                 "(a closure), which s2s-ad cannot see; pass it as a parameter")
        if obj is None and name not in self.src.globals:
            raise self.src.error(node, f"name `{name}` is not defined")
        raise self.src.error(node, f"`{name}` is a {type(obj).__name__}; only numbers can be "
                             "used as values here")

    def constant(self, value, node: ast.AST) -> ir.Const:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            if isinstance(value, bool):
                return ir.Const(value)
            raise self.src.error(node, f"the constant {value!r} is not a number")
        return ir.Const(int(value) if isinstance(value, numbers.Integral) else float(value))

    def emit(self, prim: str, args: list, node: ast.AST, var: str | None = None,
             text: str | None = None, hint: str | None = None,
             attrs: dict | None = None) -> ir.Value:
        for a in args[1:] if prim in ("getitem", "len", "list.sum") else args:
            if not isinstance(a, (ir.Value, ir.Const)) or (isinstance(a, ir.Value)
                                                            and a.kind in ("tuple", "list")):
                raise self.src.error(node, f"{structures.describe(a)} is used where a number is "
                                     "expected; index it, unpack it or sum() it")
        kinds = [_kind(a) for a in args]
        attrs = attrs or {}
        if self.array_mode:
            prim = self.array_prim(prim, kinds, node)
            self.refuse_shape_arithmetic(prim, args, node)
            kind = self.result_kind(prim, kinds, attrs)
        else:
            kind = RULES[prim].result_kind(kinds)
        if prim == "getitem" and self.array_mode:
            kind = "array"  # an item of a list grown at run time: a number or an array
        if var is not None:
            name = self.namer.claim(var)
        elif hint is not None:
            name = self.namer.fresh(hint)
        else:
            self.temps += 1
            name = self.namer.fresh(f"t{self.temps}")
        out = ir.Value(name, kind, var)
        if text is None:
            text = ast.unparse(node)
            if var is not None:
                text = f"{var} = {text}"
        op = ir.Op(prim, tuple(args), out, self.loc(node), text, attrs=attrs)
        self.ops.append(op)
        self.defs[id(out)] = op
        if self.array_mode:
            self.track_views(prim, args, out)
        return out

    def loc(self, node: ast.AST) -> ir.Loc:
        err = self.src.error(node, "")
        return ir.Loc(self.src.file, err.line, err.col)

    def refuse_argument_mutation(self, base: ast.expr, node: ast.expr) -> None:
        """Refuse changing a parameter's list or array in place: the caller
        would see the change, which the gradient function cannot replay."""
        if isinstance(base, ast.Name) and base.id in getattr(self, "arguments", {}) \
                and self.env.get(base.id) is self.arguments[base.id]:
            raise self.src.error(node, f"`{ast.unparse(node)}` changes the argument "
                                 f"`{base.id}` in place, which the caller would see: s2s-ad "
                                 "differentiates pure functions; build a new value instead")

    def refuse_target(self, target: ast.expr) -> SourceError:
        """The error for assigning to something other than a name."""
        if isinstance(target, ast.Attribute):
            return self.src.error(target, f"attribute assignment (`{ast.unparse(target)} = ...`) "
                                  "is not supported: s2s-ad differentiates pure functions")
        if isinstance(target, ast.Subscript):
            return self.src.error(target, f"assigning to `{ast.unparse(target)}` mutates a value "
                                  "in place, which is not supported: s2s-ad differentiates pure "
                                  "functions; build a new value instead")
        return self.refuse(target)

    def refuse(self, node: ast.AST) -> SourceError:
        message = REFUSED.get(type(node))
        if message is None:
            message = f"{type(node).__name__} is not supported by s2s-ad"
        return self.src.error(node, message)


def _is_library(fn: types.FunctionType) -> bool:
    """Functions of installed libraries (NumPy's, the standard library's) are
    not the user's: they are primitives or refused, never lowered."""
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in LIBRARY_MODULES and user_rules.lookup(fn) is None


def _is_library_module(module: types.ModuleType) -> bool:
    return (module.__name__ or "").split(".")[0] in LIBRARY_MODULES


LIBRARY_MODULES = {"math", "numpy", "builtins", "functools", "operator", "scipy", "s2s_ad"}


def _kind(a: ir.Operand) -> str:
    if isinstance(a, ir.Value):
        return a.kind
    if isinstance(a.value, bool):
        return "bool"
    return "int" if isinstance(a.value, int) else "float"


def _opsym(op: ast.operator) -> str:
    return {ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
            ast.LShift: "<<", ast.RShift: ">>"}.get(type(op), type(op).__name__)
