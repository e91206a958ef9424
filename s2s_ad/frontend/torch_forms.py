"""Frontend: code written against PyTorch rewritten as the NumPy code it means.

Contract: :func:`desugar` rewrites, in place and before lowering, a function
that reads torch (:func:`s2s_ad.frontend.torch_names.reads_torch`): every call
of a torch function and every tensor method in :data:`FUNCTIONS` /
:data:`METHODS` becomes the NumPy expression with torch's meaning (arguments
bound by torch's signature, ``dim`` → ``axis``, ``keepdim`` → ``keepdims``,
``std``/``var`` unbiased by default, ``x.repeat`` → ``np.tile``,
``x.transpose(a, b)`` → ``np.swapaxes``, ``F.pad``'s pairs listed from the
last dimension, ``max(x, dim)`` → the pair ``(values, indices)``, ...),
torch's dtypes and numbers become NumPy's, and ``device=``/``requires_grad=``
are dropped. The generated gradient then calls NumPy only. Anything torch
without a mapping is refused, located, naming it; a keyword argument torch
takes but the mapping does not is refused naming the argument.

Where torch and NumPy differ and the rewrite cannot tell which applies from
the text, it refuses: ``torch.max(x, k)`` with ``k`` neither an integer
literal nor ``dim=`` (a dimension, or ``torch.maximum``?), ``expand`` with a
``-1``. ``torch.cross(a, b)`` without ``dim`` (torch takes the first
dimension of size 3) becomes ``np.cross`` after a check, kept in the
generated code, that both are vectors.

Before → after::

    torch.sum(x ** 2, dim=1, keepdim=True)     np.sum(x ** 2, axis=1, keepdims=True)
    x.unsqueeze(0).expand(3, -1)               refused: expand with -1
    v, _ = torch.min(d, dim=0)          ──▶    v, _ = (np.min(d, axis=0), np.argmin(d, axis=0))
"""

from __future__ import annotations

import ast
import builtins
import copy
import types

import numpy

from s2s_ad.frontend import torch_names
from s2s_ad.frontend.torch_table import ATTRIBUTES, FUNCTIONS, METHODS, Spec
from s2s_ad.frontend.jax_batching import located

NUMPY_VIEWS = {"asarray", "asanyarray", "reshape", "transpose", "ravel", "swapaxes", "moveaxis",
               "expand_dims", "squeeze", "diagonal", "broadcast_to", "atleast_1d", "atleast_2d",
               "atleast_3d", "flip", "real", "imag"}
"""NumPy functions whose result may be a view of their argument."""

DROPPED = frozenset({"device", "requires_grad", "layout", "pin_memory", "memory_format",
                     "non_blocking"})
"""Keywords with no meaning for the NumPy computation (dropped, never read)."""
NOT_ON_LISTS = frozenset({"index", "count", "copy", "append", "pop", "insert", "extend",
                          "remove", "reverse", "sort", "keys", "values", "items", "get",
                          "update", "split", "join", "format"})
