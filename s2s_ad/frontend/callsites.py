"""Lowering calls: to builtins and ``math`` (primitives of the rule table),
to your functions (a ``call`` op to a forward/backward pair), to nested
functions and lambdas (lifted, :mod:`s2s_ad.frontend.closures`), with
``*args``/``**kw`` spread (:mod:`s2s_ad.frontend.syntax`).

Contract: mixed into the frontend's ``_Lowering`` (which provides ``src``,
``env``, ``expr``, ``emit``, ``namer``, ``ops``, the array methods);
:meth:`CallLowering.call` returns the operand a call computes, or raises a
located :class:`~s2s_ad.errors.SourceError`; :meth:`CallLowering.resolve`
the Python object a callee names.

Before → after, for ``h(x, c=y)`` with ``def h(a, b=2.0, c=0.0)``::

    h_1 = call h(x, 2.0, y)
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import math
import numbers
import operator
import types

import numpy

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import library_names, methods, module_data, param_uses, source
from s2s_ad.frontend.library_names import LIBRARY_MODULES
from s2s_ad.frontend import (bound_partials, callees, closures, conditions, container_methods,
                             flatten_forms, funargs,
                             index_checks, index_exprs, jax_names, list_slices, numpy_forms,
                             own_helpers, pair_layout, passing,
                             ranges, real_parts, runtime_lists, runtime_sorting, slice_values,
                             sorting, statics, stdlib_calls, structures, syntax)
from s2s_ad.rules import RULES
from s2s_ad.rules import user as user_rules
from s2s_ad.syntax_walk import walk

BUILTIN_PRIMS = {builtins.abs: "abs", builtins.max: "max", builtins.min: "min",
                 builtins.float: "float", builtins.int: "int", builtins.round: "round",
                 builtins.pow: "pow", builtins.len: "len"}




class CallLowering:
    """Mixin: calls (see the module docstring)."""

    def names_range(self, node: ast.expr) -> bool:
        """``range(...)`` or a name bound to one (not an array for ``len``)."""
        if isinstance(node, ast.Name):
            return ranges.is_range(self.env.get(node.id))
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in self.env and self.resolve(node.func) is builtins.range

    def integer_operand(self, node: ast.Call) -> ir.Operand:
        """``operator.index(n)``: ``n``, an integer (a gradient with respect to
        the parameters it is computed from is refused; a value that is not an
        int raises TypeError where the code runs, as ``operator.index`` does)."""
        value = self.expr(node.args[0])
        if isinstance(value, tuple) or isinstance(value, ir.Const) and type(value.value) is not int:
            raise self.src.error(node.args[0], "`operator.index` takes an int")
        bound = getattr(node, "range_bound", False)  # written for a loop computed at once
        self.mark_int(value, node.args[0], "a `range` bound" if bound else "`operator.index`")
        if isinstance(value, ir.Value):
            index_exprs.int_check(self, value, node, f"`{ast.unparse(node.args[0])}` (line "
                                  f"{node.lineno}) " + ("is a `range` bound: it " if bound else "")
                                  + "must be an int")
            return self.emit("int", [value], node, hint="count")  # an int from here on
        return value

    def call(self, node: ast.Call, var: str | None, hint: str | None = None) -> ir.Operand:
        own = index_checks.is_index(self, node, var)  # s2s-ad's own check, read back
        if own is not None:
            return own
        mark = len(self.spliced)
        try:
            # `f(x)` of `f = functools.partial(h, k=y)`: `h(x, k=y)`
            return self._call(bound_partials.expand(self, syntax.splice(self, node)), var, hint)
        finally:
            for name in self.spliced[mark:]:  # `f(*args)`: the items' names, bound for the call
                self.env.pop(name, None)
            del self.spliced[mark:]

    def _call(self, node: ast.Call, var: str | None, hint: str | None = None) -> ir.Operand:
        made = container_methods.call(self, node, var)
        if made is not None:  # `d.get(k, v)`, `xs.pop(0)`, `dict(a=x)`
            return made
        made = real_parts.call(self, node, var, hint)
        if made is not None:  # `x.conjugate()`, `np.real(x)`
            return made
        if isinstance(node.func, ast.Name) and node.func.id not in self.env \
                and self.resolve(node.func) is builtins.range:
            return ranges.make(self, node)  # a range as a value: `r = range(n)`
        if slice_values.is_slice_call(self, node):
            return slice_values.make(self, node)  # a slice as a value: `sl = slice(1, n)`
        if (isinstance(node.func, ast.Name) and node.func.id not in self.env
                or isinstance(node.func, ast.Attribute) and self.is_global_path(node.func.value)) \
                and self.resolve(node.func) is operator.index and len(node.args) == 1 \
                and not node.keywords and not isinstance(node.args[0], ast.Starred):
            return self.integer_operand(node)
        if self.array_mode and isinstance(node.func, ast.Attribute) \
                and not self.is_global_path(node.func.value):
            return self.method_call(node, var, hint)
        if self.array_mode:
            made = index_exprs.lower(self, self.resolve(node.func), node, var, hint)
            if made is not None:  # an integer index array computed from ints
                return made
            made = index_checks.distinct(self, node, var)
            if made is not None:  # s2s-ad's own test that a write picks distinct elements
                return made
            prim = self.numpy_prim(self.resolve(node.func))
            if prim is None and self.resolve(node.func) is builtins.len and node.args \
                    and not self.holds_structure(node.args[0]) \
                    and not self.names_range(node.args[0]):
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
        if fn is flatten_forms.ravel_leaves:  # autograd's flatten(params)[0]
            return flatten_forms.lower(self, node, var, hint)
        if bound_partials.is_partial_call(fn):  # `f = functools.partial(h, k=y)`
            return bound_partials.make(self, node)
        made = stdlib_calls.call(self, fn, node, var, hint)
        if made is not None:  # operator.mul(a, b), functools.reduce, math.isnan(x), ...
            return made
        if fn is builtins.zip:  # `xs, ys = zip(*pairs)`: the rows, known while lowering
            return tuple(structures._zip_or_enumerate(self, node))
        if fn is builtins.all or fn is builtins.any:
            return conditions.all_any(self, fn, node, var)
        if fn is builtins.isinstance:
            return conditions.isinstance_call(self, node, var)
        if sorting.is_keyed(fn, node):
            return sorting.keyed_call(self, fn, node, var, hint)
        if fn is builtins.sum:
            value = syntax.sum_call(self, node, var, hint)
            if value is not None:
                return value
        if fn is builtins.sum or fn is builtins.len:
            return structures.builtin(self, fn, node, var, hint)
        value = syntax.math_call(self, fn, node, var, hint)
        if value is not None:
            return value
        if isinstance(fn, functools.partial):
            name = getattr(fn.func, "__name__", "the function")
            raise self.src.error(node, f"`{ast.unparse(node.func)}` is a functools.partial of "
                                 f"{name}: s2s-ad differentiates a partial you give it "
                                 f"(grad({ast.unparse(node.func)})), not one your function "
                                 f"calls; call {name} with the fixed arguments written out")
        if source.rechecked(fn):  # a derivative re-reading module constants: its code now
            now = source.current(fn)  # (one whose code the call chooses: refused below)
            if source.made_code(now) is not None:
                fn = now
        own = own_helpers.primitive(fn)
        if own is not None:  # a helper s2s-ad's own generated code defines
            return own_helpers.call(self, own, node, var, hint)
        if isinstance(fn, types.FunctionType) and not _is_library(fn) \
                and not stdlib_calls.is_standard_library(fn):
            return self.user_call(fn, node, var, hint)
        if passing.record_class(fn) is not None:
            return passing.construct(self, fn, node)
        prim = self.primitive(fn, node)  # a function without a rule says so first
        if node.keywords:
            raise self.src.error(node, "keyword arguments in calls to "
                                 f"`{ast.unparse(node.func)}` are not supported")
        if prim in ("max", "min") and len(node.args) == 1:
            # max(xs), max(x * x for x in xs): the items, then as max(a, b, c)
            arg = node.args[0]
            if isinstance(arg, ast.Name) and passing.runtime_list(self, self.env.get(arg.id)):
                # a list of any length: the best position found when the code runs
                return runtime_sorting.keyed(self, fn, self.env[arg.id], None, False, node,
                                             var, hint)
            if list_slices.is_runtime_slice(self, arg):  # max(xs[1:])
                return runtime_sorting.keyed(self, fn, self.expr(arg), None, False, node,
                                             var, hint)
            made = self.runtime_comprehension(arg)  # max(c * x for c in cs), cs of any length
            if isinstance(made, ir.Value):
                return runtime_sorting.keyed(self, fn, made, None, False, node, var, hint)
            args = (list(made.items) if made is not None
                    else structures.comprehension(self, arg) if isinstance(arg, ast.GeneratorExp)
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
                if self.array_mode and any(isinstance(v, ir.Value) and v.kind == "array"
                                           for v in (acc, a)):
                    acc = self.extreme_of_two(prim, acc, a, node, var if last else None,
                                              hint if last else None)
                    continue
                acc = self.emit(prim, [acc, a], node, var if last else None, hint=hint if last else None)
            return acc
        if prim == "math.log" and len(args) == 2:
            prim = "math.log_base"
        if prim == "round" and len(args) == 2:
            prim = "round.digits"
        rule = RULES[prim]
        if len(args) != rule.arity:
            raise self.src.error(node, f"`{ast.unparse(node.func)}` takes {rule.arity} "
                                 f"argument(s) here, got {len(args)}")
        return self.emit(prim, args, node, var, hint=hint)

    def extreme_of_two(self, prim: str, a: ir.Operand, b: ir.Operand, node: ast.Call,
                       var: str | None, hint: str | None) -> ir.Operand:
        """Python's ``max(a, b)`` where an operand is an array (an element
        ``x[0]``, 0-d when the code runs): ``b if b > a else a`` (``<`` for
        ``min``), as Python's builtin decides, ties to ``a``; an array of
        several elements makes the comparison raise where the code runs, as
        Python's ``max`` does."""
        keys = (f"{prim}() operand 1", f"{prim}() operand 2")  # not Python names: no clash
        self.env[keys[0]], self.env[keys[1]] = a, b
        try:
            test = ast.Compare(ast.Name(keys[1], ast.Load()),
                               [ast.Gt() if prim == "max" else ast.Lt()],
                               [ast.Name(keys[0], ast.Load())])
            for n in walk(test):
                ast.copy_location(n, node)
            cond = self.condition(test, truthy=True)
            if isinstance(cond, ir.Const):
                return b if cond.value else a
            name = (var, True) if var is not None else (hint or prim, False)
            result = self.branches(cond, lambda: b, lambda: a, node, ast.unparse(node), value=name)
        finally:
            del self.env[keys[0]], self.env[keys[1]]
        if isinstance(result, ir.Value) and var is not None:
            self.env[var] = result
        return result

    def module_data_arguments(self, fn, sig: inspect.Signature, kwargs: dict, node: ast.Call,
                              what: str) -> tuple[inspect.Signature, dict]:
        """A helper reading module-level data (frontend/module_data.py) takes
        them as keyword-only parameters after its own: this function's values
        of them (its own parameters of those names), given at the call."""
        if not isinstance(fn, types.FunctionType) or hasattr(fn, "__s2s_source__") \
                or pair_layout.signature(fn) is not None:
            return sig, kwargs
        read = [n for n in module_data.names(fn) if n not in sig.parameters]
        if not read:
            return sig, kwargs
        here = getattr(self, "arguments", {})
        same = module_data.same_module(fn.__globals__, self.src.globals)
        for n in read:
            if not same or here.get(n) is None:
                raise self.src.error(node, f"`{what}` reads the module-level data `{n}` of its "
                                     "module, which this function is not given (a helper of "
                                     "another module, or one passed as an argument): module-level "
                                     "arrays are read for the functions of the differentiated "
                                     f"function's own module; pass `{n}` as a parameter")
            kwargs[n] = here[n]  # the module's value, even where a local shadows the name
        params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in read]
        params += [p for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD]
        return sig.replace(parameters=params), kwargs

    def user_call(self, fn: types.FunctionType, node: ast.Call, var: str | None,
                  hint: str | None) -> ir.Value:
        """A call to a user function: a ``call`` op whose operands are the
        arguments in the callee's parameter order, keywords matched and
        defaults filled in, so every call site of a helper has one shape."""
        written = node
        fn, node = funargs.specialise(self, fn, node, _is_library)  # h(f, ...), f a function
        what = ast.unparse(node.func)
        sig = pair_layout.signature(fn) or inspect.signature(fn)  # s2s-ad's own H_bwd: its tape split
        # a tuple a call returned is passed as the tuple of its items
        args = [structures.forwarded(self, self.expr(a), a) for a in node.args]
        kwargs = {k.arg: structures.forwarded(self, self.expr(k.value), k.value)
                  for k in node.keywords}
        sig, kwargs = self.module_data_arguments(fn, sig, kwargs, node, what)
        for free in getattr(fn, "__s2s_free__", ()):
            # late binding: the enclosing function's variable as it is at the call
            if getattr(fn, "__s2s_free_as__", {}).get(free, free) not in self.env:
                raise self.src.error(node, f"`{what}` reads `{free}` of the enclosing "
                                     f"function, which has no value at this call")
            kwargs[free] = structures.forwarded(  # a call's tuple: its items
                self, self.read(getattr(fn, "__s2s_free_as__", {}).get(free, free), node), node)
        for a in [*args, *kwargs.values()]:
            if isinstance(a, ir.Value) and a.kind in ("tuple", "list") \
                    and not passing.runtime_list(self, a):
                raise self.src.error(node, f"`{what}` is passed {structures.describe(a)}; "
                                     "such a value is not passed whole to a helper: pass a "
                                     "number computed from it, or its items")
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            if pair_layout.signature(fn) is not None:
                raise self.src.error(node, f"`{what}` is the backward function of a helper "
                                     "pair s2s-ad generated, and the tape passed here is not "
                                     "the one its forward function returned to this function "
                                     "(a helper's tape inside another helper's tape is not "
                                     "split yet): differentiate the original function") from None
            raise self.src.error(node, f"call to `{what}`: {exc}") from None
        given = set(bound.arguments)
        bound.apply_defaults()
        for p, v in getattr(fn, "__s2s_defaults_at_def__", {}).items():
            if p not in given:  # `def h(t, scale=k)`: k as it was at the `def`
                bound.arguments[p] = v
        operands = []
        passed = []
        lists = []  # lists built here passed whole: the helper may grow them
        for name, value in bound.arguments.items():
            kind = sig.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                value = tuple(value)  # `def h(*args)`: the tuple it collects
            elif kind == inspect.Parameter.VAR_KEYWORD:
                value = structures.StaticDict(dict(value))  # `**kw`: a dict
            elif type(value) in (tuple, list) and all(
                    isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
                value = tuple(ir.Const(v) for v in value)  # a default `coeffs=(1.0, 2.0)`
            if passing.runtime_list(self, value):
                # a list of any length: one operand, the helper reads it when it runs
                passed.append((name, ("runtime", value.kind)))
                operands.append(value)
                continue
            if passing.is_passed(value):
                spec, leaves = passing.flatten(self, value, node, what)
                passed.append((name, spec))
                if isinstance(value, structures.StaticList):
                    lists.append(value)
                operands += leaves
                continue
            if isinstance(value, slice_values.SliceObject):  # h(x, slice(0, n))
                raise slice_values.refuse_value(self, node, f"{what}`'s argument `{name}")
            if not isinstance(value, (ir.Value, ir.Const)):
                if not isinstance(value, numbers.Real) and not statics.is_static_value(value):
                    raise self.src.error(node, f"`{what}`: the default value of parameter "
                                         f"{name!r} is {type(value).__name__}; only numeric "
                                         "defaults are supported")
                value = self.constant(value, node)
            operands.append(value)
        callee = ir.Callee(fn, user_rules.lookup(fn))
        if passed:
            if callee.rule is not None:
                raise self.src.error(node, f"`{what}` has a user rule; pass it numbers or "
                                     "arrays, not a structure")
            callee.passed = tuple(passed)
        if var is not None:
            name = self.namer.claim(var)
        else:
            name = self.namer.fresh(hint or fn.__name__)
        # In NumPy code a helper may return an array of any shape.
        out = ir.Value(name, "array" if self.array_mode else "float", var)
        callee.tape = ir.Value(self.namer.fresh(f"{name}_tape"), "tape")
        text = ast.unparse(written)
        if var is not None:
            text = f"{var} = {text}"
            self.env[var] = out
        op = ir.Op("call", tuple(operands), out, self.loc(node), text, callee)
        self.ops.append(op)
        self.call_values.add(id(out))
        self.__dict__.setdefault("call_ops", {})[id(out)] = op  # (structures.items_of)
        if callee.rule is None:
            lowered = self.lower_callee(op)
            if lowered is None and id(out) in self.call_failures:
                structures.note_failed_call(self, lists, self.call_failures[id(out)])
            callee.effects = lowered is None or ir.has_checks(lowered)
            if lowered is not None and lowered.returns_argument is not None:
                # `return xs` of a list parameter: the caller's own list, the same object
                same = bound.arguments[lowered.returns_argument]
                out.kind = "tuple"  # (the call's own items are not read)
                if var is not None:
                    self.env[var] = same
                return same
            if lowered is not None and not passed:
                structures.note_identity_call(self, op, lowered, node)
            if lowered is not None and isinstance(lowered.result, ir.Value) \
                    and lowered.result.kind == "list":
                # a list grown at run time: read as a list of any length
                runtime_lists.call_result(self, out, node)
                return out
            if lowered is not None:
                index_exprs.call_result(self, out, lowered)
            if lowered is not None and isinstance(lowered.result, ir.Value) \
                    and lowered.result.kind == "bool":
                # a helper returning a test (inside(x, lo, hi)): read as a number or an
                # array, and as a bool by `&`, `|`, `^` (lowering.logical)
                self.__dict__.setdefault("bool_calls", set()).add(id(out))
            if lowered is not None and lowered.outputs is not None:
                # a flat tuple: `r = h(x)` then `r[0]` reads an item, in NumPy code
                # too (where `r[0]` could be a row of an array a helper returns)
                self.__dict__.setdefault("tuple_calls", {})[id(out)] = len(lowered.outputs)
                # a flat tuple holding lists of any length (a gradient module's
                # `return dcoeffs, dx`): those items are read as such lists
                self.__dict__.setdefault("list_items", {})[id(out)] = {
                    k for k, o in enumerate(lowered.outputs)
                    if isinstance(o, ir.Value) and o.kind == "list"}
                if var is not None:
                    structures.call_items(self, out, lowered.outputs, node)
            if lowered is not None and lowered.returns is not None:
                # a dict, NamedTuple, dataclass or nested tuples: read leaf by leaf
                callee.returns = lowered.returns
                return passing.rebuild(self, out, lowered.returns, node)
            if lowered is None and callees.recursing(op):
                # a recursion returning nested tuples (a JVP module's `return (a, b),
                # (da, db)`): read by the nesting its returns write out
                written = passing.written_returns(
                    source.locate(fn).tree, "array" if self.array_mode else "float")
                if written is not None:
                    callee.returns = written
                    return passing.rebuild(self, out, written, node)
                self.__dict__.setdefault("recursive_results", {})[id(out)] = fn.__name__
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
        if "#" in what:  # the function of a functools.partial (bound_partials.expand)
            what = what.split("#")[0] + ".func"
        if source.rechecked(fn):  # a derivative choosing its code per call: its message
            try:
                source.generated_code(fn)
            except SourceError as exc:
                raise self.src.error(node, exc.message) from None
        if isinstance(getattr(fn, "__self__", None), numpy.ufunc):  # np.add.outer, ...
            raise numpy_forms.ufunc_method_refusal(self.src, node, fn)
        if fn in (builtins.eval, builtins.exec, builtins.compile):
            raise self.src.error(node, f"`{what}` runs code s2s-ad cannot see; dynamic code "
                                 "is not supported")
        if name and getattr(math, name, None) is fn:
            raise self.src.error(node, f"`{what}` has no derivative rule in s2s-ad")
        if library_names.is_random(fn):
            raise self.src.error(node, f"`{what}`: {library_names.RANDOM_DRAWS}")
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
        if isinstance(node, ast.Name) and node.id in self.local_fns:
            return self.local_fns[node.id]
        if isinstance(node, ast.Lambda):  # (lambda t: t * t)(x)
            return closures.lift(self.src, node, self.namer.fresh("lambda"), self.locals_,
                                 self.local_fns)
        if isinstance(node, ast.Name):
            if node.id in self.env:
                held = self.env[node.id]
                if isinstance(held, ir.Value) and held.kind in ("float", "array") \
                        and param_uses.is_param(self, held):
                    # a parameter looked into (`m.loss(x)`): a structure, lowered as
                    # one for each call's argument
                    structures._param_used_as_sequence(self, held, node, ("float", "array"))
                if isinstance(held, structures.StaticObject):
                    raise self.src.error(node, f"`{node.id}` is {structures.describe(held)} "
                                         "parameter: s2s-ad reads its fields "
                                         f"(`{node.id}.field`), not its methods; call a "
                                         "function of yours taking it")
                raise self.src.error(node, f"`{node.id}` is a local value, not something "
                                     "s2s-ad can call or look into")
            if node.id in self.src.globals:
                return self.src.globals[node.id]
            if hasattr(builtins, node.id):
                return getattr(builtins, node.id)
            raise self.src.error(node, f"name `{node.id}` is not defined")
        if isinstance(node, ast.Attribute):
            held = self.env.get(node.value.id) if isinstance(node.value, ast.Name) else None
            if isinstance(held, (tuple, structures.StaticList, structures.StaticDict)) or (
                    isinstance(held, ir.Value) and held.kind in ("list", "tuple")):
                # `xs.index(v)`, `xs.count(v)`: a method the lowering does not read
                raise self.src.error(node, f"`{ast.unparse(node)}`: `{node.value.id}` is "
                                     f"{structures.describe(held)}; s2s-ad reads its items, "
                                     "`len`, `sum`, loops over it and the methods append, "
                                     "extend, pop, insert, reverse, sort, copy (of a dict: "
                                     "get, items, keys, values, update), not "
                                     f"`.{node.attr}`: write it as a loop over "
                                     f"`range(len({node.value.id}))`")
            base = self.resolve(node.value)
            if isinstance(base, type) and isinstance(
                    inspect.getattr_static(base, node.attr, None), (staticmethod, classmethod)):
                made = getattr(base, node.attr)  # Class.static_fn(x)
                if methods.is_bound(made) and made.__self__ is base \
                        and not _is_library(made.__func__):
                    return methods.class_function(made)  # Class.cm(x): `cls` is the class
                return made
            if isinstance(base, type) and not isinstance(
                    inspect.getattr_static(base, node.attr, None), types.FunctionType) \
                    and (isinstance(getattr(base, node.attr, None), numbers.Real)
                         or statics.is_static_value(getattr(base, node.attr, ""))):
                return getattr(base, node.attr)  # Class.CONSTANT
            if isinstance(base, numpy.ufunc) and node.attr in numpy_forms.UFUNC_METHOD_NAMES:
                return getattr(base, node.attr)  # np.maximum.accumulate: a ufunc's method
            if library_names.is_random(base):  # RS.randn(3), RS a module's RandomState
                raise self.src.error(node, f"`{ast.unparse(node)}`: "
                                     f"{library_names.RANDOM_DRAWS}")
            if not isinstance(base, types.ModuleType):
                raise self.src.error(node, f"`{ast.unparse(node)}`: attribute access is only "
                                     "supported on modules (like `math.sin`)")
            if not hasattr(base, node.attr):
                raise self.src.error(node, f"module {base.__name__} has no attribute {node.attr!r}")
            return jax_names.twin(getattr(base, node.attr))  # jax.numpy.sum: np.sum
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            # ACTIVATIONS[name](x): a module-level table of functions at a key
            # known while lowering (a constant, or a string or int parameter)
            table = self.resolve(node.value)
            key = self.static_key(node.slice)
            if isinstance(table, (dict, list, tuple)) and key is None \
                    and isinstance(node.slice, ast.Name) \
                    and id(self.env.get(node.slice.id)) in self.param_ids:
                # a parameter without a string default keying the table: it is
                # static when the call gives it a string (code per value)
                raise statics.StaticUse(self.src.error(node.slice, f"`{ast.unparse(node)}` "
                                                       "reads a table of functions at a "
                                                       "parameter lowered as a number; give "
                                                       "it a string default or name its "
                                                       "value (statics=, --static)"))
            if isinstance(table, (dict, list, tuple)) and key is not None:
                try:
                    item = table[key]
                except (KeyError, IndexError, TypeError):
                    raise self.src.error(node.slice, f"`{ast.unparse(node.value)}` has no item "
                                         f"{key!r}") from None
                if _is_function(item):
                    return item
        if isinstance(node, ast.Call):
            made = self.derivative_made(node)  # `s2s_ad.grad(g)(x)`
            if made is not None:
                return made
        raise self.src.error(node, f"`{ast.unparse(node)}` is not supported as a callee")

    def derivative_made(self, node: ast.Call):
        """``s2s_ad.grad(g)`` (``wrt=`` and the other arguments constants) of a
        function ``g`` known while lowering (a module-level function, not a
        nested one reading this function's values): the derivative function
        itself, made now, as a module-level ``DG = s2s_ad.grad(g)`` is (calls
        of it are calls of that function); None for any other call. A
        derivative of a nested function or with arguments computed here is
        refused, located."""
        if isinstance(node.func, ast.Name) and (node.func.id in self.env
                                                or node.func.id in self.local_fns):
            return None
        try:
            maker = self.resolve(node.func)
        except SourceError:
            return None
        if getattr(maker, "__module__", None) != "s2s_ad.api" \
                or getattr(maker, "__name__", None) not in DERIVATIVE_MAKERS:
            return None
        what = ast.unparse(node)
        first = node.args[0] if node.args else None
        if not isinstance(first, (ast.Name, ast.Attribute)) or any(
                isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords) \
                or isinstance(first, ast.Name) and (first.id in self.env
                                                    or first.id in self.local_fns):
            raise self.src.error(node, f"`{what}` is made inside the function differentiated: "
                                 "s2s-ad makes it while generating the code where it "
                                 "differentiates a module-level function with constant "
                                 "arguments (`s2s_ad.grad(g, wrt=0)`); make this one at "
                                 "module level (`DG = s2s_ad.grad(g)`) and call it")
        try:
            fn = self.resolve(first)
            rest = [ast.literal_eval(a) for a in node.args[1:]]
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        except (SourceError, ValueError, TypeError, SyntaxError):
            raise self.src.error(node, f"`{what}`: s2s-ad makes a derivative inside the "
                                 "function differentiated of a module-level function with "
                                 "constant arguments; make this one at module level "
                                 "(`DG = s2s_ad.grad(g)`) and call it") from None
        return maker(fn, *rest, **keywords)

    def static_key(self, node: ast.expr):
        """The value of ``node``, a key or index known while lowering: a
        constant string or int, or a name bound to a static string or an int
        constant; None otherwise."""
        if isinstance(node, ast.Constant) and type(node.value) in (str, int):
            return node.value
        if isinstance(node, ast.Name):
            v = self.env.get(node.id)
            if isinstance(v, ir.Const) and type(v.value) in (str, int):
                return v.value
        if isinstance(node, ast.JoinedStr):  # f"W{i}", each part known while lowering
            parts = [self.static_key(v) for v in node.values]
            return None if any(p is None for p in parts) else "".join(map(str, parts))
        if isinstance(node, ast.FormattedValue):
            value = self.static_key(node.value)
            spec = "" if node.format_spec is None else self.static_key(node.format_spec)
            if value is None or spec is None:
                return None
            value = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda v: v)(value)
            return format(value, spec)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "W" + str(i)
            left, right = self.static_key(node.left), self.static_key(node.right)
            if type(left) is type(right) and left is not None:
                return left + right
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id not in self.env and len(node.args) == 1 \
                and not node.keywords and self.resolve(node.func) is builtins.str:
            value = self.static_key(node.args[0])
            return None if value is None else str(value)
        return None

    def function_alias(self, stmt: ast.stmt) -> bool:
        """``f = ACTIVATIONS[name]``, ``g = math.sin``, ``h = helper``: a local
        name for a function (a module-level one, or an item of a module-level
        table at a key known while lowering), called as that function; False
        when ``stmt`` is not such an assignment."""
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, (ast.Name, ast.Attribute, ast.Subscript))) \
                or self.region_depth > self.loop_depth:
            return self.derivative_alias(stmt)  # (in a branch the name would depend on it)
        root = stmt.value
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in self.env:
            return False
        try:
            fn = self.resolve(stmt.value)
        except SourceError:
            return False
        name = stmt.targets[0].id
        if not _is_function(fn) or name in self.env or name in self.local_fns:
            return False
        self.local_fns[name] = fn
        return True

    def derivative_alias(self, stmt: ast.stmt) -> bool:
        """``dg = s2s_ad.grad(g)``: a local name for that derivative function
        (:meth:`derivative_made`), called as it."""
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and self.region_depth <= self.loop_depth):
            return False
        name = stmt.targets[0].id
        if name in self.env or name in self.local_fns:
            return False
        made = self.derivative_made(stmt.value)
        if made is None:
            return False
        self.local_fns[name] = made
        return True


DERIVATIVE_MAKERS = frozenset({"grad", "jvp"})
"""The functions of :mod:`s2s_ad.api` returning a derivative function, which
the code may make inside the function differentiated (``dg = s2s_ad.grad(g)``)."""


def _is_function(obj) -> bool:
    """A function, a builtin or a NumPy ufunc (not a class, not a value)."""
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, numpy.ufunc))


def _is_library(fn: types.FunctionType) -> bool:
    """Functions of installed libraries (NumPy's, the standard library's) are
    not the user's: they are primitives or refused, never lowered."""
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in LIBRARY_MODULES and user_rules.lookup(fn) is None


def _is_library_module(module: types.ModuleType) -> bool:
    return (module.__name__ or "").split(".")[0] in LIBRARY_MODULES

