"""The differentiated function's parameters, as SSA values of their kinds.

Contract: :class:`Parameters` is mixed into the lowering and turns the
``def``'s parameters into :class:`~s2s_ad.ir.Param` s, each with its kind: a
number (``float``, or ``int`` for a parameter used as one), an array, a list
or tuple (its items, or one run-time value), a structure (dict, dataclass,
NamedTuple: its fields), or a static value (a string, None or bool that
selects code, :mod:`s2s_ad.frontend.statics`). ``*args`` and ``**kwargs``
are refused with their location. It also recognises the length check that
code generated for a fixed length opens with (:meth:`Parameters.length_guard`),
so s2s-ad can read its own generated modules.

Before → after (``mode`` is static: its ``if`` is decided while lowering)::

    def f(x, n: int, mode="l2"):     func f(x, n, mode):
        if mode == "l2":               t1 = mul x x
            return x * x * n           out = mul t1 n
        return abs(x) * n              return out
"""

from __future__ import annotations

import ast
import math
import numbers
import types

import numpy

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import conditions, passing, pytrees, statics, structures


class Parameters:
    """Mixed into ``frontend._Lowering``; uses its ``src``, ``tree``, ``env``,
    ``namer`` and ``param_kind``."""

    def parameters(self) -> list[ir.Param]:
        args = self.tree.args
        self.passed_specs = [(name, self.passed[name]) for name in
                             [a.arg for a in args.posonlyargs + args.args]
                             + ([args.vararg.arg] if args.vararg else [])
                             + [a.arg for a in args.kwonlyargs]
                             + ([args.kwarg.arg] if args.kwarg else [])
                             if name in self.passed]
        for star, what in ((args.vararg, "`*args`"), (args.kwarg, "`**kwargs`")):
            if star is not None and star.arg not in self.passed:
                raise self.src.error(star, f"{what} parameters are supported in helpers (a "
                                     "call gives them their items); the function you "
                                     "differentiate cannot have one: name its parameters")
        fn = self.src.fn
        positional = list(args.posonlyargs) + list(args.args)
        defaults = list(fn.__defaults__ or ())
        first_default = len(positional) - len(defaults)
        params = []
        for i, a in enumerate(positional):
            if a.arg in self.passed:
                params += passing.params(self, a, self.passed.pop(a.arg), False)
                continue
            has = i >= first_default
            params.append(self.param(a, defaults[i - first_default] if has else None, has, False))
        if args.vararg is not None:
            params += passing.params(self, args.vararg, self.passed.pop(args.vararg.arg), False)
        kwdefaults = fn.__kwdefaults__ or {}
        for a in args.kwonlyargs:
            if a.arg in self.passed:
                params += passing.params(self, a, self.passed.pop(a.arg), True)
                continue
            params.append(self.param(a, kwdefaults.get(a.arg), a.arg in kwdefaults, True))
        if args.kwarg is not None:
            params += passing.params(self, args.kwarg, self.passed.pop(args.kwarg.arg), True)
        if self.passed:
            raise SourceError(f"passed names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, self.passed))}")
        if self.statics:
            raise SourceError(f"statics names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, self.statics))}")
        if self.lengths:
            raise SourceError(f"lengths names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, self.lengths))}")
        unknown = sorted({a.split("[")[0].split(".")[0] for a in self.arrays}
                         - {p.value.var for p in params}
                         - {name for name, _ in self.passed_specs})
        if unknown:
            raise SourceError(f"arrays names no parameter of {self.tree.name}: "
                              f"{', '.join(map(repr, unknown))}")
        return params

    def param(self, node: ast.arg, default, has_default: bool, kwonly: bool) -> ir.Param:
        if self.default_statics and has_default and statics.is_static_value(default) \
                and node.arg not in self.arrays and node.arg not in self.lengths:
            self.statics[node.arg] = default
        if node.arg in self.statics:
            value = self.statics.pop(node.arg)
            if isinstance(value, tuple):  # (no list of numbers: the ints it holds)
                self.lengths.pop(node.arg, None)
            if not statics.static_at_candidate(value):
                raise self.src.error(node, f"parameter {node.arg!r} is given {value!r}; a static "
                                     "argument is a string, None, a bool or a tuple of ints")
            self.given_statics[node.arg] = value
            self.integers[node.arg] = self.src.error(
                node, f"`{node.arg}` is a static argument (it is given {value!r}): it selects "
                "code and has no gradient")
            param = ir.Value(self.namer.claim(node.arg), "static", node.arg)
            self.env[node.arg] = tuple(ir.Const(v) for v in value) \
                if isinstance(value, tuple) else ir.Const(value)
            return ir.Param(param, default, has_default, kwonly)
        library = library_default(default) if has_default and not self.helper \
            and node.arg not in self.lengths else None
        if library is not None and (library[0] == "math" or getattr(self, "array_mode", False)):
            return self.function_param(node, default, kwonly)
        if has_default and node.arg in self.lengths and not _numbers(default):
            raise self.src.error(node, f"parameter {node.arg!r} receives a list; it cannot have "
                                 "a default value")
        if has_default and not isinstance(default, numbers.Real) and not _numbers(default) \
                and not (statics.is_static_value(default) and node.arg not in self.lengths):
            rewrite = "" if not callable(default) else (
                f"; a function of NumPy's or `math`'s is (`{node.arg}=np.tanh`); for another, "
                f"differentiate a function calling this one (`lambda w: {self.tree.name}(w)`), "
                "where the default is read as the helper's")
            raise self.src.error(node, f"the default value of parameter {node.arg!r} is "
                                 f"{type(default).__name__}; only numbers, strings, None, "
                                 "bools and tuples or lists of numbers are supported as "
                                 f"defaults{rewrite}")
        name = self.namer.claim(node.arg)
        if node.arg in self.src.captured:
            what = (f"module-level data {self.tree.name} reads" if node.arg in self.src.module_data
                    else f"a variable {self.tree.name} captures from the function that made it")
            self.integers[node.arg] = self.src.error(
                self.tree, f"`{node.arg}` is {what}: a constant of the gradient, which has no "
                "gradient with respect to it; to differentiate it, make it a parameter of "
                f"{self.tree.name}")
            held = self.src.captured[node.arg]
            spec = pytrees.captured_spec(held)
            if node.arg in self.lengths or (spec is not None and not pytrees.number_list(held)):
                # a captured structure: a structure parameter lowered for the
                # structure the closure holds now (cache.with_captured checks
                # every call that it still has that structure). A list of
                # numbers is a list of any length, found where it is used.
                if spec is not None:
                    self.lengths.setdefault(node.arg, ("tree", spec))
                return self._shaped(node, name, default, has_default, kwonly)
            kind = "float" if isinstance(held, numbers.Number) or spec is not None else "array"
            value = ir.Value(name, kind, node.arg)
            self.env[node.arg] = value
            self.param_ids.add(id(value))
            return ir.Param(value, None, False, kwonly)
        return self._shaped(node, name, default, has_default, kwonly)

    def function_param(self, node: ast.arg, default, kwonly: bool) -> ir.Param:
        """``def loss(w, act=np.tanh)`` differentiated itself: ``act`` is its
        default, a call of it a call of that function (``local_fns``), with no
        gradient; the generated code has the same default and raises, where it
        runs, for any other function passed for it (the code is for this one)."""
        module, alias = library_default(default)
        fixed = ir.FunctionDefault(module, default.__name__)  # (`self.modules` names it)
        self.local_fns[node.arg] = default
        self.integers[node.arg] = self.src.error(
            node, f"`{node.arg}` is a function (its default, `{alias}.{default.__name__}`): "
            "it has no gradient")
        self.given_statics[node.arg] = fixed  # the guard: `if act is not np.tanh: raise ...`
        param = ir.Value(self.namer.claim(node.arg), "static", node.arg)
        return ir.Param(param, fixed, True, kwonly)

    def _shaped(self, node: ast.arg, name: str, default, has_default: bool,
                kwonly: bool) -> ir.Param:
        """A parameter lowered for the shape its value is given: a structure,
        a list of a given length, or a number or array."""
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
            # in NumPy code, items not known to be arrays are arrays, unless
            # the function tests their class or uses them as structures
            # (`isinstance(node, float)` in a helper recursing over them)
            numbers = not getattr(self, "array_mode", False) or conditions.class_tested(
                self.tree, node.arg, self.src.globals)
            param = structures.sequence_param(self, node, name, shape, default, has_default,
                                              kwonly, numbers)
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
        if self.function_guard(test):
            return True
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

    def function_guard(self, test: ast.expr) -> bool:
        """Is ``test`` the one of the check a generated module makes of a
        parameter whose default is a library function, ``act is not
        np.tanh``, where ``act`` is lowered as that very function? Then the
        code generated from here is for it too (and checks it again)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.IsNot) and isinstance(test.left, ast.Name)
                and isinstance(self.given_statics.get(test.left.id), ir.FunctionDefault)):
            return False
        try:
            return self.resolve(test.comparators[0]) is self.local_fns.get(test.left.id)
        except SourceError:
            return False


def library_default(default) -> tuple | None:
    """``("numpy", "np")`` or ``("math", "math")`` for a parameter's default
    that is a function of NumPy's or of ``math`` under its own name
    (``act=np.tanh``, ``f=math.sin``); else None."""
    if not isinstance(default, (types.BuiltinFunctionType, numpy.ufunc, types.FunctionType)):
        return None
    name = getattr(default, "__name__", None)
    for module, alias in ((numpy, "np"), (math, "math")):
        if isinstance(name, str) and getattr(module, name, None) is default:
            return module.__name__, alias
    return None


def _numbers(default) -> bool:
    """A tuple or list of numbers (``coeffs=(1.0, 2.0)``): a default of a
    list parameter, used when the argument is not given."""
    return isinstance(default, (tuple, list)) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in default)
