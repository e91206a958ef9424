"""Finding a function's source.

Contract: :func:`locate` takes a Python function and returns a
:class:`Source`: the parsed ``def`` (line numbers shifted to the file's), the
file's lines for error messages, and the function's globals, which the
frontend uses to resolve ``math``, ``numpy`` and module constants.
:func:`load_target` turns a command-line target into a function.

>>> import math
>>> def f(x): return math.sin(x)
>>> locate(f).tree.name
'f'
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import numbers
import os
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field

from s2s_ad.frontend import (jax_names, library_names, module_data, module_lists, tf_names,
                              torch_names)
from s2s_ad.frontend.tf_table import METHODS as TF_METHODS
from s2s_ad.frontend.torch_table import METHODS as TENSOR_METHODS
from s2s_ad.errors import SourceError, TargetError
from s2s_ad.frontend.specs import captured_spec
from s2s_ad.syntax_walk import child_nodes, walk
from s2s_ad import source_text


@dataclass
class Source:
    fn: types.FunctionType
    file: str
    """The path as the user should see it (relative to the current directory when inside it)."""
    tree: ast.FunctionDef
    lines: list[str]
    """The whole file's lines (1-based access via :meth:`line`)."""
    globals: dict
    captured: dict = field(default_factory=dict)
    """For a closure: the variables it captures that hold data (numbers,
    arrays), name -> value when located. They are keyword-only parameters of
    ``tree`` after the function's own, and constants of the gradient (see
    :func:`captured_values`)."""
    module_data: tuple = ()
    """The names in ``captured`` that are module-level data the function
    reads (:mod:`s2s_ad.frontend.module_data`), read from its globals, not
    from closure cells; they follow the closure's captured names."""
    jax: bool = False
    """Whether the function reads JAX (``jnp``, ``jax.vmap``, ...): its globals
    are then read through :func:`s2s_ad.frontend.jax_names.numpy_view` and its
    JAX forms rewritten before lowering (:mod:`s2s_ad.frontend.jax_forms`)."""
    jax_desugared: bool = False
    torch: bool = False
    """Whether the function is written against PyTorch: its torch calls and
    tensor methods are rewritten as NumPy before lowering
    (:mod:`s2s_ad.frontend.torch_forms`)."""
    torch_desugared: bool = False
    tf: bool = False
    """Whether the function is written against TensorFlow: its calls are
    rewritten as NumPy before lowering (:mod:`s2s_ad.frontend.tf_forms`)."""
    tf_desugared: bool = False

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""

    def error(self, node: ast.AST, message: str) -> SourceError:
        """A :class:`SourceError` pointing at ``node``."""
        lineno = getattr(node, "lineno", self.tree.lineno)
        text = self.line(lineno)
        byte_col = getattr(node, "col_offset", 0)
        # ast columns count UTF-8 bytes; the caret must count characters.
        col = len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return SourceError(self._as_written(node, message), self.file, lineno, col, text)

    def _as_written(self, node: ast.AST, message: str) -> str:
        """``message`` with the code it quotes from ``node`` or its parts
        (between backticks, as ``ast.unparse`` writes them) as the user wrote
        it: a node an earlier pass rewrote keeps the place of the code it
        stands for, so ``range(c.pop())`` read as ``range(c_pop)`` is quoted
        as ``range(c.pop())``. The code at the node's place is written out as
        ``ast.unparse`` writes it; a node whose place holds no expression
        (made by a pass, not moved) is quoted as it is."""
        if "`" not in message:
            return message
        level, text = [node], None
        for _ in range(3):  # the node, its parts and theirs: what messages quote
            for n in level:
                if not isinstance(n, ast.expr) or getattr(n, "end_lineno", None) is None:
                    continue
                written = ast.unparse(n)
                if written not in message:
                    continue
                text = self.text if text is None else text
                segment = ast.get_source_segment(text, n)
                try:
                    original = ast.unparse(ast.parse(segment.strip(), mode="eval"))
                except (SyntaxError, ValueError, AttributeError):
                    continue  # no segment (None), or not an expression on its own
                if original != written:
                    message = _requoted(message, written, original)
            level = [c for n in level for c in child_nodes(n)]
        return message

    @property
    def text(self) -> str:
        return "".join(self.lines)


