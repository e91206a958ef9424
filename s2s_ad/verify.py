"""Verification: prove or refute a generated gradient with sympy.

Contract: :func:`check` runs the *original function* and the *generated
gradient source* on sympy symbols — ``math.sin`` becomes ``sympy.sin`` and so
on — and compares ``sympy.diff(original, x)`` with the generated expression
for each parameter. The verdict is

* ``proved``: ``simplify(difference) == 0``;
* ``agrees``: sympy could not decide, and the two agree to 1e-10 (relative)
  at N random points evaluated with 50-digit arithmetic — the verdict says so;
* ``mismatch``: they differ; the verdict shows both expressions.

Comparisons (``max``, ``abs`` at a branch, user ``if`` s) are decided at a
sample point, so the verdict holds on the branch that point takes; the
verdict names the point.

Symbolic execution has a time budget (``timeout``, 20 s by default): a
program whose expressions swell (a converging ``while`` loop, a long
recurrence) is checked against central differences instead, and the
verdict says it is not a proof. ``simplify`` gets its own share of the
budget; when it runs out, the random-point comparison decides.
"""

from __future__ import annotations

import ast
import contextlib
import random
import signal
import threading
import time
import types

import sympy

from s2s_ad import api
from s2s_ad.emit import module as emit
from s2s_ad.frontend import lowering as frontend, source as source_mod, targets
from s2s_ad.verdict import ParamResult, Verdict
from s2s_ad.errors import S2SError
from s2s_ad.rules import user as user_rules

SIMPLIFY_LIMIT = 400
"""Above this many operations, simplify() is skipped for the numeric check:
sympy's cost grows far faster than the expression (see docs/verification.md)."""

TIMEOUT = 20.0
"""Seconds of symbolic work before :func:`check` falls back to numbers."""


class _OutOfTime(BaseException):
    """BaseException, so that no `except Exception` inside sympy swallows it."""
    pass


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """Raise :class:`_OutOfTime` inside the block after ``seconds``, and again
    every 0.1 s until the block is left: a handler that runs inside a finalizer
    (a generator closed by the garbage collector) has its exception dropped,
    and a single expiry lost that way left sympy running unbounded. A deadline
    inside another one ends no later than the outer one, which holds again
    afterwards. Only the main thread can take a timer signal; elsewhere the
    block runs unbounded."""
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise _OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    outer, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    if 0 < outer < seconds:
        signal.setitimer(signal.ITIMER_REAL, outer, 0.1)
    try:
        yield
    finally:
        while True:  # a late expiry must not skip the disarming
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                if outer > 0:
                    left = outer - (time.monotonic() - started)
                    signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), outer_interval)
                break
            except _OutOfTime:
                continue


class _Step(sympy.Function):
    """A piecewise-constant function (floor, ceil, trunc): its derivative is
    zero wherever it exists, which sympy's own ``floor`` does not say."""

    _numeric = None

    def fdiff(self, argindex=1):
        return sympy.Integer(0)

    def _eval_evalf(self, prec):
        value = self.args[0].evalf(prec)
        if value.is_Number:
            return sympy.Float(self._numeric(value), prec)
        return None

    @classmethod
    def eval(cls, arg):
        if arg.is_Number:
            return sympy.Integer(cls._numeric(arg))
        return None


def _step(name, numeric):
    return type(name, (_Step,), {"_numeric": staticmethod(numeric)})


_floor = _step("floor", lambda v: int(sympy.floor(v)))
_ceil = _step("ceil", lambda v: int(sympy.ceiling(v)))
_trunc = _step("trunc", lambda v: int(v))


SYMPY_MATH = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "asin": sympy.asin,
    "acos": sympy.acos, "atan": sympy.atan, "atan2": sympy.atan2, "sinh": sympy.sinh,
    "cosh": sympy.cosh, "tanh": sympy.tanh, "asinh": sympy.asinh, "acosh": sympy.acosh,
    "atanh": sympy.atanh, "exp": sympy.exp, "exp2": lambda x: 2 ** x,
    "expm1": lambda x: sympy.exp(x) - 1,
    "log": lambda x, b=None: sympy.log(x) if b is None else sympy.log(x) / sympy.log(b),
    "log2": lambda x: sympy.log(x) / sympy.log(2), "log10": lambda x: sympy.log(x) / sympy.log(10),
    "log1p": lambda x: sympy.log(1 + x), "sqrt": sympy.sqrt, "cbrt": sympy.cbrt,
    "pow": lambda x, y: x ** y, "hypot": lambda x, y: sympy.sqrt(x * x + y * y),
    "erf": sympy.erf, "erfc": sympy.erfc, "fabs": sympy.Abs,
    "copysign": lambda x, y: sympy.Abs(x) * sympy.sign(y),
    "fmod": lambda x, y: x - y * _trunc(x / y), "floor": _floor, "ceil": _ceil,
    "trunc": _trunc, "degrees": lambda x: x * 180 / sympy.pi, "radians": lambda x: x * sympy.pi / 180,
    "pi": sympy.pi, "e": sympy.E, "tau": 2 * sympy.pi, "inf": sympy.oo, "nan": sympy.nan,
}