"""Method names of Python's own containers: never read as tensor methods."""
HINTS = {
    "no_grad": "compute the value outside and pass it as an argument (a parameter not in wrt)",
    "autograd": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
    "backward": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
}


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a function reading torch) into NumPy code."""
    if not getattr(src, "torch", False) or getattr(src, "torch_desugared", False):
        return
    src.torch_desugared = True
    _Rewrite(src).run()


class _Rewrite(ast.NodeTransformer):
    def __init__(self, src):
        self.src = src
        tree = src.tree
        self.locals = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} \
            | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} \
            | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
               and n is not tree}
        self.taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | self.locals \
            | set(src.globals)
        self.bound: dict = {}
        self.cloned = {id(n.func.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Attribute) and n.func.attr == "clone"}
        """ids of the calls whose result is cloned (``x.detach().clone()``)."""
        self.pending: list = []
        self.once = 0
        """>0 inside code evaluated conditionally or repeatedly (a lambda, a
        comprehension, a conditional expression, a ``while`` condition), where
        no check can be placed before the statement."""

    def run(self) -> None:
        self.src.tree.body = self.statements(self.src.tree.body)
        ast.fix_missing_locations(self.src.tree)

    # -- names ---------------------------------------------------------------

    def global_name(self, base: str, obj) -> str:
        """A global name bound to ``obj`` in the function's globals."""
        if id(obj) in self.bound:
            return self.bound[id(obj)]
        name = next((k for k, v in self.src.globals.items() if v is obj
                     and k not in self.locals), None)
        if name is None:
            name, i = base, 1
            while name in self.taken or hasattr(builtins, name):
                name, i = f"{base}_{i}", i + 1
            self.taken.add(name)
            if self.src.globals is getattr(self.src.fn, "__globals__", None):
                self.src.globals = dict(self.src.globals)
            self.src.globals[name] = obj
        self.bound[id(obj)] = name
        return name

    def resolve(self, node):
        """The global object an expression names (None for locals and others)."""
        if isinstance(node, ast.Name):
            return None if node.id in self.locals else self.src.globals.get(
                node.id, getattr(builtins, node.id, None))
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, None)
        return None

    def public(self, node) -> str | None:
        """``"sum"``, ``"nn.functional.pad"``: the torch name of what
        ``node`` refers to, after ``torch.``; None when it is not torch's."""
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType) and torch_names.is_torch(base):
                return f"{base.__name__}.{node.attr}".partition(".")[2]
        obj = self.resolve(node)
        if obj is None or not torch_names.is_torch(obj):
            return None
        return (torch_names.torch_name(obj) or "").partition(".")[2]

    # -- building NumPy --------------------------------------------------------

    def np(self, path: str, *args, **keywords) -> ast.Call:
        func = ast.Name(self.global_name("np", numpy), ast.Load())
        for part in path.split("."):
            func = ast.Attribute(func, part, ast.Load())
        return ast.Call(func, list(args), [ast.keyword(k, v) for k, v in keywords.items()
                                           if v is not None])

    def scipy(self, name: str, *args) -> ast.Call:
        try:
            import scipy.special
        except ImportError:
            raise self.refuse(self.current, f"torch's `{name}` is read as "
                              f"scipy.special.{name}: install scipy") from None
        func = ast.Attribute(ast.Name(self.global_name("scipy_special", scipy.special),
                                      ast.Load()), name, ast.Load())
        return ast.Call(func, list(args), [])

    def call_global(self, base: str, obj, *args, **keywords) -> ast.Call:
        return ast.Call(ast.Name(self.global_name(base, obj), ast.Load()), list(args),
                        [ast.keyword(k, v) for k, v in keywords.items() if v is not None])

    def shape(self, parts):
        """Sizes given as ``*size`` (``2, 3`` or one ``(2, 3)``) as one shape."""
        if len(parts) == 1 and not isinstance(parts[0], ast.Starred):
            return parts[0]
        return ast.Tuple(list(parts), ast.Load())

    def broadcast(self, x, shape):
        """``x`` broadcast to ``shape``: ``x + np.zeros(shape, dtype=x.dtype)``
        (the adjoint is summed back to ``x``'s shape)."""
        zeros = self.np("zeros", shape, dtype=ast.Attribute(self.clone(x), "dtype", ast.Load()))
        return ast.BinOp(x, ast.Add(), zeros)

    def clone(self, node):
        """``node`` read a second time (the NumPy form reads it twice): a copy
        of the expression, which is computed twice; refused where it calls
        anything but NumPy (a helper might do more than compute a value)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                obj = self.resolve(n.func)
                if not (torch_names.belongs_to_numpy(obj) or obj is torch_names.logsumexp):
                    raise self.refuse(node, f"`{ast.unparse(node)}` is read twice by the "
                                      f"NumPy form of `{ast.unparse(self.current)}`: assign "
                                      "it to a name first")
        return copy.deepcopy(node)

    def dtype(self, node):
        if node is None:
            return None
        if isinstance(node, ast.Attribute) and node.attr == "dtype":
            return node  # x.dtype: an array's, read when the code runs
        name = self.public(node)
        if name is not None and name in torch_names.DTYPES:
            return ast.Attribute(ast.Name(self.global_name("np", numpy), ast.Load()),
                                 torch_names.DTYPES[name], ast.Load())
        return node

    def ddof(self, a):
        """torch's ``var``/``std`` divide by n - 1 unless told otherwise."""
        if a.get("correction") is not None:
            return a["correction"]
        unbiased = a.get("unbiased")
        if unbiased is None:
            return ast.Constant(1)
        if isinstance(unbiased, ast.Constant) and isinstance(unbiased.value, bool):
            return ast.Constant(int(unbiased.value))
        raise self.refuse(unbiased, "`unbiased=` must be True or False written out")

    def check_vectors(self, x, y) -> None:
        """Before the statement: ``assert np.ndim(x) == 1 == np.ndim(y)``."""
        if self.once:
            raise self.refuse(self.current, "torch.cross without `dim=` inside a lambda, "
                              "comprehension, conditional expression or `while` condition "
                              "is not supported: pass `dim=-1` (the last dimension)")
        test = ast.Compare(self.np("ndim", self.clone(x)), [ast.Eq(), ast.Eq()],
                           [ast.Constant(1), self.np("ndim", self.clone(y))])
        message = ast.Constant("torch.cross without dim= takes the first dimension of size 3; "
                               "s2s-ad reads it for vectors only: pass dim=")
        self.pending.append(ast.copy_location(ast.Assert(test, message), self.current))

    def detach(self, x):
        """``x.detach()``: a copy with no derivative. torch's result shares
        ``x``'s storage, a copy does not: read where that cannot show, on a
        copy (``x.clone().detach()``, ``x.detach().clone()``) or in a function
        that writes into no array (no subscript or augmented assignment)."""
        self.unshared(x, "`.detach()` shares the tensor's storage, which a function that "
                      "writes into arrays could see: write `.clone().detach()` (a copy "
                      "without derivative)")
        if self.copies(x):  # np.copy(detached(...)): a new array the function may write into
            x.args = [self.call_global("detached", torch_names.detached, *x.args)]
            return x
        return self.call_global("detached", torch_names.detached, x)

    def shared(self, x, what: str, rewritten):
        """``rewritten``, a new array standing for a torch result that may
        share ``x``'s storage (``x.double()`` of a float64 tensor is ``x``
        itself, ``x.expand(...)`` a view of it, ``torch.as_tensor(a, dtype=)``
        of a float64 array ``a`` itself), where no write can tell the two
        apart (as :meth:`unshared`)."""
        self.unshared(x, f"`{what}` may share the tensor's storage (torch returns the tensor "
                      "itself or a view of it), which a function that writes into arrays "
                      f"could see: write `.clone()` before or after it for a copy")
        return rewritten

    def unshared(self, x, message: str) -> None:
        """Refuse the current call, whose torch result may share ``x``'s
        storage, unless it is read on a copy or the function writes into no
        array (no subscript or augmented assignment)."""
        node = self.current
        copied = self.copies(x) or id(node) in self.cloned or self.fresh(x)
        if not copied and self.writes_arrays():
            raise self.refuse(node, message)

    def fresh(self, x) -> bool:
        """Whether ``x`` (rewritten) is a value no name holds: arithmetic, a
        comparison, or a NumPy function that returns a new array (not one of
        the views, ``np.reshape``, ``np.transpose``, ...)."""
        if isinstance(x, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return True
        if not isinstance(x, ast.Call):
            return False
        obj = self.resolve(x.func)
        module = getattr(obj, "__module__", None) or ""
        numpy_fn = module == "numpy" or module.startswith("numpy.") \
            or isinstance(obj, numpy.ufunc)
        return numpy_fn and getattr(obj, "__name__", "") not in NUMPY_VIEWS

    def writes_arrays(self) -> bool:
        return any(isinstance(n, ast.AugAssign) or isinstance(n, (ast.Assign, ast.AnnAssign))
                   and any(isinstance(t, ast.Subscript) for t in (
                       n.targets if isinstance(n, ast.Assign) else [n.target])
                       for t in ast.walk(t))
                   for n in ast.walk(self.src.tree))

    def copies(self, node) -> bool:
        """Whether ``node`` (rewritten) is a fresh copy: ``np.copy(...)``."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "copy" and self.resolve(node.func.value) is numpy

    def refuse(self, node, message: str):
        return self.src.error(node, message)

    # -- statements ------------------------------------------------------------

    def statements(self, stmts: list) -> list:
        out = []
        for s in stmts:
            outer, self.pending = self.pending, []
            s = self.visit(s)
            out += self.pending + (s if isinstance(s, list) else [s])
            self.pending = outer
        return out

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self.statements(value))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v
                                      for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_arguments(self, node):
        """Defaults are code; annotations (``x: torch.Tensor``) are not read."""
        node.defaults = [self.visit(d) for d in node.defaults]
        node.kw_defaults = [d if d is None else self.visit(d) for d in node.kw_defaults]
        return node

    def visit_FunctionDef(self, node):
        returns, node.returns = node.returns, None
        node = self.generic_visit(node)
        node.returns = returns
        return node

    def visit_AnnAssign(self, node):
        annotation, node.annotation = node.annotation, ast.Constant(None)
        node = self.generic_visit(node)
        node.annotation = annotation
        return node

    def visit_While(self, node):
        self.once += 1
        node.test = self.visit(node.test)
        self.once -= 1
        node.body, node.orelse = self.statements(node.body), self.statements(node.orelse)
        return node

    def _repeated(self, node):
        self.once += 1
        node = self.generic_visit(node)
        self.once -= 1
        return node

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = _repeated
    visit_GeneratorExp = visit_IfExp = _repeated

    def visit_BoolOp(self, node):
        node.values[0] = self.visit(node.values[0])
        self.once += 1
        node.values[1:] = [self.visit(v) for v in node.values[1:]]
        self.once -= 1
        return node

    # -- expressions -------------------------------------------------------------

    def visit_Call(self, node):
        name = self.public(node.func)
        if name is not None:
            spec = FUNCTIONS.get(name)
            if spec is None:
                raise self.unmapped(node.func, f"torch.{name}")
            return self.apply(spec, node, list(node.args), f"torch.{name}")
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in METHODS \
                and func.attr not in NOT_ON_LISTS \
                and not isinstance(self.resolve(func.value), types.ModuleType):
            return self.apply(METHODS[func.attr], node, [func.value] + list(node.args),
                              f"Tensor.{func.attr}")
        if isinstance(func, ast.Attribute) and func.attr in HINTS:
            raise self.unmapped(func, f"Tensor.{func.attr}")
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        name = self.public(node)
        if name is not None:
            if name in torch_names.DTYPES:
                return ast.copy_location(self.dtype(node), node)
            if name in torch_names.CONSTANTS:
                return ast.copy_location(ast.Attribute(ast.Name(
                    self.global_name("np", numpy), ast.Load()), torch_names.CONSTANTS[name],
                    ast.Load()), node)
            raise self.unmapped(node, f"torch.{name}")
        node = self.generic_visit(node)
        if getattr(node.value, "torch_pair", False) and node.attr in ("values", "indices"):
            return node.value.elts[0 if node.attr == "values" else 1]
        if node.attr in ATTRIBUTES and not isinstance(self.resolve(node.value),
                                                      types.ModuleType):
            self.current = node
            return ast.copy_location(ATTRIBUTES[node.attr](self, node.value), node)
        if node.attr in ("data", "grad", "requires_grad"):
            raise self.unmapped(node, f"Tensor.{node.attr}")
        return node

    def visit_Name(self, node):
        name = self.public(node) if isinstance(node.ctx, ast.Load) else None
        if name is not None:
            if name in torch_names.DTYPES:
                return ast.copy_location(self.dtype(node), node)
            obj = self.resolve(node)
            if not callable(obj) and not isinstance(obj, types.ModuleType):
                raise self.refuse(node, f"`{node.id}` is a torch tensor read from the "
                                  "module's globals: s2s-ad's code computes with NumPy arrays; "
                                  "pass it as an argument (a NumPy array), or make it one "
                                  "(`.numpy()`)")
            raise self.unmapped(node, f"torch.{name}" if name else "torch")
        return node

    def unmapped(self, node, what: str):
        short = what.rpartition(".")[2]
        hint = HINTS.get(short) or HINTS.get(what.split(".")[1] if "." in what else "")
        return self.refuse(node, f"`{ast.unparse(node)}` ({what}) has no NumPy reading in "
                           "s2s-ad" + (f": {hint}" if hint else "; docs/numpy.md "
                                       "(PyTorch-flavoured code) lists what is read"))

    def apply(self, spec: Spec, node: ast.Call, positional: list, what: str):
        self.current = node
        bound = self.bind(spec, node, positional, what)
        bound = {k: (self.visit(v) if isinstance(v, ast.AST) else [self.visit(e) for e in v])
                 for k, v in bound.items()}
        self.current = node
        out = spec.build(self, bound)
        return ast.fix_missing_locations(located(out, node))

    def bind(self, spec: Spec, node: ast.Call, positional: list, what: str) -> dict:
        bound: dict = {}
        params = list(spec.params)
        star = next((p for p in params if p.startswith("*")), None)
        i = 0
        for arg in positional:
            if i < len(params) and params[i].startswith("*"):
                bound.setdefault(params[i], []).append(arg)
                continue
            if isinstance(arg, ast.Starred):
                raise self.refuse(arg, f"`{what}`: a starred argument is not supported here")
            if i >= len(params):
                raise self.refuse(arg, f"`{what}` takes at most {i} positional argument(s) "
                                  "here")
            bound[params[i]] = arg
            i += 1
        if star is not None:
            bound.setdefault(star, [])
        names = {p for p in params if not p.startswith("*")}
        for kw in node.keywords:
            key = {"axis": "dim", "keepdims": "keepdim"}.get(kw.arg, kw.arg)
            if kw.arg in DROPPED:
                continue
            if kw.arg is None or key not in names:
                raise self.refuse(kw.value if kw.arg is None else kw, f"`{what}`: the argument "
                                  f"`{kw.arg or '**'}` is not supported")
            if key in bound:
                raise self.refuse(kw, f"`{what}` got `{kw.arg}` twice")
            bound[key] = kw.value
        dim = bound.get("dim")
        if isinstance(dim, (ast.Tuple, ast.List)) and not dim.elts:
            raise self.refuse(dim, f"`{what}` with an empty `dim` is not supported (torch reads "
                              "it as every dimension, NumPy's axis=() as none): omit it")
        if what in ("torch.max", "torch.min", "Tensor.max", "Tensor.min"):
            second = positional[1] if len(positional) > 1 else None
            if second is not None and not _int_literal(second):
                # torch.max(x, 1): a dimension; torch.max(x, y): elementwise
                raise self.refuse(second, f"`{what}(x, {ast.unparse(second)})`: a dimension "
                                  "or a second tensor? Write `dim=` for a dimension, "
                                  f"`torch.{'maximum' if 'max' in what else 'minimum'}` for "
                                  "the elementwise form")
            if bound.get("other") is not None and "dim" in bound:
                raise self.refuse(node, f"`{what}` takes a dimension or a second tensor, "
                                  "not both")
        return bound


def _int_literal(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int

