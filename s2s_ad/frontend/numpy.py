"""Frontend, NumPy part: array expressions → SSA IR.

Contract: :class:`ArrayLowering` is mixed into the frontend's lowering and
handles what only arrays have: calls to ``numpy`` functions (with keyword
attributes such as ``axis=0``, ``keepdims=True``, which must be constants),
array methods (``x.sum(axis=0)``, ``x.reshape(n, -1)``), attributes
(``x.T``, ``x.shape``), ``@``, subscripts (``x[i, 1:-1]``), and subscript
assignment (``y[i] = e``, ``y[i] += e``) on a local array the function
created itself. Anything else NumPy offers is refused by name.

Before → after::

    def f(W, x):                   func f(W, x):
        h = np.tanh(W @ x)   ──▶      t1 = matmul W x
        return h.sum(axis=0)          h = np.tanh t1
                                      out = np.sum h axis=0

A function is in *array mode* when it refers to ``numpy`` (its parameters
are then arrays of unknown shape, kind ``"array"``, unless annotated
``float`` or ``int`` or given a numeric default), or when it is lowered for
arguments that are arrays (``arrays``: the parameters a call site or the
top-level call gives an array, arrays whatever the source says; the others
are numbers in a function that never names NumPy). Subscript assignment mutates in place,
as Python does, so two situations that would make the SSA form disagree with
Python are refused: assigning into a parameter or a view (it would change
another array), and reading a view of an array after that array was assigned
into (the view would have changed under it).
"""

from __future__ import annotations

import ast
import inspect
import numbers
import types

import numpy

from s2s_ad import ir
from s2s_ad.frontend import (conditions, index_exprs, library_names, list_joins, list_stacks,
                             masked_reductions, numpy_attrs, numpy_more, param_uses,
                             runtime_checks, structures, torch_names, write_dtypes)
from s2s_ad.frontend.numpy_index import VIEW_CALLS, ArrayIndexing
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE
from s2s_ad.syntax_walk import walk


REDUCTIONS = {"sum", "mean", "prod", "max", "min", "var", "std", "nansum", "nanmean"}
LIST_REDUCTIONS = {f"np.{r}" for r in REDUCTIONS}
"""Reductions that read a list of arrays as the array NumPy makes of it."""
METHODS = {"sum": "np.sum", "mean": "np.mean", "prod": "np.prod", "max": "np.max",
           "min": "np.min", "reshape": "np.reshape", "transpose": "np.transpose",
           "copy": "np.copy", "dot": "np.dot", "squeeze": "np.squeeze", "ravel": "np.ravel",
           "flatten": "np.copy_ravel", "clip": "np.clip", "cumsum": "np.cumsum",
           "cumprod": "np.cumprod", "var": "np.var", "std": "np.std",
           "swapaxes": "np.swapaxes", "repeat": "np.repeat", "trace": "np.trace",
           "argsort": "np.argsort", "take": "np.take", "diagonal": "np.diagonal",
           "astype": "array.astype", "item": "array.item", "any": "np.any", "all": "np.all"}
ATTRIBUTES = {"T": "np.transpose", "shape": "shape", "ndim": "np.ndim", "size": "np.size"}


def _numpy_object(path: str):
    obj = numpy
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


# numpy function objects -> their rule (np.absolute is np.abs, np.linalg.inv, ...)
NUMPY_FUNCS = {id(_numpy_object(p[3:])): p for p in RULES
               if p.startswith("np.") and _numpy_object(p[3:]) is not None
               and not isinstance(getattr(_numpy_object(p[3:]), "__self__", None),
                                  numpy.ufunc)}
UFUNC_METHODS = {(u, m): p for p in RULES if p.startswith("np.")
                 and isinstance(getattr(_numpy_object(p[3:]), "__self__", None), numpy.ufunc)
                 for u, m in [p[3:].split(".")]}
