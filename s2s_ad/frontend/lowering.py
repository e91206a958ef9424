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
import copy
import numbers
import types

from s2s_ad import ir
from s2s_ad.frontend import (array_kinds, bound_partials, callees, checks, closures, comprehensions,
                             container_methods, factories, flatten_forms, generated, index_exprs,
                             jax_forms, lazy_iterators,
                             library_names,
                             list_stacks,
                             own_helpers, pairs,
                             loop_batching, slice_values,
                             list_writes, module_lists, numpy_forms, param_uses, passing, pytrees, ranges,
                             real_parts,
                             runtime_lists, runtime_sorting, scipy_forms, statics, structures,
                             syntax, tf_forms, torch_forms, unroll)
from s2s_ad.frontend.jax_batching import located
from s2s_ad.frontend.aliasing import InPlaceNames
from s2s_ad.frontend.callsites import CallLowering
from s2s_ad.errors import SourceError
from s2s_ad.frontend.numpy import ArrayLowering, numpy_use
from s2s_ad.frontend.params import Parameters
from s2s_ad.frontend.control import RET, RETVAL, ControlFlow, always_returns, returns_in
from s2s_ad.frontend.list_params import ListParams, kind_of
from s2s_ad.names import Namer, identifiers
from s2s_ad.rules import RULES
from s2s_ad.frontend.source import Source, locate as source_locate, locate_helper
from s2s_ad.syntax_walk import walk

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
          ast.Mod: "mod", ast.FloorDiv: "floordiv"}
UNARYOPS = {ast.USub: "neg", ast.UAdd: "pos"}
LOGICAL = {ast.BitAnd: "np.logical_and", ast.BitOr: "np.logical_or", ast.BitXor: "np.logical_xor",
           ast.Invert: "np.logical_not"}
"""``&``, ``|``, ``^``, ``~`` of comparisons (bools, masks) in NumPy code: NumPy's
logical functions, which they are on bools (on integers they are bitwise:
refused)."""
COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
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
    ast.Lambda: "a `lambda` is supported bound to a name (`sq = lambda t: t * t`), called, or "
                "passed to a function (a helper of yours, `map`, `sorted(key=...)`, "
                "`functools.reduce`); not here: define it with `def` and call it",
    ast.FunctionDef: "a nested function definition is not supported here; define it at the "
                     "top level of the function's body, or a helper at module level",
    ast.ClassDef: "class definitions inside the function are not supported",
    ast.Import: "`import` inside the function is not supported; import at module level",
    ast.ImportFrom: "`import` inside the function is not supported; import at module level",
    ast.Raise: "`raise` is supported as a check, `if cond: raise ValueError(...)`, only",
    ast.ListComp: "a list comprehension is not supported here; bind it to a name first",
    ast.GeneratorExp: "a generator expression is not supported here; consume it where it is "
                      "written (`sum(...)`, `max(...)`, a `for` loop) or make it a list",
    ast.SetComp: "set comprehensions are not supported",
    ast.DictComp: "dict comprehensions are supported over a sequence known while lowering "
                  "(a dict's `items()`, a list or tuple built in the function, `range(n)`)",
    ast.List: "a list display is not supported here; bind it to a name first",
    ast.Dict: "a dict display is not supported here; bind it to a name first",
    ast.Set: "sets are not supported",
    ast.Starred: "starred expressions are not supported",
    ast.JoinedStr: "f-strings are supported as the message of a check and in `print` only",
}


def lower(src: Source, lengths: dict | None = None, arrays=(), statics: dict | None = None,
          passed: dict | None = None, helper: bool = False,
          list_result: bool = False) -> ir.Function:
    """Lower ``src`` to SSA IR (see the module docstring).

    ``lengths`` maps parameters that receive a list or tuple to its length
    (an int, for a list) or ``(container, length)`` with container
    ``"list"`` or ``"tuple"``; each item becomes a scalar parameter value.
    ``arrays`` names the parameters that receive NumPy arrays: they are of
    kind ``"array"`` and the function is lowered as NumPy code, whether or
    not its source names NumPy (the caller's argument kinds decide, not the
    callee's text). ``statics`` maps parameters that receive a string,
    ``None`` or a bool to that value: the code is generated for it
    (:mod:`s2s_ad.frontend.statics`). ``passed`` maps parameters a caller
    gives a structure whole to its spec (:mod:`s2s_ad.frontend.passing`):
    each leaf becomes a parameter of its own. A ``helper`` (a function called
    by the one differentiated) may return a dict, a NamedTuple, a dataclass
    or nested tuples and lists (``Function.returns``). With ``list_result``
    (a forward/backward pair, ``vjp``), the function may return a list grown
    at run time, as a helper may."""
    syntax.check_nesting(src)
    arrays = (arrays,) if isinstance(arrays, str) else arrays
    with callees.session():
        try:
            return _lower(src, lengths, arrays, statics, passed, helper, list_result)
        except SourceError as why:  # (a SequenceParameter too: a list read at a loop's index)
            loop_batching.check_callee(src, why)  # a loop_sum: its caller lowered again
            if not loop_batching.undo(src):
                raise
        # the loops computed at once hold something the frontend refuses: as written
        return _lower(src, lengths, arrays, statics, passed, helper, list_result)


