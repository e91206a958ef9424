"""Frontend: another array library's calls rewritten as the NumPy code they
mean, shared by the PyTorch reading (:mod:`s2s_ad.frontend.torch_forms`) and
the TensorFlow reading (:mod:`s2s_ad.frontend.tf_forms`).

Contract: :class:`Rewrite` rewrites, in place and before lowering, a function
written against a library: every call of one of the library's functions in
the subclass's ``functions`` table and every tensor method in its ``methods``
table becomes the NumPy expression with the library's meaning (arguments
bound by the library's signature, each table entry's builder making the NumPy
AST), the library's dtypes and numbers become NumPy's, keywords in
``dropped`` are dropped. Anything of the library without a mapping is
refused, located, naming it; a keyword argument the library takes but the
mapping does not is refused naming the argument. A builder may place
statements before the statement being rewritten (``pending``: an input check,
a loop) unless the call is evaluated conditionally or repeatedly (``once``).

Before → after (torch's table)::

    torch.sum(x ** 2, dim=1, keepdim=True)  ──▶  np.sum(x ** 2, axis=1, keepdims=True)
"""

from __future__ import annotations

import ast
import builtins
import copy
import types

import numpy

from s2s_ad.frontend import library_names
from s2s_ad.frontend.jax_batching import located
from s2s_ad.frontend.library_table import Spec
from s2s_ad.syntax_walk import walk


NOT_ON_LISTS = frozenset({"index", "count", "copy", "append", "pop", "insert", "extend",
                          "remove", "reverse", "sort", "keys", "values", "items", "get",
                          "update", "split", "join", "format"})
"""Method names of Python's own containers: never read as tensor methods."""