"""(ufunc name, method name) -> the rule of that ufunc method (``np.maximum.accumulate``:
a bound method, made anew each time it is read, so not found by ``id``)."""
NUMPY_FUNCS[id(numpy.shape)] = "shape"
NUMPY_FUNCS[id(numpy.amax)] = "np.max"  # aliases NumPy keeps as separate functions
NUMPY_FUNCS[id(numpy.amin)] = "np.min"
NUMPY_FUNCS[id(torch_names.detached)] = "array.detach"  # torch's x.clone().detach()
# NumPy's positional parameters, per primitive: those that are attributes
# (constants the reverse sweep is built from) may be given either way
SIGNATURES = {**{f"np.{r}": ("x", "axis", "dtype", "out", "keepdims")
                 for r in ("sum", "mean", "prod", "nansum", "nanmean")},
              **{f"np.{r}": ("x", "axis", "out", "keepdims") for r in ("max", "min")},
              "np.var": ("x", "axis"), "np.std": ("x", "axis"), "np.round": ("x", "decimals"),
              "np.transpose": ("x", "axes"), "np.squeeze": ("x", "axis"),
              "np.expand_dims": ("x", "axis"), "np.concatenate": ("seq", "axis"),
              "np.stack": ("seq", "axis"), "np.cumsum": ("x", "axis"),
              "np.cumprod": ("x", "axis"), "np.swapaxes": ("x", "axis1", "axis2"),
              "np.moveaxis": ("x", "source", "destination"), "np.flip": ("x", "axis"),
              "np.roll": ("x", "shift", "axis"), "np.repeat": ("x", "repeats", "axis"),
              "np.tile": ("x", "reps"), "np.diag": ("x", "k"), "np.tril": ("x", "k"),
              "np.triu": ("x", "k"), "np.trace": ("x", "offset"),
              "np.eye": ("N", "M", "k", "dtype"), "np.identity": ("n", "dtype"),
              "np.zeros": ("shape", "dtype"), "np.ones": ("shape", "dtype"),
              "np.full": ("shape", "fill_value", "dtype"), "np.zeros_like": ("a", "dtype"),
              "np.ones_like": ("a", "dtype"), "np.full_like": ("a", "fill_value", "dtype"),
              "np.sort": ("x", "axis"), "np.argsort": ("x", "axis"),
              "np.argmax": ("x", "axis", "out", "keepdims"),
              "np.argmin": ("x", "axis", "out", "keepdims"),
              "np.take": ("x", "indices", "axis"), "np.delete": ("x", "obj", "axis"),
              "np.take_along_axis": ("x", "indices", "axis"),
              "np.diagonal": ("x", "offset", "axis1", "axis2"), "np.pad": ("x", "pad_width"),
              "np.tensordot": ("x", "y", "axes"), "array.astype": ("x", "dtype"),
              "np.broadcast_to": ("x", "shape"), "np.convolve": ("x", "y", "mode"),
              **{f"np.{r}": ("x", "q", "axis", "out", "overwrite_input", "method", "keepdims")
                 for r in ("quantile", "percentile")},
              "np.median": ("x", "axis", "out", "overwrite_input", "keepdims"),
              **{f"np.{r}": ("x", "axis", "out", "keepdims") for r in ("all", "any")},
              **{f"np.{u}.accumulate": ("x", "axis", "dtype", "out")
                 for u in ("maximum", "minimum")}}
RUNTIME_AXIS = frozenset({"np.sum", "np.mean", "np.prod", "np.max", "np.min", "np.var",
                          "np.std", "np.cumsum", "np.cumprod", "np.flip", "np.roll", "np.sort",
                          "np.repeat", "np.concatenate", "np.stack", "np.expand_dims",
                          "np.squeeze", "np.median", "np.quantile", "np.percentile",
                          "np.maximum.accumulate", "np.minimum.accumulate", "np.all", "np.any"})
"""Functions whose ``axis`` may be an int known only when the code runs
(:func:`s2s_ad.frontend.numpy_attrs.along_axis`)."""
DERIVED = {"inverse_axes", "index", "unshift", "adjoints"}
"""Attributes the frontend computes from the others; never written by the user."""
SEQUENCES = ("np.concatenate", "np.stack", "np.hstack", "np.vstack")
"""Functions of a list or tuple of arrays."""