SYMPY_HELPERS = {"s2s_digamma": lambda x: sympy.polygamma(0, x)}
"""The functions of rules.scalar.SCALAR_HELPERS, as sympy builds them."""

def _sympy_prod(xs, start=1):
    out = start
    for x in xs:
        out = out * x
    return out


SYMPY_MATH.update({"lgamma": sympy.loggamma, "gamma": sympy.gamma,
                   "fsum": lambda xs: sum(xs, sympy.Integer(0)), "prod": _sympy_prod,
                   "dist": lambda p, q: sympy.sqrt(sum(((a - b) ** 2 for a, b in zip(p, q)),
                                                       sympy.Integer(0)))})


def sympy_math() -> types.SimpleNamespace:
    """A stand-in for the ``math`` module that builds sympy expressions."""
    return types.SimpleNamespace(**SYMPY_MATH)


class _Branches:
    """Decides comparisons between symbolic values at a sample point."""

    def __init__(self, point: dict):
        self.point = point
        self.decided: list[str] = []

    def compare(self, op: str, a, b) -> bool:
        va, vb = (sympy.sympify(v).subs(self.point).evalf(30) for v in (a, b))
        if not (va.is_real and vb.is_real):
            raise ArithmeticError(f"cannot decide {a} {op} {b} at the sample point")
        result = {"lt": va < vb, "le": va <= vb, "gt": va > vb, "ge": va >= vb,
                  "eq": va == vb, "ne": va != vb}[op]
        if _free(a) or _free(b):
            taken = op if result else _NEGATE[op]
            self.decided.append(f"{a} {_SYM[taken]} {b}")
        return bool(result)

    def namespace(self) -> dict:
        def max_(a, b):
            return a if self.compare("ge", a, b) else b

        def min_(a, b):
            return a if self.compare("le", a, b) else b

        def round_(x):
            return _floor(x + sympy.Rational(1, 2))

        return {"__cmp__": self.compare, "__mod__": lambda a, b: a - b * _floor(a / b),
                "__floordiv__": lambda a, b: _floor(a / b), "abs": sympy.Abs, "max": _nary(max_),
                "min": _nary(min_), "float": lambda x: x, "int": _trunc, "round": round_,
                "pow": lambda x, y: x ** y}


_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


def _free(v) -> bool:
    return bool(getattr(v, "free_symbols", None))


_SYM = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_CMP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


def _nary(f):
    def g(*args):
        if len(args) == 1:  # max(xs): the items of one iterable
            args = tuple(args[0])
        acc = args[0]
        for a in args[1:]:
            acc = f(acc, a)
        return acc
    return g


