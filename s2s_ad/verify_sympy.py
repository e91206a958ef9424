"""Running Python on sympy symbols: the machinery :func:`s2s_ad.check` uses.

Contract: the original function is re-executed from its source with ``math``
replaced by sympy stand-ins (:func:`sympy_math`), helpers re-executed the same
way, and user rules as undefined sympy functions (:class:`_Symbolic`); the
generated module's text is executed on the same symbols
(:func:`_run_generated`). Every comparison between symbolic values is
rewritten (:class:`_Comparisons`) so that a sample point decides it
(:class:`_Branches`), which records the decisions: the path the point takes.
:func:`_deadline` bounds symbolic work in time.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
import signal
import threading
import time
import types

import sympy

from s2s_ad.frontend import callsites, methods, source as source_mod
from s2s_ad.rules import user as user_rules


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
    except SystemError as error:
        # The timer's exception raised inside CPython's compiler (sympy compiles
        # code) comes out as "AST constructor recursion depth mismatch"
        if time.monotonic() - started >= seconds:
            raise _OutOfTime() from error
        raise
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
        self.decided: list[tuple] = []
        """The comparisons of symbolic values decided, in order, each as
        ``(a, op taken, b)`` (:func:`describe` writes one out)."""

    def compare(self, op: str, a, b) -> bool:
        if isinstance(a, (str, type(None), bool)) or isinstance(b, (str, type(None), bool)):
            # a static value (`opts["mode"] == "l2"`): compared as Python does
            return {"lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b,
                    "ge": lambda: a >= b, "eq": lambda: a == b, "ne": lambda: a != b}[op]()
        va, vb = (sympy.sympify(v).evalf(30, subs=self.point) for v in (a, b))
        if not (va.is_real and vb.is_real):
            raise ArithmeticError(f"cannot decide {a} {op} {b} at the sample point")
        result = {"lt": va < vb, "le": va <= vb, "gt": va > vb, "ge": va >= vb,
                  "eq": va == vb, "ne": va != vb}[op]
        if _free(a) or _free(b):
            taken = op if result else _NEGATE[op]
            self.decided.append((a, taken, b))
        return bool(result)

    def namespace(self) -> dict:
        def max_(a, b):
            return a if self.compare("ge", a, b) else b

        def min_(a, b):
            return a if self.compare("le", a, b) else b

        def round_(x):
            return _floor(x + sympy.Rational(1, 2))

        def keyed(op):
            def pick(*args, key=None):
                if key is None:
                    return _nary(max_ if op == "gt" else min_)(*args)
                items = list(args[0]) if len(args) == 1 else list(args)
                best, kbest = items[0], key(items[0])
                for a in items[1:]:  # the first best stays, as in Python
                    ka = key(a)
                    if self.compare(op, ka, kbest):
                        best, kbest = a, ka
                return best
            return pick

        def sorted_(xs, key=None, reverse=False):
            # a stable insertion sort on comparisons decided at the point
            out = []
            for x in xs:
                kx = x if key is None else key(x)
                k = len(out)
                while k > 0 and self.compare("gt" if reverse else "lt", kx, out[k - 1][0]):
                    k -= 1
                out.insert(k, (kx, x))
            return [x for _, x in out]

        def float_(x):
            return x

        def isinstance_(x, classes):
            # a symbol stands for a float (as the generated code was made for one)
            classes = classes if isinstance(classes, tuple) else (classes,)
            classes = tuple({id(float_): float, id(_trunc): int}.get(id(c), c) for c in classes)
            if isinstance(x, sympy.Basic):
                return issubclass(float, classes)
            return isinstance(x, classes)

        return {"__cmp__": self.compare, "__mod__": lambda a, b: a - b * _floor(a / b),
                "__floordiv__": lambda a, b: _floor(a / b), "abs": sympy.Abs, "max": keyed("gt"),
                "min": keyed("lt"), "sorted": sorted_, "float": float_, "int": _trunc, "round": round_,
                "pow": lambda x, y: x ** y, "isinstance": isinstance_}


def describe(decision: tuple) -> str:
    """``(a, "lt", b)`` → ``"a < b"``."""
    a, taken, b = decision
    return f"{a} {_SYM[taken]} {b}"


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
            if not callsites._is_library(obj):
                return self.lazy(obj)
        if isinstance(obj, types.ModuleType) and not callsites._is_library_module(obj):
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
        tree = self.class_calls(src.tree, src.globals, namespace)
        _exec(ast.Module([tree], []), namespace, src.file)
        self.memo[id(fn)] = namespace[src.tree.name]
        return self.memo[id(fn)]

    def class_calls(self, tree: ast.FunctionDef, globals_: dict, namespace: dict):
        """``tree`` (a copy, where it changes) with each ``Class.fn`` of a static or
        class method of a class of yours read as one name bound to that method
        re-executed on sympy values (a classmethod's ``cls`` the class)."""
        found = {}

        class Calls(ast.NodeTransformer):
            def visit_Attribute(self, node: ast.Attribute):
                base = globals_.get(node.value.id) if isinstance(node.value, ast.Name) else None
                held = inspect.getattr_static(base, node.attr, None) \
                    if isinstance(base, type) else None
                if isinstance(held, (staticmethod, classmethod)) and isinstance(
                        held.__func__, types.FunctionType) and not callsites._is_library(
                        held.__func__):
                    name = f"{node.value.id}.{node.attr}"
                    found[name] = held.__func__ if isinstance(held, staticmethod) else \
                        methods.class_function(getattr(base, node.attr))
                    return ast.copy_location(ast.Name(name, ast.Load()), node)
                self.generic_visit(node)
                return node

        made = Calls().visit(copy.deepcopy(tree))
        namespace.update((n, self.lazy(f)) for n, f in found.items())
        return made if found else tree

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