def annotated_numbers(fn) -> frozenset:
    """The parameters of ``fn`` annotated ``float``, ``int`` or ``bool``: the
    caller passes them a number (at a call site whose argument may be an
    array, the annotation is taken at its word)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(n for n, p in params.items()
                     if p.annotation in (float, int, bool, "float", "int", "bool"))


def numpy_use(src) -> tuple[list[str], bool]:
    """The names ``src``'s function reads numpy as, and whether its source
    uses NumPy at all: a numpy alias, a numpy function imported by name,
    ``@``, or an array method or attribute (``x.sum()``, ``x.T``) on
    something that is not a module."""
    tree = src.tree
    used: set[str] = set()
    attributes: list[ast.Attribute] = []
    matmul = False
    for n in walk(tree):  # (once: every function lowered is read here)
        if isinstance(n, ast.Name):
            used.add(n.id)
        elif isinstance(n, ast.Attribute):
            attributes.append(n)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
            matmul = True
    aliases = sorted(n for n in used if src.globals.get(n) is numpy)
    direct = any(isinstance(src.globals.get(n), (types.FunctionType, type(numpy.exp),
                                                  types.BuiltinFunctionType))
                 and id(src.globals[n]) in NUMPY_FUNCS for n in used) or any(
        callable(src.globals.get(n)) and (numpy_attrs.is_logsumexp(src.globals[n])
                                          or numpy_attrs.scipy_special_prim(src.globals[n]))
        for n in used)  # scipy.special's functions imported by name
    params = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}

    def global_path(node: ast.Attribute) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id not in params \
            and (node.id in src.globals or node.id in dir(__builtins__))

    def special_path(node: ast.Attribute) -> bool:
        # scipy.special.erfc, special.xlogy (scipy's module by a global name)
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        obj = src.globals.get(node.id) if isinstance(node, ast.Name) \
            and node.id not in params else None
        if not isinstance(obj, types.ModuleType):
            return False
        for part in reversed(parts):
            obj = getattr(obj, part, None)
        return callable(obj) and bool(numpy_attrs.is_logsumexp(obj)
                                      or numpy_attrs.scipy_special_prim(obj))

    direct = direct or any(special_path(n) for n in attributes)
    syntax = matmul or any((n.attr in METHODS or n.attr in ATTRIBUTES) and not global_path(n)
                           for n in attributes)
    return aliases, bool(aliases or direct or syntax or src.jax or getattr(src, "torch", False)
                          or getattr(src, "tf", False))


class ArrayLowering(ArrayIndexing):
    """Mixed into ``frontend._Lowering``; uses its ``src``, ``env``, ``emit``,
    ``makes_new`` (:class:`s2s_ad.aliasing.InPlaceNames`),
    ``expr`` and ``namer``."""

    array_mode = False

    def setup_numpy(self) -> None:
        """Find the name the user imports numpy as; claim it for the generated
        module and switch to array mode when the function uses it, or when a
        caller passes it an array (``self.arrays``, the parameters that
        receive one)."""
        self.index_values: set[int] = set()
        """ids of integer index arrays computed from ints (:mod:`s2s_ad.frontend.index_exprs`)."""
        self.int_arrays: set[int] = set()
        """ids of other arrays of integers the function makes (``np.array([1, 2])``,
        ``np.full(n, 2)``): a float written into one is refused (index_exprs.refuse_write)."""
        self.dtype_known: dict[int, bool] = {}
        """id(value) -> whether the code fixes its dtype to a floating one
        (:mod:`s2s_ad.frontend.write_dtypes`)."""
        self.dtype_relied: set[int] = set()
        """ids of loop values a write took to be floating without a check."""
        self.dtype_origin: dict[int, ir.Value] = {}
        """id(loop value) -> the array it starts as (its dtype's)."""
        self.dtype_hoisted: list = []
        """(ops list, check ops, id of the array) of each check placed after
        the op making an array (:func:`s2s_ad.frontend.write_dtypes.undo`)."""
        self.dtype_checked: set[int] = set()
        """ids of arrays whose dtype the generated code checks after making them."""
        self.op_site: dict[int, list] = {}
        """id(value) -> the list of ops its op was emitted into."""
        self.roots: dict[int, ir.Value | None] = {}
        """id(value) -> the array whose memory it shares (None: a parameter's)."""
        self.stale: dict[int, str] = {}
        """id(value) -> why reading it is refused (a view of an array assigned into since)."""
        self.control_flow = any(isinstance(n, (ast.For, ast.While, ast.If, ast.IfExp))
                                and not runtime_checks.is_rank_check(n)
                                or isinstance(n, (ast.ListComp, ast.GeneratorExp))
                                and _holds_arrays(n)
                                for n in walk(self.tree))
        aliases, uses = numpy_use(self.src)
        self.names_numpy = uses
        if uses or self.arrays:
            self.array_mode = True
            self.numpy_alias = aliases[0] if aliases else "np"

    def _a_list(self, node: ast.expr) -> bool:
        """Is ``node`` a list: a display, a comprehension, or a name bound to a
        list built in the function or one of any length?"""
        if isinstance(node, (ast.List, ast.ListComp)):
            return True
        value = self.env.get(node.id) if isinstance(node, ast.Name) else None
        return isinstance(value, structures.StaticList) or (
            isinstance(value, ir.Value) and value.kind == "list")

    def claim_numpy(self) -> None:
        if self.array_mode:
            self.modules["numpy"] = self.namer.claim(self.numpy_alias)

    def param_kind(self, node: ast.arg, default, has_default: bool) -> str:
        """A parameter's kind: as annotated (``float``, ``int``, ``bool``: the
        caller passes a number); else ``"array"`` when a caller passes it an
        array (or a value that may be one); else, in a function that uses
        NumPy, an array of unknown shape unless given a numeric default; in
        one that does not, a number."""
        note = node.annotation
        declared = note.id if isinstance(note, ast.Name) and note.id in (
            "float", "int", "bool") else None
        if declared is not None and node.arg in self.arrays:
            raise self.src.error(note, f"parameter {node.arg!r} is annotated `{declared}` "
                                 "but receives an array")
        if declared is not None and (self.names_numpy or self.arrays):
            return declared
        if node.arg in self.arrays:
            return "array"
        if not self.names_numpy:
            return "float"
        if has_default and isinstance(default, numbers.Real):
            return "int" if isinstance(default, numbers.Integral) else "float"
        if conditions.class_tested(self.tree, node.arg, self.src.globals):
            return "float"  # `isinstance(x, np.ndarray)`: a caller passing an array says so
        return "array"

    # -- kinds ---------------------------------------------------------------

    def array_prim(self, prim: str, kinds: list[str], node: ast.AST) -> str:
        """The primitive to use for ``prim`` given its operands' kinds."""
        if "array" not in kinds:
            return prim
        if prim in ("max", "min"):
            raise self.src.error(node, f"`{prim}()` of arrays is ambiguous; use "
                                 f"np.{prim}imum(a, b) (elementwise) or np.{prim}(a)")
        return f"array.{prim}" if f"array.{prim}" in RULES else prim

    def refuse_shape_arithmetic(self, prim: str, args: list, node: ast.AST) -> None:
        """A shape (``x.shape``, ``np.shape(x)``) is a tuple of ints whose kind
        says ``int``: as an operand of arithmetic it would broadcast as an
        array while the reverse sweep takes it for a number (``z * z.shape``
        has another shape than ``z``), so only its items may be used there."""
        rule = RULES.get(prim)
        if rule is None or not (prim in BROADCASTING or prim in SAME_SHAPE or rule.broadcast):
            return
        for a in args:
            producer = self.defs.get(id(a)) if isinstance(a, ir.Value) else None
            if producer is not None and producer.prim in ("shape", "tuple", "tuple.concat",
                                                            "np.broadcast_shapes"):
                raise self.src.error(node, f"`{producer.text}` is a shape, a tuple of ints; "
                                     "arithmetic on it is not supported: index it "
                                     "(`x.shape[0]`)")

    def result_kind(self, prim: str, kinds: list[str], attrs: dict) -> str:
        rule = RULES[prim]
        if rule.result == "array":
            if prim in ("array.getitem",) and kinds[0] in ("int", "bool"):
                return kinds[0]
            full = prim[3:] in REDUCTIONS and attrs.get("axis") is None \
                and not attrs.get("keepdims")
            return "float" if full else "array"
        kind = rule.result_kind(kinds)
        if prim == "array.item":
            return "float"  # one element, whatever the array's shape
        if rule.result in ("num", "float") and "array" in kinds:
            return "array"
        return kind

    # -- calls ---------------------------------------------------------------

    def is_global_path(self, node: ast.expr) -> bool:
        """``np.linalg.norm``-like: a global name and attributes of it."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id not in self.env

    def numpy_prim(self, fn) -> str | None:
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, numpy.ufunc):  # np.maximum.accumulate
            return UFUNC_METHODS.get((owner.__name__, getattr(fn, "__name__", None)))
        return NUMPY_FUNCS.get(id(fn))

    def numpy_call(self, prim: str, node: ast.Call, var, hint, text: str | None = None
                   ) -> ir.Operand:
        what = ast.unparse(node.func)
        if text is None:
            text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
        if prim in LIST_REDUCTIONS and node.args and self._a_list(node.args[0]):
            # np.sum(hs, axis=0), hs a list of arrays: NumPy reduces the array the
            # list makes, its items stacked along a new first axis
            stack = ast.Attribute(ast.Name(self.numpy_alias, ast.Load()), "stack", ast.Load())
            stacked = ast.copy_location(ast.Call(stack, [node.args[0]], []), node.args[0])
            call = ast.copy_location(ast.Call(node.func, [stacked, *node.args[1:]],
                                              node.keywords), node)
            ast.fix_missing_locations(call)
            return self.numpy_call(prim, call, var, hint, text)
        if prim in ("np.sum", "np.mean") and any(k.arg == "where" for k in node.keywords):
            return masked_reductions.where_reduction(self, prim, node, var, hint, text)
        if prim == "np.clip":
            node = masked_reductions.clip_bounds(self, node)
        names = SIGNATURES.get(prim, ())
        rule = RULES[prim]
        allowed = {name for name, _ in rule.attrs} - DERIVED
        positional = list(node.args)
        if prim == "np.einsum":
            return numpy_attrs.einsum_call(self, node, var, hint, text)
        if prim == "np.issubdtype":
            return write_dtypes.issubdtype(self, node, var, hint, text)
        keywords = {}
        for i, a in enumerate(positional):
            if isinstance(a, ast.Starred):
                raise self.src.error(a, "`*args` in calls is not supported")
            if i < len(names) and (names[i] in allowed or names[i] in ("dtype", "out")):
                # NumPy's dtype/out in their positions (np.sum(x, 0, None, None, True)):
                # None is their default; anything else is refused by name below
                if not (names[i] not in allowed and isinstance(a, ast.Constant)
                        and a.value is None):
                    keywords[names[i]] = a
        positional = [a for i, a in enumerate(positional)
                      if not (i < len(names) and (names[i] in allowed
                                                  or names[i] in ("dtype", "out")))]
        for k in node.keywords:
            if k.arg is None:
                raise self.src.error(k.value, "`**kwargs` in calls is not supported")
            if k.arg in names and k.arg not in allowed and names.index(k.arg) == len(positional):
                positional.append(k.value)  # an operand given by name: np.eye(n, M=m)
                continue
            keywords[k.arg] = k.value
        like = None  # `dtype=x.dtype`: x's dtype where the code runs
        dtype = keywords.get("dtype")
        of = _dtype_of(self, dtype)
        if prim in ("np.zeros", "np.ones", "np.full") and of is not None:
            like = self.expr(of)
            if not isinstance(like, ir.Value):
                raise self.src.error(dtype, f"`{ast.unparse(dtype)}`: the dtype of an array")
            prim = f"array.{prim[3:]}_as"
            rule = RULES[prim]
            del keywords["dtype"]
        for k, v in keywords.items():
            if k not in allowed:
                raise self.src.error(v, f"`{what}`: the keyword argument {k!r} is not supported")
        attrs = {k: numpy_attrs.dtype_attr(self, v, prim) if k == "dtype"
                 else numpy_attrs.string_attr(self, v, prim, k)
                 if (prim, k) in numpy_attrs.STRING_ATTRS
                 else self.const_attr(v, k, runtime=k == "axis" and prim in RUNTIME_AXIS
                                      or prim == "np.moveaxis")
                 for k, v in keywords.items()}
        if prim == "array.astype" and numpy.dtype(attrs.get("dtype", "float64")).kind in "iu":
            # `np.floor(t * n).astype(int)`: integers, a step function of `t` (an index)
            prim, rule = "array.astype_int", RULES["array.astype_int"]
        if prim == "np.moveaxis" and any(isinstance(v, ir.Value) for v in attrs.values()):
            return numpy_attrs.moved_at_run_time(self, attrs, positional, node, var, hint, text)
        along = None  # an axis known when the code runs: along axis 0 of the moved array
        if isinstance(attrs.get("axis"), ir.Value):
            if prim in ("np.quantile", "np.percentile") and attrs.get("keepdims"):
                raise self.src.error(node, f"`{what}` with `keepdims=True` takes a constant "
                                     "`axis` here (the axes of q come first in its result)")
            along, attrs["axis"] = attrs["axis"], 0
        if prim == "np.delete" and len(positional) == 2 and numpy_attrs.is_slice(
                self, positional[1]):  # np.delete(x, slice(1, 3)): the slice's constants
            prim, rule = "np.delete.slice", RULES["np.delete.slice"]
            attrs.update(numpy_attrs.slice_attrs(self, positional.pop(), what))
        numpy_attrs.check_attrs(self, prim, attrs, node)
        if prim == "np.transpose" and attrs.get("axes") is not None:
            axes = attrs["axes"]
            if isinstance(axes, int):  # np.transpose(v, 0), x.permute(0): one axis
                axes = attrs["axes"] = (axes,)
            attrs["inverse_axes"] = tuple(sorted(range(len(axes)), key=lambda i: axes[i]))
        if prim == "np.prod" and isinstance(attrs.get("axis"), tuple):
            raise self.src.error(node, "`np.prod` over a tuple of axes is not supported; "
                                 "reduce one axis at a time")
        if prim == "np.expand_dims" and "axis" not in attrs:
            raise self.src.error(node, "`np.expand_dims` needs an axis")
        if prim in SEQUENCES:
            seq = self.expr(positional[0]) if len(positional) == 1 \
                and not _inner_displays(positional[0]) else None
            if len(positional) == 1 and _inner_displays(positional[0]):
                # np.concatenate([z, [a]]): an inner list or tuple is the array
                # np.array makes of it, as NumPy reads it
                seq = tuple(self.array_literal(e, None, None, None, set())
                            if isinstance(e, (ast.List, ast.Tuple)) else self.expr(e)
                            for e in positional[0].elts)
            seq = structures.forwarded(self, seq, node)  # a call's tuple: its items
            if isinstance(seq, structures.StaticList):
                seq = tuple(seq.items)
            if isinstance(seq, ir.Value) and seq.kind == "list":  # of any length
                if along is not None or prim not in ("np.stack", "np.concatenate",
                                                     "np.hstack", "np.vstack"):
                    list_stacks.refuse_join(self, what, node)
                if prim != "np.stack":
                    return list_joins.join(self, seq, prim, attrs.get("axis", 0), node, var)
                return list_stacks.stack(self, seq, attrs.get("axis", 0), node, var)
            if isinstance(seq, ir.Value) and seq.kind == "array" and seq.var \
                    and (seq.var not in self.arrays or self.helper) \
                    and param_uses.is_param(self, seq):
                # np.stack(xs), xs a parameter lowered as an array before a call
                # was seen (or a helper's, passed one): it takes a list of arrays
                # (the code made per call, as vjp; callees.passed_on for a helper's)
                exc = param_uses.SequenceParameter(seq.var, *param_uses.where(self, node, (
                    f"`{what}` is given parameter {seq.var!r}, a list of arrays: call the "
                    "gradient with the list, which generates the code for it, or give an "
                    f"example of it (--like {seq.var}=EXAMPLE)")))
                exc.owner, exc.array_list = self.src.fn, True
                raise exc
            if not isinstance(seq, tuple) or any(structures.is_structure(a) for a in seq):
                raise self.src.error(node, f"`{what}` takes a list or tuple of arrays "
                                     "(`[a, b]`)")
            args = list(seq)
            if prim == "np.concatenate" and "axis" in attrs and attrs["axis"] is None:
                raise self.src.error(node, "`np.concatenate(..., axis=None)` is not supported")
            if along is not None:
                return numpy_attrs.along_axis(self, prim, args, along, node, var, hint, attrs,
                                              text)
            return self.emit(prim, args, node, var, hint=hint, attrs=attrs, text=text)
        if prim == "np.clip" and len(positional) == 3:
            # clip(x, None, hi) is minimum(x, hi): no None operand in the IR
            lo, hi = (isinstance(a, ast.Constant) and a.value is None for a in positional[1:])
            if lo or hi:
                if lo and hi:
                    raise self.src.error(node, "`np.clip` needs at least one bound")
                x, bound = self.expr(positional[0]), self.expr(positional[2 if lo else 1])
                return self.emit("np.minimum" if lo else "np.maximum", [x, bound], node, var,
                                 hint=hint, text=text)
        if prim in ("np.zeros", "np.ones", "np.reshape", "np.full", "array.zeros_as",
                    "array.ones_as", "array.full_as", "np.broadcast_to") and positional:
            shape_at = 1 if prim in ("np.reshape", "np.broadcast_to") else 0
            if prim == "np.reshape" and len(positional) > 2:
                positional = [positional[0], ast.Tuple(positional[1:], ast.Load())]
            args = [self.shape_operand(a) if i == shape_at else self.expr(a)
                    for i, a in enumerate(positional)]
        elif len(positional) > 1 and isinstance(positional[1], (ast.List, ast.Tuple)) and (
                prim in ("np.take", "np.take_along_axis", "np.delete")
                or prim in ("np.quantile", "np.percentile")):
            # np.take(x, [0, 2]), np.delete(x, [k, k + 1]): a list of ints written out, the
            # index array it stands for;
            # np.quantile(x, [0.25, 0.75]): the array of quantiles
            args = [self.expr(positional[0]),
                    self.array_literal(positional[1], None, None, None, set())]
        else:
            args = [self.expr(a) for a in positional]
            if prim in ("np.take", "np.delete") and len(args) > 1:  # np.take(x, keep)
                args[1] = self.index_list(args[1], positional[1])
        if prim in ("np.take", "np.take_along_axis", "np.delete") and len(args) > 1:
            self.index_params(args[1], positional[1])  # np.take(x, k): k is an index
        if prim in LIST_REDUCTIONS and args:
            args[0] = structures.forwarded(self, args[0], node)  # `t = h(x)`: its items
        if prim in ("np.prod", "np.sum") and len(args) == 1 and isinstance(args[0], tuple) \
                and not node.keywords and len(positional) == 1 \
                and numpy_attrs.shape_like(args[0]):
            return numpy_attrs.shape_product(self, prim, args[0], node)  # np.prod(W.shape)
        if prim in LIST_REDUCTIONS and args and isinstance(args[0], tuple) and args[0] \
                and all(isinstance(v, ir.Operand) for v in args[0]):
            # np.sum((a * b, c)): as of a list, the array NumPy makes of the tuple
            args[0] = self.emit("np.stack", list(args[0]), node, attrs={"axis": 0})
        if any(isinstance(a, tuple) for a in args):
            raise self.src.error(node, f"`{what}`: tuple arguments are not supported here")
        if like is not None:
            args.append(like)
        if not rule.variadic and len(args) != rule.arity:
            raise self.src.error(node, f"`{what}` takes {rule.arity} array argument(s) here, "
                                 f"got {len(args)}")
        if along is not None:
            return numpy_attrs.along_axis(self, prim, args, along, node, var, hint, attrs, text)
        if prim in ("np.full_like", "array.full_as") and "dtype" not in attrs:
            write_dtypes.check_fill(self, args[0 if prim == "np.full_like" else -1], args[1],
                                    node)
        return self.emit(prim, args, node, var, hint=hint, attrs=attrs, text=text)

    def special_call(self, fn, node: ast.Call, var, hint) -> ir.Operand | None:
        """NumPy calls lowered to several ops, or to none; None for others."""
        if fn is numpy.array or fn is numpy.asarray:
            return self.array_call(fn, node, var, hint)
        if fn is numpy.linalg.norm:
            return numpy_attrs.norm_call(self, node, var, hint)
        if numpy_attrs.is_logsumexp(fn):
            return numpy_attrs.logsumexp_call(self, node, var, hint)
        if fn is numpy.split:
            return numpy_attrs.split_call(self, node)
        if fn is numpy.linalg.slogdet:
            return numpy_attrs.slogdet_call(self, node, var, hint)
        out = numpy_more.special_call(self, fn, node, var, hint)
        if out is not None:
            return out
        prim = numpy_attrs.scipy_special_prim(fn)
        if prim is not None:
            if "scipy.special" not in self.modules:
                self.modules["scipy.special"] = self.namer.claim("scipy_special")
            return self.numpy_call(prim, node, var, hint)
        return None

    def array_call(self, fn, node: ast.Call, var, hint) -> ir.Operand:
        """``np.array(...)`` / ``np.asarray(...)``. Of an array: a copy
        (``np.array``) or the array itself (``np.asarray``). Of a list or tuple
        written out: a constant array when every entry is a number, else
        ``np.stack`` of the entries along a new first axis, so the gradient
        flows back to each entry (nested lists nest)."""
        what = ast.unparse(node.func)
        if len(node.args) != 1 or node.keywords:
            raise self.src.error(node, f"`{what}` takes one argument here, a list, tuple or "
                                 "array, and no keywords (for a float array, write float "
                                 "entries: `1.0`)")
        arg = node.args[0]
        text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
        if isinstance(arg, (ast.List, ast.Tuple)):
            return self.array_literal(arg, var, hint, text, set())
        value = self.expr(arg)
        items = value.items if isinstance(value, structures.StaticList) else value
        if isinstance(items, (tuple, list)) and items and all(
                isinstance(v, ir.Const) and not isinstance(v.value, bool)
                or isinstance(v, ir.Value) and v.kind in ("float", "int", "array")
                for v in items):
            # a list of numbers or arrays of a length known here (a list parameter
            # the code is generated for, `t = (a, b)`): as the entries written out
            if all(isinstance(v, ir.Const) for v in items):
                return self.emit("index_array", list(items), node, var, hint=hint, text=text)
            return self.emit("np.stack", list(items), node, var, hint=hint, attrs={"axis": 0},
                             text=text)
        if isinstance(value, tuple) or structures.is_structure(value):
            raise self.src.error(arg, f"`{what}` of a list or tuple built elsewhere is not "
                                 "supported; write the entries out (`np.array([a, b])`)")
        if isinstance(value, ir.Value) and value.kind == "list":  # a list of any length
            if index_exprs.holds_ints(self, value):  # np.array(keep): an index array
                out = self.index_list(value, node)
                self.index_values.add(id(out))
                return out
            return list_stacks.stack(self, value, 0, node, var)
        if fn is numpy.asarray:
            return value
        return self.emit("np.copy", [value], node, var, hint=hint, text=text)

    def array_literal(self, node: ast.List | ast.Tuple, var, hint, text, constants: set
                      ) -> ir.Operand:
        """One level of ``np.array([...])``; ``constants`` collects the ids of
        the constant arrays made for inner levels."""
        if not node.elts:
            raise self.src.error(node, "an empty array literal is not supported")
        items = []
        for e in node.elts:
            if isinstance(e, (ast.List, ast.Tuple)):
                items.append(self.array_literal(e, None, None, None, constants))
                continue
            v = self.expr(e)
            if isinstance(v, tuple) or structures.is_structure(v):
                raise self.src.error(e, "an array entry must be a number or an array")
            items.append(v)
        if all(isinstance(a, ir.Const) or id(a) in constants for a in items):
            out = self.emit("index_array", items, node, var, hint=hint, text=text)
            constants.add(id(out))
            return out
        return self.emit("np.stack", items, node, var, hint=hint, attrs={"axis": 0}, text=text)

    def shape_operand(self, node: ast.expr) -> ir.Operand:
        """A shape: an int, ``x.shape``, or a tuple of ints, or a name bound to one
        (one ``tuple`` op)."""
        if isinstance(node, (ast.Tuple, ast.List)):
            # `(*x.shape, 1)`: runs of items, and the shapes starred among them, joined
            parts: list[ir.Operand] = []
            run: list[ast.expr] = []
            for e in node.elts + [None]:
                if e is not None and not isinstance(e, ast.Starred):
                    run.append(e)
                    continue
                if run or (e is None and not parts):
                    parts.append(self.emit("tuple", [self.expr(x) for x in run], node))
                    run = []
                if e is not None:
                    parts.append(self.shape_operand(e.value))
            shape = parts[0]
            for part in parts[1:]:
                shape = self.emit("tuple.concat", [shape, part], node)
            return shape
        value = self.expr(node)
        if isinstance(value, tuple) and all(  # (`t3 = ()`: a 0-d array's shape)
                isinstance(a, ir.Const) and type(a.value) is int
                or isinstance(a, ir.Value) and a.kind in ("int", "float", "array")
                for a in value):
            # a name bound to a tuple of ints (`t3 = n, d, d`, as generated code
            # writes a shape it reads again)
            return self.emit("tuple", list(value), node)
        return value

    def method_call(self, node: ast.Call, var, hint, text: str | None = None) -> ir.Operand:
        method = node.func.attr
        prim = METHODS.get(method)
        if prim is None:
            owner = self.env.get(node.func.value.id) if isinstance(node.func.value, ast.Name) \
                else None
            if isinstance(owner, structures.StaticObject):  # `model.loss(x)`, model a dataclass
                raise self.src.error(node, f"calling the method `.{method}()` of "
                                     f"{structures.describe(owner)} parameter is not supported; "
                                     f"call a function of yours taking it "
                                     f"(`{method}({node.func.value.id}, ...)`)")
            if method in library_names.RANDOM_METHODS:
                raise self.src.error(node, f"`.{method}()` is a method of NumPy's random "
                                     f"states and generators: {library_names.RANDOM_DRAWS}")
            raise self.src.error(node, f"the method `.{method}()` is not supported; s2s-ad "
                                 "knows " + ", ".join(f".{m}()" for m in sorted(METHODS)))
        if prim == "np.copy_ravel":  # `x.flatten()`: a new array (`x.ravel()` may be a view)
            flat = ast.copy_location(ast.Call(ast.Attribute(node.func.value, "ravel",
                                                            ast.Load()),
                                              node.args, node.keywords), node)
            ast.fix_missing_locations(flat)
            return self.emit("np.copy", [self.method_call(flat, None, None, ast.unparse(node))],
                             node, var, hint=hint, text=f"{var} = {ast.unparse(node)}" if var
                             else ast.unparse(node))
        if prim == "array.item" and (node.args or node.keywords):
            raise self.src.error(node, "`.item()` is supported without arguments (the one "
                                 "element of a 0-d or one-element array); index the array "
                                 "instead (`x[i]`)")
        receiver = node.func.value
        args = list(node.args)
        if prim == "np.reshape" and len(args) > 1:
            args = [ast.Tuple(args, ast.Load())]
        if prim == "np.transpose" and args:
            args = [ast.Tuple(args, ast.Load())] if len(args) > 1 else args
        call = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), prim[3:], ast.Load()),
                        [receiver] + args, node.keywords)
        ast.copy_location(call, node)
        call.func = node.func  # error messages show the user's spelling
        text = text or (f"{var} = {ast.unparse(node)}" if var else ast.unparse(node))
        return self.numpy_call(prim, call, var, hint, text)

    def const_attr(self, node: ast.expr, what: str, runtime: bool = False):
        """A constant keyword attribute: an int, bool, None or tuple of ints.
        With ``runtime``, an integer expression known only when the code runs
        (a parameter, ``x.ndim - 1``) is its value (an :class:`ir.Value`)."""
        if isinstance(node, ast.Constant) and (node.value is None
                                               or isinstance(node.value, (int, bool))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            return -node.operand.value
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.const_attr(e, what) for e in node.elts)
        if isinstance(node, ast.Name) and node.id not in self.env:
            value = self.src.globals.get(node.id)
            if isinstance(value, (int, bool)) or value is None:
                return value
        if isinstance(node, (ast.Name, ast.BinOp, ast.UnaryOp)) or (
                runtime and isinstance(node, (ast.Call, ast.Attribute, ast.Subscript))):
            # a name bound to a constant, or arithmetic the frontend folds
            # (``ax = d - 1`` with ``d = 2``): known when the code is generated
            operand = self.expr(node)
            if isinstance(operand, ir.Const) and operand.value is None:
                return None  # a parameter given None: static (frontend/statics.py)
            if isinstance(operand, tuple) and all(
                    isinstance(a, ir.Const) and type(a.value) is int for a in operand):
                return tuple(a.value for a in operand)  # a static tuple of ints
            value = numpy_attrs.fold(operand, self.defs)
            if type(value) in (int, bool):
                return value
            if runtime and isinstance(operand, ir.Value) and operand.kind in ("int", "array"):
                self.mark_int(operand, node, f"`{what}`")  # (no gradient, no tangent)
                return operand  # read when the code runs (an int; NumPy checks it)
        if runtime:
            raise self.src.error(node, f"`{what}` must be one integer (a constant, a parameter, "
                                 "or integer arithmetic like `x.ndim - 1`), or a constant "
                                 "tuple of them")
        raise self.src.error(node, f"`{what}` must be a constant (like 0, -1, (0, 1), True, a "
                             "name bound to one, or integer arithmetic on them): s2s-ad needs "
                             "it to build the reverse sweep")

    # -- attributes, @, subscripts ------------------------------------------

    def array_attribute(self, node: ast.Attribute, var, hint) -> ir.Operand:
        prim = ATTRIBUTES.get(node.attr)
        if prim is None:
            raise self.src.error(node, f"the attribute `.{node.attr}` is not supported; s2s-ad "
                                 "knows " + ", ".join(f".{a}" for a in ATTRIBUTES))
        x = self.expr(node.value)
        # ``x.shape`` of an array stays an attribute read (rules.forward_template)
        attrs = {"attribute": True} if prim == "shape" and getattr(x, "kind", None) == "array" \
            else None
        return self.emit(prim, [x], node, var, hint=hint, attrs=attrs)


def _dtype_of(lo, dtype: ast.expr | None) -> ast.expr | None:
    """The array whose dtype ``dtype=`` names: ``x.dtype``, or
    ``np.result_type(x)`` of one array (how s2s-ad's own modules write
    ``x.dtype``, read back); None for anything else."""
    if isinstance(dtype, ast.Attribute) and dtype.attr == "dtype" \
            and not lo.is_global_path(dtype.value):
        return dtype.value
    if isinstance(dtype, ast.Call) and len(dtype.args) == 1 and not dtype.keywords \
            and not isinstance(dtype.args[0], ast.Starred) and lo.is_global_path(dtype.func) \
            and not lo.is_global_path(dtype.args[0]) and lo.resolve(dtype.func) is numpy.result_type:
        return dtype.args[0]
    return None


def _holds_arrays(comp) -> bool:
    """Whether a comprehension may be the loop it stands for, over an array's
    rows or a list of any length, or make a list of arrays other names hold
    (``[r for r in M]``, ``[M[i] for i in range(n)]``, the rows of ``M``
    themselves): for writes into arrays it is a loop, as ``for r in M:`` is.
    Not one over ``range(...)`` or a list written out whose items are new
    values (``[np.arange(c + 1, d) for c in range(d - 1)]``)."""
    fresh = isinstance(comp.elt, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant)) or (
        isinstance(comp.elt, ast.Call) and not (isinstance(comp.elt.func, ast.Attribute)
                                                and comp.elt.func.attr in VIEW_NAMES))
    if not fresh:
        return True
    for gen in comp.generators:
        it = gen.iter
        if not (isinstance(it, (ast.List, ast.Tuple)) or isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name) and it.func.id == "range"):
            return True
    return False


VIEW_NAMES = VIEW_CALLS | {"swapaxes", "moveaxis", "diagonal", "flip", "broadcast_to", "view"}


def _inner_displays(node: ast.expr) -> bool:
    """Is ``node`` a list or tuple display holding another (``[z, [a]]``),
    and no starred item?"""
    return isinstance(node, (ast.List, ast.Tuple)) \
        and any(isinstance(e, (ast.List, ast.Tuple)) for e in node.elts) \
        and not any(isinstance(e, ast.Starred) for e in node.elts)