class _Comparisons(ast.NodeTransformer):
    """``a < b`` → ``__cmp__("lt", a, b)``, so a sample point decides it;
    ``a % b`` and ``a // b`` → their definitions through floor, whose
    derivative sympy then knows to be zero."""

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        name = {ast.Mod: "__mod__", ast.FloorDiv: "__floordiv__"}.get(type(node.op))
        if name is None:
            return node
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], []),
                                 node)

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) > 1 and all(type(op) in _CMP for op in node.ops):
            # a < b < c as a < b and b < c (b re-evaluated: pure code)
            sides = [node.left, *node.comparators]
            parts = [self.visit_Compare(ast.copy_location(ast.Compare(a, [op], [b]), node))
                     for a, op, b in zip(sides, node.ops, sides[1:])]
            return ast.copy_location(ast.BoolOp(ast.And(), parts), node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _CMP:
            return node
        call = ast.Call(ast.Name("__cmp__", ast.Load()),
                        [ast.Constant(_CMP[type(node.ops[0])]), node.left, node.comparators[0]], [])
        return ast.copy_location(call, node)


def _exec(tree: ast.Module, namespace: dict, filename: str) -> dict:
    tree = ast.fix_missing_locations(_Comparisons().visit(tree))
    exec(compile(tree, filename, "exec"), namespace)
    return namespace


def _uses_numpy(fn, lengths) -> bool:
    if lengths:
        return False
    try:
        return "numpy" in api.lower(fn).modules
    except Exception:  # the symbolic path reports the problem with its context
        return False


def check(fn, wrt=None, *, args: dict | None = None, at: dict | None = None,
          points: int = 8, seed: int = 0, output: int | None = None,
          lengths: dict | None = None, shapes: dict | None = None,
          timeout: float | None = TIMEOUT, mode: str = "reverse") -> Verdict:
    """Check the gradient s2s-ad generates for ``fn`` against ``sympy.diff``.

    Parameters
    ----------
    fn : function
        The function to check.
    wrt : int, str, sequence of them, or None
        The parameters whose partial derivatives are checked (default: all).
    args : dict, optional
        Concrete values for parameters that must stay numbers (trip counts).
    at : dict, optional
        The sample point that decides comparisons (default: 0.5, 0.7, ... per
        parameter); the verdict holds on the branch this point takes.
    points : int
        How many random points the numeric fallback evaluates.
    output : int, optional
        For a function returning a tuple or list: the item to check.
    lengths : dict, optional
        Lengths of list or tuple parameters (``{"xs": 3}``); each item is a
        symbol ``xs_0``, ``xs_1``, ... and is checked on its own.
    shapes : dict, optional
        For a function that uses NumPy: the shape of each array parameter
        (``{"W": (3, 4), "x": (4,)}``). sympy cannot run NumPy code, so such a
        function gets a numeric check against central differences instead
        (:mod:`s2s_ad.verify_arrays`), and the verdict says so.
    timeout : float or None
        Seconds the whole check may take, wall clock (default 20; None or 0:
        no limit). Symbolic work gets half; past it, a function of floats is
        checked against central differences in what is left, and the verdict
        says it is not a proof. Running out raises :class:`S2SError`.
    mode : "reverse" or "forward"
        Which generated code to check: the gradient (``grad``), or the
        forward-mode module (``jvp``), run once per parameter with a unit
        tangent there (and per item of a list parameter). Forward mode is
        checked symbolically only: for functions of numbers, within the
        symbolic budget.

    Returns
    -------
    Verdict
        ``.status`` is "proved", "agrees" or "mismatch"; ``str()`` is a report.
    """
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise S2SError(f"points must be a positive whole number, got {points!r} "
                       "(--points N / points=N, e.g. 8)")
    if timeout is not None and not timeout >= 0:
        raise S2SError(f"timeout must be 0 or more seconds, got {timeout!r} "
                       "(--timeout S / timeout=S; 0 or None for no limit)")
    timeout = timeout or None
    if mode not in ("reverse", "forward"):
        raise S2SError(f"mode must be 'reverse' or 'forward', got {mode!r}")
    _known_parameters(fn, args=args, at=at, shapes=shapes)
    if targets.captured_values(fn):
        raise S2SError(f"check does not run {fn.__name__}: it reads data from a closure or "
                       "from its object (self), which sympy cannot stand in for; check a "
                       "function taking them as parameters, or compare with central "
                       "differences")
    try:
        with _deadline(timeout):
            if mode == "forward":
                return _check_forward(fn, wrt, args, at, points, seed, output, lengths, shapes,
                                      timeout)
            return _check_within(fn, wrt, args, at, points, seed, output, lengths, shapes,
                                 timeout)
    except _OutOfTime:
        raise S2SError(f"checking {fn.__name__} took more than its {timeout:g} s budget "
                       "(evaluating it and its gradient did not finish); give smaller "
                       "values (--args/args=) or a larger --timeout/timeout=") from None
    except RecursionError:
        src = source_mod.locate(fn)
        loop = next((n for n in ast.walk(src.tree) if isinstance(n, (ast.For, ast.While))),
                    src.tree)
        raise src.error(loop, f"checking {fn.__name__} nests too deeply for Python (a loop of "
                        "many iterations builds one symbolic expression per step); check it "
                        "with fewer iterations (--args/args=) or against finite differences "
                        "(tests/oracle.py)") from None


def _known_parameters(fn, **given) -> None:
    """Every name in ``args``, ``at`` and ``shapes`` is a parameter of ``fn``."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return  # not a plain function: locate() refuses it with its own message
    for keyword, names in given.items():
        for name in names or {}:
            if name not in params:
                flag = {"shapes": "--shape"}.get(keyword, f"--{keyword}")
                raise S2SError(f"{keyword}={{{name!r}: ...}} ({flag} {name}=...): {fn.__name__} "
                               f"has no parameter {name!r} (parameters: {', '.join(params)})")


def _check_within(fn, wrt, args, at, points, seed, output, lengths, shapes, timeout):
    """:func:`check` inside its whole budget: symbolic work gets half of it,
    the numeric fallback what is left."""
    if shapes is not None or _uses_numpy(fn, lengths):
        from s2s_ad import verify_arrays
        return verify_arrays.check(fn, wrt, shapes=shapes or {}, args=args,
                                   points=min(points, 3), seed=seed)
    symbolic = None if timeout is None else timeout / 2
    started = time.monotonic()
    try:
        with _deadline(symbolic):
            return _check_symbolic(fn, wrt, args, at, points, seed, output, lengths,
                                   None if symbolic is None else started + symbolic)
    except (_OutOfTime, RecursionError) as exc:
        # sympy walks its expressions recursively: a long chain of updates
        # (a = a * x + y, a thousand times) nests deeper than Python's stack.
        why = (f"took more than {symbolic:g} s (its expressions swell)"
               if isinstance(exc, _OutOfTime) else
               "nests its expressions deeper than sympy can recurse")
        if lengths:
            raise S2SError(f"symbolic execution of {fn.__name__} {why}; check it with finite "
                           "differences (tests/oracle.py) or a smaller --length") from None
        from s2s_ad import verify_arrays
        return verify_arrays.check(
            fn, wrt, shapes={}, args=args, points=min(points, 3), seed=seed, positive=True,
            reason=f"symbolic execution {why}, so this is a numeric check (central differences "
                   "of the original function in float64), not a proof")


def _check_forward(fn, wrt, args, at, points, seed, output, lengths, shapes, timeout):
    """:func:`check` of the forward-mode module: symbolic only."""
    if shapes is not None or _uses_numpy(fn, lengths):
        raise S2SError(f"check --mode forward runs {fn.__name__}'s JVP on sympy symbols, which "
                       "NumPy code cannot take; test it against finite differences "
                       "(docs/forward.md)")
    try:
        return _check_symbolic(fn, wrt, args, at, points, seed, output, lengths,
                               None if timeout is None else time.monotonic() + timeout / 2,
                               forward=True)
    except RecursionError:
        raise S2SError(f"symbolic execution of {fn.__name__}'s JVP nests its expressions "
                       "deeper than sympy can recurse; give smaller values (--args)") from None


def _check_symbolic(fn, wrt, args, at, points, seed, output, lengths, deadline,
                    forward: bool = False) -> Verdict:
    args = dict(args or {})
    if forward:
        functions, src, graph = api.jvp_program(fn, wrt, lengths=lengths)
    else:
        functions, src, graph = api.program(fn, wrt, tuple_result=True, output=output,
                                            lengths=lengths, runtime_lists=False)
    func = graph.main
    if forward and func.result is None and output is None:
        raise api.OutputError(f"{func.name} returns {len(func.outputs)} values; pass output=K "
                              "(--output K) to choose the one to check")
    values, _ = api.resolve_wrt(func, wrt)
    code = functions[0]
    text = emit.module(functions, src.file)
    symbolic = _Symbolic()

    names = [p.value.var for p in func.params]
    # A list parameter gets one symbol per item, named "xs[0]", ... here.
    shapes = {p.value.var: p for p in func.params if p.items is not None}
    symbols = {}
    for n in names:
        if n in args:
            continue
        if n in shapes:
            for i in range(len(shapes[n].items)):
                symbols[f"{n}[{i}]"] = sympy.Symbol(f"{n}_{i}", real=True)
        else:
            symbols[n] = sympy.Symbol(n, real=True)
    point = {}
    for i, (n, sym) in enumerate(symbols.items()):
        point[sym] = sympy.Float((at or {}).get(n, 0.5 + 0.2 * i))
    branches = _Branches(point)

    call_args = {}
    for n in names:
        if n in shapes and n not in args:
            items = [symbols[f"{n}[{i}]"] for i in range(len(shapes[n].items))]
            call_args[n] = items if shapes[n].value.kind == "list" else tuple(items)
        else:
            call_args[n] = args.get(n, symbols.get(n))
    symbolic.branches = branches
    original = _run_original(src, symbolic, call_args)
    if output is not None:
        original = sympy.sympify(list(original)[output])
    if forward:
        generated = _tangents(text, code, values, shapes, output, functions, symbolic, graph,
                              call_args)
    else:
        call_args[code.seed] = sympy.Integer(1)
        generated = _run_generated(text, code.name, functions, symbolic, graph, call_args)
    rng = random.Random(seed)
    results = []
    for v, got in zip(values, generated):
        if v.var in args:
            raise api.WrtError(f"{v.var} is given a concrete value in args; it cannot also be "
                               "differentiated")
        pairs = ([(f"{v.var}[{i}]", g) for i, g in enumerate(got)] if v.var in shapes
                 else [(v.var, got)])
        for name, g in pairs:
            expected = sympy.diff(original, symbols[name])
            results.append(_compare(name, expected, sympy.sympify(g), symbols, point,
                                    bool(branches.decided), rng, points, deadline))
    notes = []
    if forward:
        notes.append(f"forward mode: {code.name} was run once per parameter, with a unit "
                     "tangent there and zero elsewhere, and each tangent compared")
    if branches.decided:
        at_text = ", ".join(f"{k}={v}" for k, v in point.items())
        notes.append(f"comparisons were decided at {at_text}; the verdict holds on that branch "
                     f"({'; '.join(dict.fromkeys(branches.decided))})")
    if args:
        notes.append("checked with " + ", ".join(f"{k}={v}" for k, v in args.items()))
    rules = [r.describe() for r in graph.rules]
    if rules:
        notes.append("the gradient rests on user derivative rules, taken as given (each "
                     "appears above as an undefined derivative D<i>_<name>): " + "; ".join(rules))
    return Verdict(func.name, results, notes, rules)


def _tangents(text, code, values, shapes, output, functions, symbolic, graph, call_args):
    """Per ``wrt`` parameter (per item of a list one): the JVP's tangent
    along the unit direction there, in the layout of a gradient."""
    names = [a.arg for a in code.args.kwonlyargs][-len(values):]

    def unit(k: int, item: int | None) -> dict:
        seeds = {}
        for j, (n, v) in enumerate(zip(names, values)):
            if v.var in shapes:
                count = len(shapes[v.var].items)
                seeds[n] = [sympy.Integer(int(j == k and i == item)) for i in range(count)]
            else:
                seeds[n] = sympy.Integer(int(j == k))
        return seeds

    def run(seeds: dict):
        tangent = _run_generated(text, code.name, functions, symbolic, graph,
                                 {**call_args, **seeds})[1]
        return tangent[output] if output is not None else tangent

    out = []
    for k, v in enumerate(values):
        if v.var in shapes:
            out.append([run(unit(k, i)) for i in range(len(shapes[v.var].items))])
        else:
            out.append(run(unit(k, None)))
    return out


def _run_original(src, symbolic: "_Symbolic", call_args: dict):
    f = symbolic.function(src.fn)
    value = f(**call_args)
    return value if isinstance(value, (tuple, list)) else sympy.sympify(value)


def _run_generated(text: str, name: str, functions, symbolic: "_Symbolic", graph, call_args: dict):
    tree = ast.parse(text)
    namespace = {alias: sympy_math() for fn in functions for alias in fn.source.modules.values()}
    namespace.update(symbolic.branches.namespace())
    # User rules are imported by the generated module; here they become
    # their symbolic stand-ins instead.
    stand_ins = {}
    for rule in graph.rules:
        fwd, bwd = symbolic.rule_pair(rule.fn)
        stand_ins[(rule.fwd.__module__, rule.fwd.__name__)] = fwd
        stand_ins[(rule.bwd.__module__, rule.bwd.__name__)] = bwd
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (node.module, alias.name) in stand_ins:
                    namespace[alias.asname or alias.name] = stand_ins[(node.module, alias.name)]
    tree.body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))
                 and not (isinstance(s, ast.FunctionDef) and s.name in SYMPY_HELPERS)]
    namespace.update(SYMPY_HELPERS)  # the module's own numeric helpers, as sympy functions
    _exec(tree, namespace, "<generated>")
    return namespace[name](**call_args)


class _Symbolic:
    """Runs user functions on sympy values: ``math`` becomes a sympy stand-in,
    helpers are re-executed from their source in such a namespace, and a
    function with a user rule becomes an undefined sympy function whose
    derivatives are undefined functions ``D<i>_<name>``."""

    def __init__(self):
        self.branches: _Branches | None = None
        self.memo: dict[int, object] = {}

    def convert(self, obj):
        import math
        if obj is math:
            return sympy_math()
        name = getattr(obj, "__name__", None)
        if name in SYMPY_MATH and getattr(math, name, None) is obj:
            return SYMPY_MATH[name]
        if isinstance(obj, types.FunctionType):
            if user_rules.lookup(obj) is not None:
                return self.rule_function(obj)
            if not frontend._is_library(obj):
                return self.lazy(obj)
        if isinstance(obj, types.ModuleType) and not frontend._is_library_module(obj):
            return _ModuleProxy(obj, self)
        return obj

    def lazy(self, fn):
        def call(*a, **k):
            return self.function(fn)(*a, **k)
        return call

    def function(self, fn):
        """``fn`` re-executed from its source with sympy stand-ins."""
        if id(fn) in self.memo:
            return self.memo[id(fn)]
        src = source_mod.locate(fn)
        namespace = {k: self.convert(v) for k, v in src.globals.items()
                     if not k.startswith("__")}
        namespace.update(self.branches.namespace())
        _exec(ast.Module([src.tree], []), namespace, src.file)
        self.memo[id(fn)] = namespace[src.tree.name]
        return self.memo[id(fn)]

    def rule_function(self, fn):
        key = ("rule", id(fn))
        if key not in self.memo:
            name = fn.__name__

            def fdiff(self_, argindex=1):
                return sympy.Function(f"D{argindex - 1}_{name}")(*self_.args)

            self.memo[key] = type(name, (sympy.Function,), {"fdiff": fdiff})
        return self.memo[key]

    def rule_pair(self, fn):
        F = self.rule_function(fn)
        name = fn.__name__

        def fwd(*args):
            return F(*args), args

        def bwd(res, g):
            return tuple(g * sympy.Function(f"D{i}_{name}")(*res) for i in range(len(res)))

        return fwd, bwd


class _ModuleProxy:
    """A user module seen through :class:`_Symbolic`: its functions and
    ``math`` are converted on access."""

    def __init__(self, module, symbolic: _Symbolic):
        self._module = module
        self._symbolic = symbolic

    def __getattr__(self, name):
        return self._symbolic.convert(getattr(self._module, name))


def _compare(name, expected, got, symbols, point, branched, rng, n,
             deadline: float | None = None) -> ParamResult:
    difference = expected - got
    if sympy.count_ops(difference) <= SIMPLIFY_LIMIT:
        # simplify may take up to half of what is left of the budget; the
        # random-point comparison below needs the rest.
        share = None if deadline is None else max(0.0, (deadline - time.monotonic()) / 2)
        try:
            with _deadline(share):
                if sympy.simplify(difference) == 0:
                    return ParamResult(name, "proved", expected, got)
        except _OutOfTime:
            pass
        except Exception:  # sympy gives up on some forms; fall back to numbers
            pass
    syms = list(symbols.values())
    tried = 0
    checked = 0
    worst = 0.0
    while checked < n and tried < 50 * n:
        tried += 1
        if branched:
            # Stay on the branch the sample point took.
            sub = {s: point[s] * (1 + rng.uniform(-1e-6, 1e-6)) for s in syms}
        else:
            lo, hi = rng.choice([(0.1, 0.9), (1.1, 3.0), (-0.9, -0.1), (-3.0, -1.1)])
            sub = {s: sympy.Float(rng.uniform(lo, hi), 50) for s in syms}
        e = sympy.sympify(expected).evalf(50, subs=sub)
        g = sympy.sympify(got).evalf(50, subs=sub)
        if not (e.is_real and e.is_finite):
            continue
        checked += 1
        if not (g.is_real and g.is_finite):
            return ParamResult(name, "mismatch", expected, got, f"at {sub}: generated gives {g}")
        err = abs(e - g) / max(1, abs(e))
        worst = max(worst, float(err))
        if err > 1e-10:
            return ParamResult(name, "mismatch", expected, got,
                               f"at {_fmt(sub)}: sympy {float(e):.17g}, generated {float(g):.17g}")
    if checked == 0:
        return ParamResult(name, "undecided", expected, got,
                           "no random point in the function's domain was found")
    return ParamResult(name, "agrees", expected, got,
                       f"at {checked} random points (largest relative difference {worst:.1e})")


def _fmt(sub: dict) -> str:
    return ", ".join(f"{k}={float(v):.6g}" for k, v in sub.items())