def _lower(src: Source, lengths, arrays, statics, passed, helper,
           list_result=False) -> ir.Function:
    first = _Lowering(src, lengths, arrays, statics, passed, helper)
    first.list_result = list_result
    try:
        return first.function()
    except param_uses.SequenceParameter:
        raise
    except SourceError:
        if not first.unroll_skipped:
            raise
    # A loop over range(constant) that appends was lowered as a loop, and
    # something needs the list's length while lowering (a slice, unpacking):
    # unroll such loops, as before lists grew at run time.
    again = _Lowering(src, lengths, arrays, statics, passed, helper)
    again.list_result = list_result
    again.unroll_limit = unroll.UNROLL_LIMIT
    return again.function()


def names_numpy(src: Source) -> bool:
    """Whether the source of ``src``'s function uses NumPy (then its
    parameters are arrays unless annotated; see :mod:`s2s_ad.frontend_numpy`)."""
    return numpy_use(src)[1]


class _Lowering(Parameters, CallLowering, ArrayLowering, InPlaceNames, ControlFlow,
                ListParams):
    def __init__(self, src: Source, lengths: dict | None = None, arrays=(),
                 statics: dict | None = None, passed: dict | None = None,
                 helper: bool = False):
        generated.normalise_source(src, helper)  # s2s-ad's own gradients' tapes
        factories.inline(src, source_locate)  # g = make(x): make's nested function, here
        flatten_forms.desugar(src)  # autograd's flatten(params) of a structure
        jax_forms.desugar(src)  # .at[...], jax.vmap, jax.lax.scan as NumPy code
        torch_forms.desugar(src)  # torch functions and tensor methods as NumPy code
        tf_forms.desugar(src)  # TensorFlow functions, tf.cond, tf.while_loop as NumPy code
        scipy_forms.desugar(src)  # softmax, np.trapezoid, scipy.stats.norm.logpdf, ...
        numpy_forms.desugar(src)  # np.diff, np.polyval, np.interp, x.tolist() loops
        loop_batching.desugar(src)  # a NumPy loop summing independent iterations, at once
        self.src = src
        self.helper = helper
        self.returns = None
        """The spec of the structure the function returns (a helper's)."""
        self.returns_argument = None
        """The list parameter a helper returns itself (ir.Function's field)."""
        self.call_failures: dict = {}
        """id(result of a call) -> why its callee could not be lowered."""
        self.passed = dict(passed or {})
        """Parameters a caller gives a structure whole -> its spec."""
        self.statics = dict(statics or {})
        self.default_statics = statics is None
        """Without ``statics``, a parameter whose default is a string, None or
        a bool (and that receives no array) is static at its default."""
        self.checkpoint_marks: dict[int, int] = {}
        """id(ast loop) -> the snapshots a `with s2s_ad.checkpoint():` around it asks for."""
        self.lengths = dict(lengths or {})
        self.arrays = frozenset(arrays) | {n for n, v in src.captured.items()
                                            if pytrees.holds_array(v)}
        closures.rewrite_maps(src)
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
        self.masks: set[int] = set()
        self.loop_masks: set[str] = set()
        """ids of bool values that may be arrays (``t <= a``, a an array;
        :mod:`s2s_ad.frontend.array_kinds`)."""
        self.param_ids: set[int] = set()
        self.integers: dict[str, SourceError] = {}
        self.undefined: dict[str, tuple] = {}
        self.guarded: dict[str, tuple] = {}
        """Names assigned in one branch only, readable again under the same
        condition: ``name -> (((cond, polarity), ...), value)`` (control.py)."""
        self.negations: dict[int, ir.Value] = {}
        """``id(not c) -> c`` for the conditions of guarded names."""
        self.guard_of: dict[int, ir.Value] = {}
        """``id(φ) -> v`` for a guarded name's φ: read, it is ``v``."""
        self.loop_depth = 0
        self.region_depth = 0
        self.region_starts: list[dict] = []
        """The names bound where each loop body or arm being lowered began
        (innermost last): what the region shares with the code around it."""
        self.ret_mode = False
        self.seq_params: dict[int, ir.Param] = {}
        self.given_statics: dict = {}
        self.spliced: list[str] = []
        """Names bound to the items of ``*args``/``**kw`` for the call being lowered."""
        self.not_none: dict[str, None] = {}
        """Parameters tested with ``is None`` while lowered as values: the
        generated code refuses None for them."""
        self.local_fns: dict[str, types.FunctionType] = {}
        """Nested functions (``def``, ``lambda`` assigned to a name) defined so
        far, lifted to helpers (:mod:`s2s_ad.frontend.closures`)."""
        self.locals_ = closures.outer_locals(self.tree)
        self.unroll_limit = unroll.SHORT_UNROLL
        """Most iterations of a range(constant) loop that appends unrolled."""
        self.unroll_skipped = False
        """Was a longer such loop lowered as a loop (a run-time list)?"""
        self.grown: set[int] = set()
        self.list_roots: dict[int, int] = {}
        """id(version of a run-time list) -> id of its list.new value: which list it is."""
        """ids of the versions of lists grown at run time (frontend/runtime_lists.py)."""
        self.returned_lists, self.positions = set(), set()  # runtime_lists, runtime_sorting

    # -- entry -------------------------------------------------------------

    def function(self) -> ir.Function:
        self.setup_numpy()
        params = self.parameters()
        # What each parameter is bound to on entry: writing into that very
        # object (``xs[0] = v``, ``xs.append(v)``) would change the caller's.
        self.arguments = {a.arg: self.env.get(a.arg) for a in self.tree.args.posonlyargs
                          + self.tree.args.args + self.tree.args.kwonlyargs}
        stars = [self.env.get(a.arg) for a in (self.tree.args.vararg, self.tree.args.kwarg)
                 if a is not None]
        self.argument_objects = structures.mutables(
            list(self.arguments.values())
            + [x for s in stars for x in (s if isinstance(s, tuple) else s.items.values())])
        """ids of the lists and dicts the caller holds (every one reachable from
        an argument; ``*args``' tuple and ``**kw``'s dict are the call's own)."""
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
        body = checks.rewrite(self.src, body)
        lazy_iterators.refuse_stale(self, body)  # `g = (... for t in xs)` read as Python does
        # A `return` inside a branch or loop makes every return set the flags
        # `ret`/`result` (see lower_control); otherwise the last statement's
        # value is the result.
        nested = any(not isinstance(stmt, ast.Return) and returns_in([stmt]) for stmt in body)
        if nested:
            self.ret_mode = True
            self.env[RET] = ir.Const(False)
            self.env[RETVAL] = self.ret_placeholder = ir.Const(0.0)
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
                           statics={n: v for n, v in self.given_statics.items()},
                           not_none=tuple(self.not_none),
                           passed=tuple(self.passed_specs), returns=self.returns,
                           returns_argument=self.returns_argument,
                           given_arrays=() if self.names_numpy else tuple(sorted(self.arrays)),
                           index_results=index_exprs.results(self, outputs or (result,)))
        ir.verify(func)
        return func

    def lower_callee(self, op: ir.Op) -> ir.Function | None:
        """The callee of the call ``op`` just lowered, lowered for its
        arguments (kept on the op for the call graph), or None."""
        return callees.for_call(self, op, lambda fixed: lower(
            locate_helper(op.callee.fn), arrays=fixed[1], statics=dict(fixed[2]),
            passed=dict(fixed[3]), helper=True))

    # -- statements --------------------------------------------------------

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Subscript):
            mark, it = len(self.spliced), stmt.iter
            stmt.iter = slice_values.spliced(self, it)  # `for v in xs[sl]`
            try:
                return self._statement(stmt)
            finally:
                stmt.iter = it
                slice_values.unbind(self, mark)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Subscript) for t in targets):
            mark = len(self.spliced)
            written = [slice_values.spliced(self, t) if isinstance(t, ast.Subscript) else t
                       for t in targets]
            if any(w is not t for w, t in zip(written, targets)):
                # `y[sl] = v`: the statement lowered with the slice written out, then as it was
                if isinstance(stmt, ast.Assign):
                    stmt.targets = written
                else:
                    stmt.target = written[0]
                try:
                    return self._statement(stmt)
                finally:
                    if isinstance(stmt, ast.Assign):
                        stmt.targets = targets
                    else:
                        stmt.target = targets[0]
                    slice_values.unbind(self, mark)
        return self._statement(stmt)

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef):
            self.define_local(stmt, stmt.name, stmt)
            return
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda) \
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.define_local(stmt.value, stmt.targets[0].id, stmt)
            return
        if self.function_alias(stmt):
            return  # `f = ACTIVATIONS[name]`: calls of `f` call that function
        list_writes.refuse_in_arrays(self, stmt)
        if self.array_mode and list_writes.replaces_item(self, stmt):
            return  # `hs[k] = v` on a list grown in the function: its item replaced
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript) \
                and self.array_mode:
            if len(stmt.targets) != 1:
                raise self.src.error(stmt, "chained assignment into a subscript is not supported")
            self.assign_subscript(stmt.targets[0], stmt.value, stmt=stmt)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) \
                and pairs.is_placeholder(stmt.value):
            # a tape item's start before the branch that assigns it: a number that
            # stands for a value of any shape at the branch's φ (control.phi)
            value = ir.Const(stmt.value.value)
            self.__dict__.setdefault("placeholders", set()).add(id(value))
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, ast.Assign):
            # `r = q = h(x)`: named after the first target, as a single one is (a call's
            # tuple bound to names reads its items next to the call: structures.call_items)
            single = len(stmt.targets) == 1 or all(isinstance(t, ast.Name) for t in stmt.targets)
            value = self.expr(stmt.value, target=stmt.targets[0] if single else None)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return  # a bare annotation binds nothing
            self.assign(stmt.target, self.expr(stmt.value, target=stmt.target), stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and self.array_mode and self.holds_structure(stmt.target.value):
            structures.augmented_store(self, stmt)  # `d["b"] += v`: the item replaced
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and self.array_mode:
            op = BINOPS.get(type(stmt.op))
            if op is None:
                raise self.src.error(stmt, f"the operator {type(stmt.op).__name__} is not supported")
            self.assign_subscript(stmt.target, stmt.value, op=op, stmt=stmt)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Subscript) and list_writes.augmented(self, stmt, BINOPS):
                return
            if isinstance(stmt.target, ast.Subscript) and self.holds_structure(stmt.target.value):
                return structures.augmented_store(self, stmt)  # `xs[1] += v`: the item replaced
            if not isinstance(stmt.target, ast.Name):
                raise self.refuse_target(stmt.target)
            op = BINOPS.get(type(stmt.op))
            if op is None:
                raise self.src.error(stmt, f"the operator {type(stmt.op).__name__} is not supported")
            left = self.read(stmt.target.id, stmt.target)
            if isinstance(left, tuple) and isinstance(stmt.op, ast.Add):
                # `t += (v,)`: a tuple cannot change, so this binds `t + (v,)`
                both = located(ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op,
                                         stmt.value), stmt)
                self.assign(stmt.target, self.expr(both), stmt)
                return
            right = self.expr(stmt.value)
            self.check_inplace(stmt, left)
            value = self.emit(op, [left, right], stmt, var=stmt.target.id, text=ast.unparse(stmt))
            self.bind(stmt.target.id, value)
            self.after_inplace(stmt, left, value)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Delete):
            container_methods.delete(self, stmt)
        elif isinstance(stmt, ast.Assert) or checks.is_check(stmt):
            checks.lower(self, stmt)
        elif isinstance(stmt, ast.If):
            checks.subject_checked(self, stmt.test)
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
            if runtime_lists.mutation(self, stmt) or container_methods.mutation(self, stmt) \
                    or structures.mutation(self, stmt):
                return
            if type(stmt.value) in REFUSED:  # `yield x`, `await x`
                raise self.refuse(stmt.value)
            if own_helpers.add_into(self, stmt):
                return  # `add_at(y, index, g)` in a gradient module read back
            if isinstance(stmt.value, ast.Call):
                return checks.effect_call(self, stmt)  # `print(...)`, `validate(x)`; or refused
            raise self.src.error(stmt, "an expression statement has no effect on the result; "
                                 "calls for their side effects are not supported")
        else:
            raise self.refuse(stmt)

    def define_local(self, node: ast.FunctionDef | ast.Lambda, name: str, stmt: ast.stmt) -> None:
        """A nested ``def`` or ``name = lambda ...``: lifted to a helper that
        takes the enclosing function's variables it reads as keywords."""
        if self.region_depth > self.loop_depth:
            raise self.src.error(stmt, f"the nested function {name!r} is defined inside an "
                                 "`if`; define it before the branch (at the top of the "
                                 "function body, or of a loop's body)")
        # in a loop's body, lowered once per iteration where the loop is unrolled
        # and again where a value's kind widens: the same definition each time
        # (it reads the enclosing function's variables when called, as Python's
        # closures do)
        where = self.__dict__.setdefault("defined_at", {})
        at = (stmt.lineno, stmt.col_offset)
        node, defaults = self.defaults_at_def(node)
        if name in self.local_fns and where.get(name) == at:
            self.local_fns[name].__s2s_defaults_at_def__ = defaults  # this iteration's
            return
        if name in self.local_fns or name in self.env:
            raise self.src.error(stmt, f"`{name}` is defined again here; give each nested "
                                 "function and variable its own name")
        fn = closures.lift(self.src, node, name, self.locals_, self.local_fns)
        fn.__s2s_defaults_at_def__ = defaults
        self.local_fns[name] = fn
        where[name] = at

    def defaults_at_def(self, node):
        """``node`` with each default value that reads the enclosing function's
        variables (``def h(t, scale=k)``) replaced by a placeholder, and those
        values, lowered here, where Python evaluates them (a call that does
        not give the argument passes the value: callsites.user_call)."""
        args = node.args
        pairs = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults)) \
            + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        local = [(a, d) for a, d in pairs if any(
            isinstance(n, ast.Name) and n.id in self.env for n in walk(d))]
        if not local:
            return node, {}
        values = {a.arg: self.expr(d) for a, d in local}
        node = copy.deepcopy(node)
        chosen = {a.arg for a, _ in local}
        args = node.args
        for i, a in enumerate(args.args[len(args.args) - len(args.defaults):]):
            if a.arg in chosen:
                args.defaults[i] = ast.copy_location(ast.Constant(0.0), args.defaults[i])
        for i, a in enumerate(args.kwonlyargs):
            if a.arg in chosen:
                args.kw_defaults[i] = ast.copy_location(ast.Constant(0.0), args.kw_defaults[i])
        return node, values

    def assign(self, target: ast.expr, value, value_node: ast.expr) -> None:
        if isinstance(target, ast.Name) and target.id in self.local_fns:
            raise self.src.error(target, f"`{target.id}` names a nested function; assigning "
                                 "to it is not supported: use another name")
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, ast.Subscript) and self.array_mode \
                and not self.holds_structure(target.value):
            # `(s[i], s[i + 1]) = step(...)`: each item written as `s[i] = item`
            mark = len(self.spliced)
            name = syntax.bound(self, f"({ast.unparse(value_node)})[{len(self.spliced)}]", value,
                                value_node)
            try:
                self.assign_subscript(target, name, stmt=target)
            finally:
                for n in self.spliced[mark:]:
                    self.env.pop(n, None)
                del self.spliced[mark:]
        elif isinstance(target, ast.Subscript):
            self.refuse_argument_mutation(target.value, target)
            if list_writes.store(self, target, value, target, value_node):
                return
            structures.store(self, target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                value = structures.starred_unpack(self, value, target, value_node)
            else:
                value = structures.unpack(self, value, target, value_node)
            if len(value) != len(target.elts):
                raise self.src.error(target, f"cannot unpack {len(value)} values into "
                                     f"{len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v, value_node)
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
        value = structures.forwarded(self, value, stmt.value)  # `return h(x)`, h's tuple
        if isinstance(value, slice_values.SliceObject):  # `return slice(a, b)`
            raise slice_values.refuse_value(self, stmt.value, ast.unparse(stmt.value))
        if self.helper and self.returned_argument(value, stmt):
            return structures.outputs(self, value, stmt.value)
        if structures.is_structure(value) and self.helper \
                and structures.mutables([value]) & self.argument_objects:
            # the caller reads a copy: it must not be a list the caller holds (a flat
            # list too: the caller changing its list would not change the copy)
            raise self.src.error(stmt.value, "returning a list or dict the caller passed "
                                 "(or a structure holding one) is not supported: build a "
                                 "new one from its items")
        if structures.is_structure(value) and self.helper and not passing.is_flat(value):
            spec, leaves = passing.returned(self, value, stmt.value)
            if self.returns is not None and self.returns != spec or self.ret_mode:
                raise self.src.error(stmt.value, "a helper returning a dict, a NamedTuple, a "
                                     "dataclass or nested tuples returns it once, at the end "
                                     "(not from inside a branch or loop)")
            self.returns = spec
            return tuple(leaves)
        if structures.is_structure(value):
            return structures.outputs(self, value, stmt.value)
        if isinstance(value, ir.Value) and value.kind == "list":
            runtime_lists.returned(self, value, stmt.value)
        if isinstance(value, ir.Value) and value.kind == "tuple":
            raise self.src.error(stmt.value, "returning the tuple a call returns is not "
                                 "supported; unpack it (`a, b = helper(x)`) and return `a, b`")
        return value

    def returned_argument(self, value, stmt: ast.Return) -> bool:
        """Is ``value`` (a helper's ``return``) one of its flat list parameters
        itself, returned from the helper's one ``return`` at its end? Then the
        caller reads the call's result as the list it passed
        (:attr:`ir.Function.returns_argument`); its items are the outputs."""
        if not isinstance(value, structures.StaticList) or self.ret_mode \
                or not passing.is_flat(value):
            return False
        name = next((n for n, v in self.arguments.items() if v is value), None)
        if name is None:
            return False
        self.returns_argument = name
        return True

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
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return syntax.tuple_items(self, node, targets)
            return tuple(self.expr(e, t) for e, t in zip(node.elts, targets))
        if isinstance(node, ast.Constant):
            return self.constant(node.value, node)
        if isinstance(node, ast.Name):
            return self.read(node.id, node)
        if isinstance(node, ast.Subscript):
            mark = len(self.spliced)
            written = slice_values.spliced(self, node)  # x[sl], sl = slice(1, n)
            if written is not node:
                try:
                    return self.expr(written, target, hint)
                finally:
                    slice_values.unbind(self, mark)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and self.array_mode:
            return self.emit("matmul", [self.expr(node.left), self.expr(node.right)], node, var,
                             hint=hint)
        if isinstance(node, ast.Attribute):
            field = pytrees.attribute(self, node)  # p.w of a dataclass or NamedTuple
            if field is not None:
                return field
            part = real_parts.attribute(self, node, var, hint)  # x.real, x.imag
            if part is not None:
                return part
        made = runtime_lists.module_item(self, node, var, hint)  # COEFFS[i], i an int
        if made is not None:
            return made
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and ranges.is_range(self.env.get(node.value.id)):
            return ranges.item(self, self.env[node.value.id], node, var)  # r[0]
        if isinstance(node, ast.Subscript) and self.array_mode:
            return self.subscript(node, var, hint)
        if isinstance(node, ast.Attribute) and self.array_mode \
                and not self.is_global_path(node.value):
            return self.array_attribute(node, var, hint)
        if isinstance(node, ast.BinOp):
            repeated = list_writes.fill(self, node, var)  # `[0.0] * n`
            if repeated is not None:
                return repeated
            prim = BINOPS.get(type(node.op))
            if type(node.op) in LOGICAL and self.array_mode:
                return self.logical(node, var, hint)
            if isinstance(node.op, ast.BitOr):  # `p | {"b": b}` of dicts, in code of numbers
                operands = [self.expr(node.left), self.expr(node.right)]
                if any(isinstance(a, structures.StaticDict) for a in operands):
                    return structures.merged_dicts(self, [node.left, node.right], operands)
            if prim is None:
                raise self.src.error(node, f"the operator `{_opsym(node.op)}` is not supported "
                                     "on scalars")
            if self.array_mode and isinstance(node.op, ast.Add):
                joined = list_stacks.shapes_joined(self, node, var, hint)  # `tuple(a) + tuple(b)`
                if joined is not None:
                    return joined
            joined = comprehensions.joined(self, node, var)  # `xs[:k] + xs[k + 1:]`
            if joined is not None:
                return joined
            left, right = self.expr(node.left), self.expr(node.right)
            joined = structures.joined(self, node, left, right)  # `[...] + [...]`, `(a,) + (b,)`
            if joined is not None:
                return joined
            structures.refuse_tuple_arithmetic(self, node, left, right)
            return self.emit(prim, [left, right], node, var, hint=hint)
        if isinstance(node, ast.IfExp):
            return self.if_expr(node, var, hint)
        if isinstance(node, ast.NamedExpr):  # `(n := expr)`: bound where it is evaluated
            return checks.walrus(self, node)
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, var)
        if isinstance(node, ast.Subscript):
            return self.dynamic_subscript(node, var, hint)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return self.not_op(node, var, hint)
            if isinstance(node.op, ast.Invert):
                if self.array_mode:
                    return self.logical(node, var, hint)
                raise self.src.error(node, "the operator `~` is not supported")
            operand = self.expr(node.operand)
            if isinstance(operand, ir.Const) and isinstance(node.op, ast.USub):
                return ir.Const(-operand.value)
            return self.emit(UNARYOPS[type(node.op)], [operand], node, var, hint=hint)
        if isinstance(node, ast.Compare):
            return statics.compare(self, node, var, hint)
        if isinstance(node, ast.Call):
            return self.call(node, var, hint)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            made = self.runtime_comprehension(node, var)
            if made is not None:  # over a list of any length: a list grown at run time
                return made
        if isinstance(node, structures.STRUCTURE_NODES):
            return structures.lower_expr(self, node, var)
        if isinstance(node, ast.Attribute):
            obj = self.resolve(node)
            if isinstance(obj, numbers.Real):
                return self.constant(obj, node)
            raise self.src.error(node, module_lists.not_a_number(node, obj))
        raise self.refuse(node)

    def logical(self, node: ast.expr, var: str | None, hint: str | None) -> ir.Operand:
        """``a & b``, ``a | b``, ``a ^ b``, ``~a`` of comparisons or masks (bools)
        in NumPy code, as ``np.logical_and(a, b)``... (the same values on bools);
        anything else is bitwise arithmetic on integers, refused, located."""
        operands = [node.operand] if isinstance(node, ast.UnaryOp) else [node.left, node.right]
        args = [self.expr(a) for a in operands]
        if isinstance(node, ast.UnaryOp) and not (isinstance(args[0], ir.Value)
                                                  and id(args[0]) in self.masks):
            # ~True is -2 on a Python bool: logical only on an array of bools
            raise self.src.error(node, "`~` is supported on a comparison of arrays (a mask), "
                                 "where it is NumPy's logical not; for a bool write `not`")
        if isinstance(node.op, ast.BitOr) and any(isinstance(a, structures.StaticDict)
                                                  for a in args):
            return structures.merged_dicts(self, operands, args)
        tests = getattr(self, "bool_calls", set())  # helpers' bool results (callsites)
        for a, arg in zip(operands, args):
            if kind_of(arg) != "bool" and id(arg) not in tests:
                what = (structures.describe(arg) if structures.is_structure(arg)
                        else kind_of(arg))
                raise self.src.error(a, f"`{_opsym(node.op)}` is supported between comparisons "
                                     "(bools, masks), where it is NumPy's logical "
                                     f"{LOGICAL[type(node.op)][11:]}, and between dicts; this "
                                     f"operand is {what} (bitwise arithmetic is not supported)")
        if all(isinstance(a, ir.Const) for a in args):
            p, q = (a.value for a in args)
            return ir.Const(bool({ast.BitAnd: p and q, ast.BitOr: p or q,
                                  ast.BitXor: p != q}[type(node.op)]))
        return self.emit(LOGICAL[type(node.op)], args, node, var, hint=hint)

    def runtime_comprehension(self, node: ast.expr, var: str | None = None):
        """The list of any length a comprehension over one makes, else None
        (:mod:`s2s_ad.frontend.comprehensions`)."""
        if not isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return None
        return comprehensions.runtime(self, node, var)

    def read(self, name: str, node: ast.AST) -> ir.Operand:
        if name in self.local_fns and name not in self.env:
            raise self.src.error(node, f"`{name}` is a nested function; s2s-ad can call it "
                                 f"(`{name}(...)`) or pass it to a function of yours "
                                 f"(`solve({name}, y)`), not use it as a value otherwise")
        if name in self.env:
            if isinstance(self.env[name], bound_partials.BoundPartial):
                bound_partials.refuse_value(self, node)  # not called: passed on, returned
            if isinstance(self.env[name], slice_values.SliceObject):
                raise slice_values.refuse_value(self, node, name)  # not an index
            if self.array_mode:
                self.check_stale(name, self.env[name], node)
            return self.env[name]
        if name in self.undefined:
            where, why = self.undefined[name]
            raise self.src.error(node, f"`{name}` may be undefined here: {why} "
                                 f"(line {where.lineno})")
        obj = self.src.globals.get(name, getattr(builtins, name, None))
        if isinstance(obj, numbers.Real) or (name in self.src.globals
                                             and statics.is_static_value(obj)):
            return self.constant(obj, node)  # a string, None or bool: static
        if isinstance(obj, (list, tuple)) and obj and all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) for v in obj):
            # A module-level list of numbers: constants, read when the gradient is made.
            return tuple(self.constant(v, node) for v in obj)
        if name in self.src.fn.__code__.co_freevars:
            raise self.src.error(node, f"`{name}` is a variable of an enclosing function "
                                 "(a closure), which s2s-ad cannot see; pass it as a parameter")
        if obj is None and name not in self.src.globals:
            raise self.src.error(node, f"name `{name}` is not defined")
        if library_names.is_random(obj):
            raise self.src.error(node, f"`{name}` is a {type(obj).__name__}: "
                                 f"{library_names.RANDOM_DRAWS}")
        raise self.src.error(node, f"`{name}` is a {type(obj).__name__}; only numbers can be "
                             "used as values here")

    def constant(self, value, node: ast.AST) -> ir.Const:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            if isinstance(value, bool) or value is None or isinstance(value, str):
                return ir.Const(value)  # static: refused where computed with (emit)
            raise self.src.error(node, f"the constant {value!r} is not a number")
        return ir.Const(int(value) if isinstance(value, numbers.Integral) else float(value))

    def emit(self, prim: str, args: list, node: ast.AST, var: str | None = None,
             text: str | None = None, hint: str | None = None,
             attrs: dict | None = None) -> ir.Value:
        for a in args:
            if statics.static(a):
                # at the literal, when the statement spells it
                at = next((n for n in walk(node) if isinstance(n, ast.Constant)
                           and n.value is a.value), node)
                raise self.src.error(at, f"{a.value!r} is used where a number is expected; "
                                     "strings and None select code (`if mode == \"l2\":`, "
                                     "`if x is None:`) and cannot be computed with")
        for a in args[1:] if prim in runtime_sorting.LIST_READS else args:
            if not isinstance(a, (ir.Value, ir.Const)) or (isinstance(a, ir.Value)
                                                            and a.kind in ("tuple", "list")):
                hint = ("; in NumPy code make the array first (`a = np.asarray(...)` of "
                        "the list) and compute with it" if self.array_mode else "")
                raise self.src.error(node, f"{structures.describe(a)} is used where a number is "
                                     f"expected; index it, unpack it or sum() it{hint}")
        kinds = [_kind(a) for a in args]
        attrs = attrs or {}
        if self.array_mode:
            prim = self.array_prim(prim, kinds, node)
            self.refuse_shape_arithmetic(prim, args, node)
            kind = self.result_kind(prim, kinds, attrs)
            kind, mask = array_kinds.adjust(self, prim, args, kinds, attrs, kind)
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
        if self.array_mode and mask:
            self.masks.add(id(out))
        if text is None:
            text = ast.unparse(node)
            if var is not None:
                text = f"{var} = {text}"
        op = ir.Op(prim, tuple(args), out, self.loc(node), text, attrs=attrs)
        self.ops.append(op)
        self.defs[id(out)] = op
        if self.array_mode:
            self.track_views(prim, args, out, attrs)
            index_exprs.note(self, prim, args, out, attrs)
            self.op_site[id(out)] = self.ops
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


def _kind(a: ir.Operand) -> str:
    if isinstance(a, ir.Value):
        return a.kind
    if isinstance(a.value, bool):
        return "bool"
    return "int" if isinstance(a.value, int) else "float"


def _opsym(op: ast.operator) -> str:
    return {ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
            ast.LShift: "<<", ast.RShift: ">>"}.get(type(op), type(op).__name__)