def _requoted(message: str, written: str, original: str) -> str:
    """``message`` with ``written`` replaced by ``original`` inside its
    backtick quotes only (the spans at odd positions between backticks), where
    it is not part of a longer name (``l``, a comprehension's variable, is not
    the ``l`` of ``._replace()``)."""
    found = re.compile(r"(?<![\w.])" + re.escape(written) + r"(?!\w)")
    parts = message.split("`")
    return "`".join(found.sub(lambda _: original, p) if i % 2 else p
                    for i, p in enumerate(parts))


def display_path(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def made_code(fn):
    """The generated function a derivative s2s-ad made wraps (its
    ``__wrapped__``), or None for anything else (the generated function itself
    included)."""
    raw = getattr(fn, "__wrapped__", None)
    return raw if getattr(fn, "__s2s_ad_origin__", None) is not None \
        and isinstance(raw, types.FunctionType) else None


def rechecked(fn) -> bool:
    """Is ``fn`` a derivative s2s-ad made whose code is checked, and may be
    made again, on each call (``s2s_ad.late_constants.Seeing``)?"""
    return getattr(type(fn), "__s2s_ad_rechecked__", False) is True


def current(fn):
    """A derivative s2s-ad made as it is for what the module constants it
    re-reads hold now (``late_constants.Seeing.current``); anything else as
    it is. A function calling it is lowered with that code, and its own
    fingerprint reads what decides it (``fingerprint._global``), so the
    caller's derivative is made again when it changes."""
    return fn.current() if rechecked(fn) else fn


def derivative_base(fn):
    """The function (or bound method) a re-checked derivative differentiates."""
    return fn._base


def generated_code(fn):
    """The function of the generated module behind a derivative s2s-ad made
    (``force = s2s_ad.grad(potential)``, called inside a function you
    differentiate): that module is in the subset, so it is read as any helper
    (its text registered under ``<s2s-ad ...>``); one that re-checks module
    constants on each call is read as it is for what they hold now. A
    :class:`SourceError` where the derivative chooses its code per call (by
    argument kinds, list lengths or static values)."""
    fn = current(fn)
    name = getattr(fn, "__name__", "the derivative")
    raw = made_code(fn)
    if rechecked(fn) or raw is None \
            or inspect.unwrap(raw) is not raw or getattr(raw, "__s2s_ad_by_shape__", False) \
            or getattr(fn, "__s2s_ad_statics__", None) is not None \
            or getattr(fn, "__s2s_ad_static_origin__", None) is not None \
            or not raw.__code__.co_filename.startswith("<s2s-ad"):
        raise SourceError(
            f"`{name}` is a derivative s2s-ad made whose code is chosen when it is called (by "
            "the kinds or lengths of its arguments or static values), so a function calling it cannot be differentiated through it: write its "
            f"module with `s2s-ad grad ... -o FILE` and call the function of that module, or "
            "differentiate the original function with s2s_ad.hessian, hvp or jvp(grad(...))")
    return raw


def locate(fn, method: bool = False) -> Source:
    """The source of ``fn``; :class:`SourceError` when it has none. A closure's
    captured data become keyword-only parameters of its tree (see
    :class:`Source`); a function lifted from a nested ``def`` or ``lambda``
    (:mod:`s2s_ad.frontend.closures`) carries its own source."""
    made = getattr(fn, "__s2s_source__", None)
    if isinstance(made, Source):
        return made
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        # frontend.targets.locate lifts the bound method you differentiate
        raise _method_error(fn)
    if rechecked(fn) or made_code(fn) is not None:
        fn = generated_code(fn)  # a derivative s2s-ad made, called by your code
    if not isinstance(fn, types.FunctionType):
        what = type(fn).__name__
        wrapped = getattr(fn, "__wrapped__", None)
        if isinstance(wrapped, types.FunctionType) and jax_names.is_jax_type(type(fn)):
            raise _jit_error(fn, wrapped)
        raise SourceError(f"{getattr(fn, '__name__', fn)!r} is a {what}, not a Python function "
                          "with source s2s-ad can read")
    if inspect.unwrap(fn) is not fn:
        # inspect would show the wrapped function's source, but the wrapper
        # is what runs: differentiating that source gives a wrong gradient.
        raise SourceError(f"{fn.__qualname__} is a wrapper made by a decorator "
                          f"(functools.wraps); s2s-ad would read the source of the wrapped "
                          f"function, not the code that runs. Differentiate the undecorated "
                          f"function ({fn.__qualname__}.__wrapped__)")
    try:
        file = inspect.getsourcefile(fn) or "<unknown>"
        lines, first = source_text.lines(fn)
    except (OSError, TypeError) as exc:
        raise SourceError(f"cannot read the source of {fn.__qualname__}: {exc}") from None
    if fn.__name__ == "<lambda>":
        return _locate_lambda(fn, file, first, lines)
    try:
        # The whole file, also for a function whose module is not in
        # sys.modules (loaded from a spec, or exec'd): error messages index
        # it by the file's line numbers.
        all_lines = source_text.file_lines(fn)
    except OSError:
        all_lines = []
    if all_lines[first - 1:first - 1 + len(lines)] != lines:
        all_lines = [""] * (first - 1) + lines
    body = textwrap.dedent("".join(lines))
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        module = ast.parse(body)
    except SyntaxError as exc:
        raise SourceError(f"cannot parse: {exc.msg}", display_path(file),
                          first + (exc.lineno or 1) - 1, max((exc.offset or 1) - 1, 0),
                          lines[(exc.lineno or 1) - 1]) from None
    tree = module.body[0]
    for node in walk(tree):
        if hasattr(node, "lineno"):
            node.lineno += first - 1
            if hasattr(node, "end_lineno") and node.end_lineno is not None:
                node.end_lineno += first - 1
            node.col_offset += indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += indent
    src = Source(fn, display_path(file), tree, all_lines, fn.__globals__)
    if not isinstance(tree, ast.FunctionDef):
        kind = "async function" if isinstance(tree, ast.AsyncFunctionDef) else type(tree).__name__
        raise src.error(tree, f"{kind} is not supported; s2s-ad differentiates plain `def` functions")
    if _stale(fn, tree, all_lines):
        raise src.error(tree, f"the source of {fn.__qualname__} in {src.file} is not the code that "
                        "runs (the file changed after it was imported?); reload the module")
    if fn.__code__.co_freevars:
        _capture(src)
    if not method:  # (a method's data come from its object: frontend.methods)
        _module_data(src)
    module_lists.inline(src)  # `consts.COEFFS`
    _read_jax(src)
    src.torch = torch_names.reads_torch(src.tree, src.globals, TENSOR_METHODS)
    src.tf = tf_names.reads_tf(src.tree, src.globals, TF_METHODS)
    params = src.tree.args.posonlyargs + src.tree.args.args
    owner = fn.__qualname__.rpartition(".")[0]
    if owner and not owner.endswith("<locals>") and params and params[0].arg == "self" \
            and not method:  # (method: the function of a bound method, frontend.methods)
        raise src.error(src.tree, f"{fn.__qualname__} is a method taken from its class, "
                        "without an object; differentiate it bound to one (`obj.method`; "
                        "on the command line `file.py:obj.method` for a module-level obj)")
    return src


def _read_jax(src: Source) -> None:
    """A function reading JAX: its globals read through jax_names' view
    (``jnp`` as ``numpy``), its JAX forms rewritten before lowering."""
    if jax_names.reads_jax(src.tree, src.globals):
        src.jax = True
        src.globals = jax_names.numpy_view(src.globals)


def _jit_error(fn, wrapped: types.FunctionType) -> SourceError:
    """The refusal of a function JAX compiled (``@jax.jit``), at its decorator."""
    name = wrapped.__qualname__
    message = (f"{name} is compiled by JAX (`{type(fn).__name__}`); s2s-ad reads the Python "
               f"function's source, not the code JAX compiles from it, and writes a NumPy "
               f"gradient: differentiate the undecorated function, `{name}.__wrapped__` "
               "(static arguments such as `static_argnums` are then ordinary int parameters)")
    try:
        src = locate(wrapped)
    except SourceError:
        return SourceError(message)
    decorators = src.tree.decorator_list
    jit = next((d for d in decorators if "jit" in ast.unparse(d)), decorators[0]
               if decorators else src.tree)
    return src.error(jit, message)


def _locate_lambda(fn: types.FunctionType, file: str, first: int, lines: list[str]) -> Source:
    """A ``lambda`` (``loss = lambda w: f(w, data)``, ``grad(lambda x: ...)``)
    read as the ``def`` it stands for: ``def NAME(args): return body``, at
    the lambda's own place in the file (NAME: the name it is assigned to,
    else ``lambda_LINE``). The lambda is found among those the file has on
    its first line by the positions of its code; lambdas that cannot be told
    apart are refused."""
    try:
        all_lines = source_text.file_lines(fn)
        module = ast.parse("".join(all_lines))
    except (OSError, SyntaxError):
        raise SourceError(f"cannot read the source of the lambda on line {first}", display_path(file),
                          first, 0, lines[0]) from None
    code = fn.__code__
    found = [n for n in walk(module) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno]
    if len(found) > 1:
        # the lambda whose body starts where its code's first position is
        starts = [(p[0], p[2]) for p in code.co_positions()
                  if None not in p and (p[1], p[3]) != (p[0], p[2])]  # (not the empty RESUME)
        start = min(starts) if starts else None
        found = [n for n in found if (n.body.lineno, n.body.col_offset) == start]
    if len(found) != 1:
        raise SourceError("s2s-ad cannot tell which lambda on this line is the one to "
                          "differentiate; define it with `def`", display_path(file),
                          code.co_firstlineno, 0, all_lines[code.co_firstlineno - 1])
    if _stale_lambda(code, all_lines):
        raise SourceError("the source of this lambda in the file is not the code that runs (the "
                          "file changed after it was imported?); reload the module",
                          display_path(file), code.co_firstlineno, 0,
                          all_lines[code.co_firstlineno - 1])
    node = found[0]
    name = f"lambda_{node.lineno}"
    for parent in walk(module):
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
            continue
        target, value = parent.targets[0], parent.value
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(target.elts) == len(value.elts) and node in value.elts:
            target = target.elts[value.elts.index(node)]  # sq, cube = lambda ..., lambda ...
        elif value is not node:
            continue
        if isinstance(target, ast.Name):
            name = target.id
    ret = ast.copy_location(ast.Return(value=node.body), node.body)
    tree = ast.copy_location(ast.FunctionDef(name=name, args=node.args, body=[ret],
                                             decorator_list=[], returns=None,
                                             type_comment=None), node)
    tree.end_lineno, tree.end_col_offset = node.end_lineno, node.end_col_offset
    src = Source(fn, display_path(file), tree, all_lines, fn.__globals__)
    if code.co_freevars:
        _capture(src)
    _module_data(src)
    module_lists.inline(src)
    _read_jax(src)
    return src


def _stale_lambda(code: types.CodeType, file_lines: list[str]) -> bool:
    """As :func:`_stale`, for a lambda: the file compiled whole has a lambda
    at the same positions with the same code?"""
    where = list(code.co_positions())
    twin = _twin(code, file_lines, lambda c: list(c.co_positions()) == where)
    if twin is _UNREADABLE:
        return False
    return twin is None or twin.co_code != code.co_code


_UNREADABLE = object()


_compiled_files: dict = {}
"""(file name, text) -> the text compiled whole (None: it does not compile):
every function s2s-ad reads is checked against its file."""


def _compiled(text: str, file: str):
    key = (file, text)
    if key not in _compiled_files:
        if len(_compiled_files) >= 64:
            _compiled_files.clear()
        try:
            _compiled_files[key] = compile(text, file, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            _compiled_files[key] = None
    return _compiled_files[key]


def _twin(code: types.CodeType, file_lines: list[str], same=lambda c: True):
    """The code object of the file compiled whole (in its own context) with
    ``code``'s name and first line for which ``same`` holds; None when there
    is none, ``_UNREADABLE`` when the file does not compile."""
    module_code = _compiled("".join(file_lines), code.co_filename)
    if module_code is None:
        return _UNREADABLE
    stack = [module_code]
    while stack:
        c = stack.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno and same(c):
            return c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return None


def is_data(value) -> bool:
    """A value a closure captures as data (a parameter of its gradient): a
    number, an array, or a structure of them (a list, tuple, str-keyed dict,
    dataclass or NamedTuple: a structure parameter, frontend/pytrees.py)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Number):
        return True
    if type(value).__module__ == "numpy" and hasattr(value, "shape"):
        return True
    return captured_spec(value) is not None


def _capture(src: Source) -> None:
    """A closure's captured variables: data (numbers, arrays) become
    keyword-only parameters of its tree, read from the closure's cells on
    every call of the gradient (:func:`captured_values`); functions, modules
    and classes are resolved as globals are. Anything else is refused at
    the ``def``."""
    fn = src.fn
    overlay = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            raise src.error(src.tree, f"{fn.__qualname__} reads `{name}` of the function that "
                            "made it, which has no value yet (it is assigned after the "
                            "closure is made); assign it first") from None
        if is_data(value):
            src.captured[name] = value
        elif isinstance(value, (types.FunctionType, types.ModuleType, type)) or value is None \
                or isinstance(value, (str, bool)):
            overlay[name] = value
        elif library_names.is_random(value):
            raise src.error(src.tree, f"{fn.__qualname__} captures `{name}`, a "
                            f"{type(value).__name__}: {library_names.RANDOM_DRAWS}")
        else:
            raise src.error(src.tree, f"{fn.__qualname__} captures `{name}`, a "
                            f"{type(value).__name__}; a closure may capture numbers, arrays, "
                            "structures of them (lists, tuples, dicts, dataclasses, NamedTuples), "
                            "functions and modules: pass it as a parameter")
    src.globals = overlay
    taken = {a.arg for a in walk(src.tree.args) if isinstance(a, ast.arg)}
    for name in src.captured:
        if name in taken:  # never: a parameter shadows a captured name
            continue
        src.tree.args.kwonlyargs.append(ast.copy_location(ast.arg(name), src.tree))
        src.tree.args.kw_defaults.append(None)


def _module_data(src: Source) -> None:
    """The module-level data the function reads (directly or through helpers
    of its module) become keyword-only parameters of its tree after a
    closure's captured ones, constants of the gradient read from its globals
    on every call (:mod:`s2s_ad.frontend.module_data`)."""
    taken = {a.arg for a in walk(src.tree.args) if isinstance(a, ast.arg)}
    read = [n for n in module_data.names(src.fn) if n not in taken and n not in src.captured]
    g = src.fn.__globals__
    for name in read:
        src.captured[name] = g[name]
        src.tree.args.kwonlyargs.append(ast.copy_location(ast.arg(name), src.tree))
        src.tree.args.kw_defaults.append(None)
    src.module_data = tuple(read)


def number_constant(value) -> bool:
    """A number, or a list or tuple of numbers: what a helper's closure
    captures that its code inlines (as a module's constants are)."""
    def number(v):
        return isinstance(v, numbers.Real) and not isinstance(v, bool)
    return number(value) or isinstance(value, (list, tuple)) and bool(value) \
        and all(number(v) for v in value)


def locate_helper(fn) -> Source:
    """The source of ``fn`` called by the function differentiated (a helper):
    as :func:`locate`'s, except that the numbers (and lists of numbers) a
    closure captures (``make_funs(d)``'s ``d``, read by the closure it
    returns) are read as constants of its code, as a module's numbers are,
    instead of parameters that only the function differentiated is given.
    The cache key holds their values (:mod:`s2s_ad.fingerprint`), so a
    closure made again with other numbers gets new code."""
    src = locate(fn)
    inlined = {n: v for n, v in src.captured.items()
               if n not in src.module_data and number_constant(v)}
    if not inlined:
        return src
    tree = copy.deepcopy(src.tree)
    kept = [(a, d) for a, d in zip(tree.args.kwonlyargs, tree.args.kw_defaults)
            if a.arg not in inlined]
    tree.args.kwonlyargs = [a for a, _ in kept]
    tree.args.kw_defaults = [d for _, d in kept]
    return dataclasses.replace(src, tree=tree, globals={**src.globals, **inlined},
                               captured={n: v for n, v in src.captured.items()
                                         if n not in inlined})


def captured_values(fn) -> dict:
    """The data ``fn`` (a closure) captures and the module-level data it
    reads, read now: the values its gradient takes for its captured
    parameters (closure cells first). Empty for other functions."""
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__s2s_source__", None) is not None:
        return {}
    out = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if is_data(value):
            out[name] = value
    read = module_data.names(fn)
    if read:
        own = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        g = fn.__globals__
        out.update((n, g[n]) for n in read if n not in out and n not in own)
    return out


def _method_error(method: types.MethodType) -> SourceError:
    """A bound method called from the function you differentiate: it is
    differentiated only as the target itself (``grad(obj.method)``)."""
    fn = method.__func__
    message = (f"{fn.__qualname__} is a method bound to an object; s2s-ad differentiates a "
               "bound method you give it (grad(obj.method)), not one called from the "
               "function you differentiate: pass what it reads as parameters")
    try:
        src = locate(fn, method=True)
    except SourceError as exc:
        return SourceError(f"{message} ({exc.message})")
    return src.error(src.tree, message)


def _stale(fn: types.FunctionType, tree: ast.AST, file_lines: list[str]) -> bool:
    """Does the source read differ from the code that runs? (Then s2s-ad would
    differentiate other code.) The file is compiled whole, in its own context
    (bytecode depends on it: a module-level ``import math`` changes how
    ``math.sin(x)`` compiles), and the function's code object found by name
    and first line is compared with the running one. Undecidable cases
    (file unreadable, code object not found) count as not stale."""
    code = fn.__code__
    starts = min([tree.lineno] + [d.lineno for d in tree.decorator_list])
    if tree.name != code.co_name or starts != code.co_firstlineno:
        return True
    twin = _twin(code, file_lines)
    return twin is not None and twin is not _UNREADABLE and twin.co_code != code.co_code


def load_target(target: str):
    """The function a command-line target names.

    ``path/to/file.py:fn``, ``path/to/file.py.fn`` and ``pkg.mod.fn`` (importable
    from the current directory) are accepted; ``fn`` may be a dotted path
    inside the module: ``Class.method`` (a staticmethod or classmethod),
    ``obj.method`` (a method bound to a module-level object)."""
    path, name = _split_target(target)
    if path is not None:
        if not os.path.isfile(path):
            raise TargetError(f"{target}: no such file: {path}")
        module = _import_file(path)
    else:
        if "." not in target:
            raise TargetError(f"{target}: expected file.py:function or package.module.function")
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        module, name = _import_longest(target)
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise TargetError(f"{target}: module {module.__name__} has no function {name!r}")
    bound = isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType)
    if not isinstance(fn, types.FunctionType) and not bound:
        raise TargetError(f"{target}: {name!r} is a {type(fn).__name__}, not a Python function")
    return fn


def _import_longest(target: str):
    """``pkg.mod.Class.method`` → (the module ``pkg.mod``, ``"Class.method"``):
    the longest importable prefix."""
    parts = target.split(".")
    error = None
    for k in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:k])
        try:
            return importlib.import_module(modname), ".".join(parts[k:])
        except ModuleNotFoundError as exc:
            if error is None:
                error = exc
            if exc.name is not None and not modname.startswith(exc.name):
                break  # the module exists and imports something missing
        except ImportError as exc:
            error = exc
            break
    modname = target.rpartition(".")[0]
    raise TargetError(f"{target}: cannot import module {modname}: {error}")


def _split_target(target: str) -> tuple[str | None, str]:
    if ":" in target:
        path, _, name = target.rpartition(":")
        return path, name
    if ".py." in target:
        path, _, name = target.rpartition(".py.")
        return path + ".py", name
    if target.endswith(".py"):
        raise TargetError(f"{target}: name the function too, as {target}:FN")
    return None, target


def _import_file(path: str) -> types.ModuleType:
    """Import a file as a module, with its folder on sys.path so that its own
    imports of sibling modules work."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    modname = os.path.splitext(os.path.basename(path))[0]
    existing = sys.modules.get(modname)
    if existing is not None and os.path.abspath(getattr(existing, "__file__", "") or "") == path:
        return existing
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[modname]
        raise SourceError(f"cannot parse: {exc.msg}", display_path(exc.filename or path),
                          exc.lineno or 0, max((exc.offset or 1) - 1, 0), exc.text) from None
    except Exception as exc:
        del sys.modules[modname]
        raise TargetError(f"{display_path(path)}: importing it raised {type(exc).__name__}: {exc}") from None
    return module
