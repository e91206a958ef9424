"""The pipeline, from a Python function to the text of its generated module.

    source.locate → frontend.lower → calls.collect → inline.run
        → reverse.transform (or forward.transform) → optimize → emit.module

Nothing here caches or dispatches on arguments: that is :mod:`s2s_ad.cache`;
the public functions built on both are in :mod:`s2s_ad.api`.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from typing import Callable, Sequence, Union

from s2s_ad.frontend import checkpoint as checkpoint_mod
from s2s_ad.frontend import (calls, hoist, inline, lowering as frontend, param_uses, source,
                             structures, targets)
from s2s_ad.frontend import loop_batching
from s2s_ad.emit import module as emit, optimize, reuse
from s2s_ad import ir
from s2s_ad.reverse import transform as reverse
from s2s_ad.reverse.needed import needed_adjoints
from s2s_ad.forward import transform as forward
from s2s_ad.names import Namer
from s2s_ad.emit.code import CodeFunction
from s2s_ad.errors import S2SError, SourceError

Wrt = Union[None, int, str, Sequence[Union[int, str]]]


class WrtError(S2SError, ValueError):
    """``wrt`` names no parameter of the function."""


class OutputError(S2SError, ValueError):
    """``output`` is missing for a function returning a tuple, or names no item of it."""


def choose_output(func: ir.Function, output: int | None) -> ir.Function:
    """``func`` with its objective set: the one number it returns, or item
    ``output`` of the tuple it returns (the other items stay as ``outputs``,
    returned as the value by ``value_and_grad``)."""
    if func.outputs is None:
        if output is not None:
            raise OutputError(f"{func.name} returns one number; output={output!r} applies to "
                              "functions that return a tuple or list")
        return func
    n = len(func.outputs)
    if output is None:
        raise OutputError(f"{func.name} returns {n} values; pass output=K (--output K) to choose "
                          "the one to differentiate")
    if isinstance(output, bool) or not isinstance(output, numbers.Integral) \
            or not -n <= output < n:
        raise OutputError(f"output={output!r}: {func.name} returns {n} values (0..{n - 1})")
    return dataclasses.replace(func, result=func.outputs[output])


def several_values(name: str, n: int) -> OutputError:
    """The refusal of a Hessian of a function returning ``n`` values."""
    return OutputError(f"{name} returns {n} values; a Hessian is of a function returning one "
                       "number: differentiate a function returning the one you want "
                       "(`lambda x, y: f(x, y)[K]`)")


def _refuse_integer_result(func: ir.Function, src: source.Source) -> None:
    """A function whose result is a bool or an int (a comparison, ``round(x)``,
    ``int(x)``, an integer constant) has no gradient: refuse, located at the
    op that makes it, rather than return 0.0 (as JAX refuses integer outputs)."""
    r = func.result
    kind = r.kind if isinstance(r, ir.Value) else (
        "bool" if isinstance(r.value, bool) else "int" if isinstance(r.value, int) else None)
    if kind not in ("int", "bool", "list"):
        return
    loc = func.loc
    for op in ir.walk(func.body):
        if getattr(op, "out", None) is r and getattr(op, "loc", None) is not None:
            loc = op.loc
    if kind == "list":
        raise SourceError(f"the output of {func.name} chosen is a list of any length, which "
                          "has no gradient (the gradient is of a number): choose a number "
                          "with output=K (--output K), or differentiate a function returning "
                          "a number computed from the list (`sum(...)`, an item)",
                          loc.file, loc.line, loc.col, src.line(loc.line))
    what = "a bool" if kind == "bool" else "an int"
    raise SourceError(f"{func.name} returns {what}, which has no gradient; return a float "
                      "(e.g. wrap it in float(...) only if a zero gradient is really meant)",
                      loc.file, loc.line, loc.col, src.line(loc.line))


def lower(fn: Callable, lengths: dict | None = None, arrays: Sequence[str] = (),
          statics: dict | None = None) -> ir.Function:
    """The SSA IR of ``fn`` (``arrays``: the parameters that receive NumPy arrays;
    ``statics``: the static values it is given, strings, None and bools)."""
    return loop_batching.retrying(
        lambda: frontend.lower(targets.locate(fn), lengths, arrays, statics))


def lower_called(fn: Callable, lengths: dict | None = None, arrays: Sequence[str] = (),
                 statics: dict | None = None) -> ir.Function:
    """:func:`lower`, with the parameters ``fn`` passes to a helper that uses
    them as integers marked too (``ir.Function.integers``,
    :mod:`s2s_ad.frontend.integer_args`): the parameters ``wrt=None`` leaves
    out, as the transforms do."""
    src = targets.locate(fn)
    func = loop_batching.retrying(lambda: frontend.lower(src, lengths, arrays, statics))
    calls.collect(func, src)
    return func


def lower_lists(src: source.Source, lengths: dict | None = None, arrays: Sequence[str] = (),
                statics: dict | None = None, list_result: bool = False
                ) -> tuple[ir.Function, param_uses.SequenceParameter | None, calls.CallGraph]:
    """``src`` lowered with each parameter used as a list, and not given a
    length, as a list of any length (``("list", RUNTIME)``: the generated
    code reads its length when it runs), the refusal that found the first
    such parameter (None when there is none), and the call graph. A
    parameter passed unchanged to a helper that uses it as a list is found
    too. Where the program uses such a list in a way only a known length
    allows (slices, unpacking), that refusal is raised, saying why, so that
    callers fall back to code generated per length."""
    given = dict(lengths or {})
    first = None
    while True:
        try:
            func = frontend.lower(src, given, arrays, statics, list_result=list_result)
            return func, first, calls.collect(func, src)
        except param_uses.SequenceParameter as again:
            ours = getattr(again, "owner", src.fn) is src.fn
            if not ours or (first is not None and again.param in given):
                if first is None:
                    raise
                raise _fixed_length(first, again) from None
            first = first or again
            given[again.param] = ("list", structures.RUNTIME)
        except SourceError as why:
            if first is None:
                raise
            raise _fixed_length(first, why) from None


def _fixed_length(first: param_uses.SequenceParameter,
                  why: SourceError) -> param_uses.SequenceParameter:
    """``first`` (a parameter used as a list needs its length), saying why a
    list of any length does not do."""
    return param_uses.SequenceParameter(
        first.param, f"{first.message} (as a list of any length: line {why.line}: "
        f"{why.message})", first.file, first.line, first.col, first.source_line)


def wrt_name(w, names: list[str], owner: str) -> str:
    """The parameter one ``wrt`` entry names, an index or a name, among ``names``
    (``owner``'s parameters, in order); :class:`WrtError` for anything else."""
    if isinstance(w, bool) or not isinstance(w, (numbers.Integral, str)):
        raise WrtError(f"wrt entries are parameter indices or names, not {w!r}")
    if isinstance(w, str):
        if w not in names:
            raise WrtError(f"{owner} has no parameter {w!r} (parameters: {', '.join(names)})")
        return w
    if not -len(names) <= w < len(names):
        raise WrtError(f"{owner} has {len(names)} parameter(s); wrt={w} is out of range")
    return names[w]


def resolve_wrt(func: ir.Function, wrt: Wrt) -> tuple[list[ir.Value], bool]:
    """The parameters ``wrt`` names, and whether the gradient is a tuple.

    ``None`` means every parameter (a tuple when there are several); an int or
    a name means one parameter (a plain gradient); a sequence means those
    parameters (always a tuple)."""
    params = {p.value.var: p.value for p in func.params}
    order = list(params.values())

    def one(w) -> ir.Value:
        return params[wrt_name(w, list(params), func.name)]

    if wrt is None:
        # Integer parameters (range bounds, indices) have no gradient.
        order = [v for v in order if v.var not in func.integers]
        if not order:
            used = [func.integers[v.var] for v in params.values() if v.var in func.integers]
            if used and isinstance(used[0], Exception):
                raise used[0]  # where the first is used as an integer, located
            raise WrtError(f"{func.name} has no parameters to differentiate with respect to")
        return order, len(order) > 1
    if isinstance(wrt, (str, numbers.Integral)) or not isinstance(wrt, (list, tuple)):
        return [one(wrt)], False
    values = [one(w) for w in wrt]
    if not values:
        raise WrtError("wrt is empty")
    if len({id(v) for v in values}) != len(values):
        raise WrtError(f"wrt names a parameter twice: {wrt!r}")
    return values, True


def program(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
            pair: bool = False, tuple_result: bool | None = None, output: int | None = None,
            lengths: dict | None = None, arrays: Sequence[str] = (), runtime_lists: bool = True,
            statics: dict | None = None, checkpoint=None
            ) -> tuple[list[CodeFunction], source.Source, calls.CallGraph]:
    """The generated functions for ``fn``, before they become text: the
    gradient (or, with ``pair``, ``fn``'s own forward/backward pair) first,
    then the pair of every user function it calls (one per specialisation,
    :func:`s2s_ad.calls.collect`). ``arrays`` names the parameters of ``fn``
    that receive NumPy arrays. With ``runtime_lists``, a parameter used as
    a list whose length ``lengths`` does not give is a list of any length
    where the program allows it (:func:`lower_lists`). ``statics`` maps
    parameters to the strings, None or bools the code is generated for
    (without it, such parameters' defaults: :mod:`s2s_ad.frontend.statics`).
    ``checkpoint`` says which loops keep snapshots instead of a full tape
    (:mod:`s2s_ad.frontend.checkpoint`)."""
    checkpoint_mod.budget(checkpoint)  # a bad option is refused before any work
    made = loop_batching.retrying(lambda: _program_for(
        fn, wrt, with_value, pair, tuple_result, output, lengths, arrays, runtime_lists,
        statics, checkpoint))
    if (getattr(fn, "__s2s_ad_origin__", None) or ("",))[0] == "jvp":
        # the gradient of a JVP module (second derivatives): the values its
        # forward pass holds are read again, not computed again (emit/reuse.py)
        for f in made[0]:
            reuse.run(f, f.source.modules)
    return made


def _program_for(fn, wrt, with_value, pair, tuple_result, output, lengths, arrays, runtime_lists,
               statics, checkpoint):
    src = targets.locate(fn)
    if not runtime_lists:
        func = frontend.lower(src, lengths, arrays, statics, list_result=pair)
        return _program(func, calls.collect(func, src), src, wrt, with_value,
                        pair, tuple_result, output, checkpoint)
    # a pair (vjp) may return a list grown at run time: its cotangent is a list
    func, first, graph = lower_lists(src, lengths, arrays, statics, list_result=pair)
    if first is None:
        return _program(func, graph, src, wrt, with_value, pair, tuple_result, output,
                        checkpoint)
    try:
        return _program(func, graph, src, wrt, with_value, pair, tuple_result, output,
                        checkpoint)
    except SourceError as why:
        raise _fixed_length(first, why) from None


def _program(func: ir.Function, graph: calls.CallGraph, src: source.Source, wrt: Wrt,
             with_value: bool, pair: bool, tuple_result: bool | None, output: int | None,
             checkpoint=None):
    inline.run(graph)
    for f in [func, *graph.callees]:
        hoist.run(f)
        checkpoint_mod.run(f, checkpoint)
    if pair:
        main_names = [f"{func.name}_fwd", f"{func.name}_bwd"]
    else:
        main_names = [("value_and_grad_" if with_value else "grad_") + func.name]
    taken = calls.all_names(graph) | set(main_names)
    pairs = calls.pairs(graph, taken)
    reserved = frozenset(taken | {n for p in pairs.values() for n in (p.fwd, p.bwd)})
    if pair:
        functions = list(reverse.transform_pair(func, *main_names, pairs, reserved))
        values = func.param_values
    else:
        func = choose_output(func, output)
        _refuse_integer_result(func, src)
        graph.main = func
        values, as_tuple = resolve_wrt(func, wrt)
        functions = [reverse.transform(func, values, with_value=with_value,
                                       tuple_result=as_tuple if tuple_result is None
                                       else tuple_result, pairs=pairs, reserved=reserved)]
    needed = needed_adjoints(graph, values)  # what the call sites read of each helper
    for callee in graph.callees:
        spec = calls.specialisation(graph, callee)
        p = pairs[spec]
        functions += reverse.transform_pair(callee, p.fwd, p.bwd, pairs, reserved,
                                            needed=needed.get(spec), called=True)
    return [optimize.drop_unused_items(f) for f in functions], src, graph


def gradient_source(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
                    output: int | None = None, lengths: dict | None = None,
                    arrays: Sequence[str] = (), statics: dict | None = None,
                    checkpoint=None) -> str:
    """The source text of the gradient module of ``fn``.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (see ``docs/subset.md``).
    wrt : int, str, sequence of them, or None
        The parameters to differentiate with respect to; None means all.
    with_value : bool
        Generate ``value_and_grad_FN`` (returning ``(value, gradient)``)
        instead of ``grad_FN``.
    output : int, optional
        For a function returning a tuple or list: the index of the item to
        differentiate (required then; see :func:`grad`).
    lengths : dict, optional
        For parameters that receive a list or tuple of numbers: their
        lengths, ``{"xs": 3}`` (a list) or ``{"xs": ("tuple", 3)}``. The code
        is generated for those lengths; their gradients have the same shape.
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays. A function whose source
        uses NumPy takes its parameters for arrays anyway (unless annotated
        ``float``/``int`` or given a numeric default); one that does not is
        generated for numbers unless its array parameters are named here.
    statics : dict, optional
        Parameters that receive a string, None or a bool, and that value
        (``{"mode": "l1"}``): the code is generated for it and checks it
        (``if mode != 'l1': raise ValueError``). Without it, a parameter whose
        default is a string, None or a bool is generated for its default.
    checkpoint : bool, int or None
        ``True`` (or a number of snapshots) checkpoints every loop inside no
        other loop (``docs/checkpointing.md``); ``None`` checkpoints the loops
        marked ``# s2s-ad: checkpoint``; ``False`` none.

    Returns
    -------
    str
        A Python module defining ``grad_FN`` (or ``value_and_grad_FN``)
        and, for every user function ``fn`` calls, its forward/backward pair.
        It imports ``math`` and the modules of user rules if needed, never
        s2s_ad.

    Examples
    --------
    >>> def f(x):
    ...     return x * x
    >>> print(gradient_source(f))     # doctest: +SKIP
    """
    return gradient_module(fn, wrt, with_value=with_value, output=output, lengths=lengths,
                           arrays=arrays, statics=statics, checkpoint=checkpoint)[0]


def with_default_statics(fn: Callable, statics: dict | None) -> dict | None:
    """``statics`` (the static values a user names) plus the string, None
    and bool defaults of the parameters it does not name."""
    if statics is None:
        return None
    from s2s_ad.frontend.statics import is_static_value
    params = inspect.signature(fn).parameters
    unknown = sorted(set(statics) - set(params))
    if unknown:
        raise WrtError(f"statics names {unknown[0]!r} (--static {unknown[0]}=...), but "
                       f"{fn.__name__} has no such parameter (parameters: {', '.join(params)})")
    out = {n: p.default for n, p in params.items()
           if p.default is not p.empty and is_static_value(p.default)
}
    out.update(statics)
    return out


def gradient_module(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
                    output: int | None = None, lengths: dict | None = None,
                    arrays: Sequence[str] = (), statics: dict | None = None,
                    checkpoint=None) -> tuple[str, list[str]]:
    """:func:`gradient_source`'s text, and the source files it was generated
    from: ``fn``'s own and those of every function it calls (``grad -o``
    refuses to write over any of them)."""
    if isinstance(arrays, str) or not all(isinstance(a, str) for a in arrays):
        raise TypeError(f"arrays must be a sequence of parameter names (strings), not "
                        f"{arrays!r}")
    functions, src, graph = program(fn, wrt, with_value=with_value, output=output,
                                    lengths=lengths, arrays=arrays,
                                    statics=with_default_statics(fn, statics),
                                    checkpoint=checkpoint)
    # every function reached, the inlined ones too (graph.lowered, not graph.callees)
    files = list(dict.fromkeys([src.file, *(f.loc.file for f in graph.lowered.values())]))
    return emit.module(functions, src.file), files


def vjp_source(fn: Callable, lengths: dict | None = None, arrays: Sequence[str] = (),
               checkpoint=None) -> str:
    """The source text of ``fn``'s forward/backward pair, as :func:`vjp` uses it.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset.
    lengths : dict, optional
        Lengths of list or tuple parameters, as for :func:`gradient_source`.
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays, as for :func:`gradient_source`.

    Returns
    -------
    str
        A Python module defining ``FN_fwd(*params) -> (value, tape)`` and
        ``FN_bwd(tape, cotangent) -> (cotangent of each parameter, ...)``,
        plus the pairs of the user functions ``fn`` calls.
    """
    functions, src, _ = program(fn, pair=True, lengths=lengths, arrays=arrays,
                                checkpoint=checkpoint)
    return emit.module(functions, src.file)


def gradient_code(fn: Callable, wrt: Wrt, output: int | None, lengths: dict | None,
             arrays: Sequence[str] = ()) -> tuple[ir.Function, CodeFunction]:
    """``fn``'s IR and its gradient function (calls to helpers included),
    taped: ``explain`` and ``graph`` show each loop's reverse once, whether
    or not the module checkpoints it."""
    code = program(fn, wrt, output=output, lengths=lengths, arrays=arrays,
                   checkpoint=False)[0][0]
    return code.source, code



def jvp_program(fn: Callable, wrt: Wrt = None, *, lengths: dict | None = None,
                arrays: Sequence[str] = (), statics: dict | None = None,
                output: int | None = None
                ) -> tuple[list[CodeFunction], source.Source, calls.CallGraph]:
    """The generated functions of ``fn``'s Jacobian-vector product (forward
    mode): ``jvp_FN`` first, then a JVP function for every user function it
    calls (one per specialisation). ``wrt`` None means every parameter that
    is not used as an integer. ``output`` K: of item K of the tuple ``fn``
    returns only (``(value, tangent)`` of that item; second derivatives of
    ``grad(fn, output=K)`` go through it)."""
    return loop_batching.retrying(lambda: _jvp_program_for(fn, wrt, lengths, arrays, statics,
                                                           output))


def _jvp_program_for(fn, wrt, lengths, arrays, statics, output=None):
    src = targets.locate(fn)
    # a list parameter not given a length is a list of any length where the
    # program allows it, its tangent a list of its length (as for gradients)
    func, first, graph = lower_lists(src, lengths, arrays, statics)
    if output is not None:  # that item alone: its value and tangent, no tuple
        func = dataclasses.replace(choose_output(func, output), outputs=None)
    try:
        return _jvp_program(func, graph, src, wrt)
    except SourceError as why:
        if first is None:
            raise
        raise _fixed_length(first, why) from None


def _jvp_program(func: ir.Function, graph: calls.CallGraph, src: source.Source, wrt: Wrt):
    inline.run(graph)
    for f in [func, *graph.callees]:
        hoist.run(f)  # loop invariants (and their tangents) computed once, before the loop
    if func.result is not None:
        _refuse_integer_result(func, src)
    main = forward.JVP_PREFIX + func.name
    namer = Namer(reserved=calls.all_names(graph) | {main})
    jvps = {spec: namer.fresh(forward.JVP_PREFIX + f.name) for spec, f in graph.lowered.items()}
    reserved = frozenset(namer.taken)
    values, _ = resolve_wrt(func, wrt)
    functions = [forward.transform(func, values, main, jvps=jvps, reserved=reserved)]
    for callee in graph.callees:
        spec = calls.specialisation(graph, callee)
        functions.append(forward.transform_callee(callee, jvps[spec], jvps=jvps,
                                                  reserved=reserved))
    return [optimize.drop_unused_items(f) for f in functions], src, graph


def jvp_source(fn: Callable, wrt: Wrt = None, *, lengths: dict | None = None,
               arrays: Sequence[str] = ()) -> str:
    """The source text of ``fn``'s forward-mode module, as :func:`s2s_ad.jvp` uses it.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset.
    wrt : int, str, sequence of them, or None
        The parameters that get a tangent; None means all (but those used
        as integers).
    lengths, arrays : optional
        As for :func:`gradient_source`.

    Returns
    -------
    str
        A Python module defining ``jvp_FN(*params, *, dx=...) -> (value,
        tangent)``, each tangent line beside the primal line it
        differentiates, and a JVP function for every user function ``fn`` calls.
    """
    return jvp_module(fn, wrt, lengths=lengths, arrays=arrays)[0]


def jvp_module(fn: Callable, wrt: Wrt = None, *, lengths: dict | None = None,
               arrays: Sequence[str] = (), statics: dict | None = None) -> tuple[str, list[str]]:
    """:func:`jvp_source`'s text and the source files it was generated from."""
    functions, src, graph = jvp_program(fn, wrt, lengths=lengths, arrays=arrays,
                                        statics=with_default_statics(fn, statics))
    files = list(dict.fromkeys([src.file, *(f.loc.file for f in graph.lowered.values())]))
    return emit.module(functions, src.file), files