class Rewrite(ast.NodeTransformer):
    """The rewrite of one library's calls as NumPy; a subclass names the
    library (its tables, its refusals' words)."""

    prefix = ""
    """The library's name in messages (``torch``, ``tf``)."""
    tensor = "Tensor"
    """The name of its array class in messages (``Tensor.unsqueeze``)."""
    section = ""
    """docs/numpy.md's section listing what is read."""
    functions: dict = {}
    methods: dict = {}
    attributes: dict = {}
    dtypes: dict = {}
    constants: dict = {}
    hints: dict = {}
    dropped: frozenset = frozenset()
    renamed: dict = {}
    """Keywords NumPy spells differently from the library's parameter names
    (``axis`` → ``dim`` for torch's), accepted under both names."""
    not_on_lists = NOT_ON_LISTS
    refused_attributes: frozenset = frozenset()
    """Tensor attributes refused by name (``x.grad``)."""

    def __init__(self, src):
        self.src = src
        tree = src.tree
        self.locals = {a.arg for a in walk(tree) if isinstance(a, ast.arg)} \
            | {n.id for n in walk(tree) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} \
            | {n.name for n in walk(tree) if isinstance(n, ast.FunctionDef)
               and n is not tree}
        self.taken = {n.id for n in walk(tree) if isinstance(n, ast.Name)} | self.locals \
            | set(src.globals)
        self.bound: dict = {}
        self.cloned = {id(n.func.value) for n in walk(tree) if isinstance(n, ast.Call)
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
        return bind_global(self.src, base, obj, self.taken, self.locals, self.bound)

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

    def owns(self, obj) -> bool:
        """Whether ``obj`` is one of the library's modules, functions or objects."""
        raise NotImplementedError

    def public_name(self, obj) -> str:
        """The library's full public name of one of its objects
        (``torch.nn.functional.pad``)."""
        raise NotImplementedError

    def public(self, node) -> str | None:
        """``"sum"``, ``"nn.functional.pad"``: the library's name of what
        ``node`` refers to, after its top-level package; None when it is not
        the library's."""
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType) and self.owns(base):
                return f"{self.public_name(base)}.{node.attr}".partition(".")[2]
        obj = self.resolve(node)
        if obj is None or not self.owns(obj):
            return None
        return (self.public_name(obj) or "").partition(".")[2]

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
            raise self.refuse(self.current, f"{self.prefix}'s `{name}` is read as "
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
        for n in walk(node):
            if isinstance(n, ast.Call):
                obj = self.resolve(n.func)
                if not (library_names.belongs_to_numpy(obj) or obj is library_names.logsumexp):
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
        if name is not None and name in self.dtypes:
            return ast.Attribute(ast.Name(self.global_name("np", numpy), ast.Load()),
                                 self.dtypes[name], ast.Load())
        return node

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
            spec = self.functions.get(name)
            if spec is None:
                raise self.unmapped(node.func, f"{self.prefix}.{name}")
            return self.apply(spec, node, list(node.args), f"{self.prefix}.{name}")
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in self.methods \
                and func.attr not in self.not_on_lists \
                and not isinstance(self.resolve(func.value), types.ModuleType):
            return self.apply(self.methods[func.attr], node, [func.value] + list(node.args),
                              f"{self.tensor}.{func.attr}")
        if isinstance(func, ast.Attribute) and func.attr in self.hints:
            raise self.unmapped(func, f"{self.tensor}.{func.attr}")
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        name = self.public(node)
        if name is not None:
            if name in self.dtypes:
                return ast.copy_location(self.dtype(node), node)
            if name in self.constants:
                return ast.copy_location(ast.Attribute(ast.Name(
                    self.global_name("np", numpy), ast.Load()), self.constants[name],
                    ast.Load()), node)
            raise self.unmapped(node, f"{self.prefix}.{name}")
        node = self.generic_visit(node)
        if getattr(node.value, "torch_pair", False) and node.attr in ("values", "indices"):
            return node.value.elts[0 if node.attr == "values" else 1]
        if node.attr in self.attributes and not isinstance(self.resolve(node.value),
                                                           types.ModuleType):
            self.current = node
            return ast.copy_location(self.attributes[node.attr](self, node.value), node)
        if node.attr in self.refused_attributes:
            raise self.unmapped(node, f"{self.tensor}.{node.attr}")
        return node

    def visit_Name(self, node):
        name = self.public(node) if isinstance(node.ctx, ast.Load) else None
        if name is not None:
            if name in self.dtypes:
                return ast.copy_location(self.dtype(node), node)
            obj = self.resolve(node)
            if not callable(obj) and not isinstance(obj, types.ModuleType):
                raise self.refuse(node, f"`{node.id}` is a {self.prefix} tensor read from the "
                                  "module's globals: s2s-ad's code computes with NumPy arrays; "
                                  "pass it as an argument (a NumPy array), or make it one "
                                  "(`.numpy()`)")
            raise self.unmapped(node, f"{self.prefix}.{name}" if name else self.prefix)
        return node

    def unmapped(self, node, what: str):
        short = what.rpartition(".")[2]
        hint = self.hints.get(short) or self.hints.get(what.split(".")[1] if "." in what else "")
        return self.refuse(node, f"`{ast.unparse(node)}` ({what}) has no NumPy reading in "
                           "s2s-ad" + (f": {hint}" if hint else f"; docs/numpy.md "
                                       f"({self.section}) lists what is read"))

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
            key = self.renamed.get(kw.arg, kw.arg)
            if kw.arg in self.dropped:
                continue
            if kw.arg is None or key not in names:
                raise self.refuse(kw.value if kw.arg is None else kw, f"`{what}`: the argument "
                                  f"`{kw.arg or '**'}` is not supported")
            if key in bound:
                raise self.refuse(kw, f"`{what}` got `{kw.arg}` twice")
            bound[key] = kw.value
        self.check_bound(node, positional, what, bound)
        return bound


    def check_bound(self, node, positional: list, what: str, bound: dict) -> None:
        """Refuse what the library's call means that the rewrite cannot tell
        from the text (a subclass's checks)."""



def bind_global(src, base: str, obj, taken: set, local: set, bound: dict) -> str:
    """A global name bound to ``obj`` for the rewritten source: one that
    already holds it (not shadowed by a local), else ``base``, ``base_1``, ...
    (free in ``taken`` and among the builtins) added to a copy of the
    function's globals; ``bound`` remembers it per object."""
    if id(obj) in bound:
        return bound[id(obj)]
    name = next((k for k, v in src.globals.items() if v is obj and k not in local), None)
    if name is None:
        name, i = base, 1
        while name in taken or hasattr(builtins, name):
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        if src.globals is getattr(src.fn, "__globals__", None):
            src.globals = dict(src.globals)
        src.globals[name] = obj
    bound[id(obj)] = name
    return name
