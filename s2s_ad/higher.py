"""Derivatives of generated derivatives (Hessian-vector products and
Hessians: :mod:`s2s_ad.hessians`; Jacobians: :mod:`s2s_ad.jacobians`; the
``s2s-ad hessian`` module: :mod:`s2s_ad.hessian_module`).

Every second derivative here is one generated module: the reverse transform
of the forward-mode (JVP) module of ``f``. The JVP module is inside the subset
s2s-ad differentiates (the user's own loops and branches, each tangent line a
number or array expression, calls to the helpers' own JVP functions), so its
gradient is made by the same pipeline as any other:

    hvp(f)(x, v)     = ∇_x [ jvp_f(x, dx=v).tangent ]       = H v   (one pass)
    jvp(grad(f))     = (σ·∇f, σ·H t + t_σ·∇f)                 from that pass
    grad(grad(f))    = σ·∇_q ∂f/∂w                           from that pass

A function made by :func:`s2s_ad.grad` (or ``jvp``) carries where it came from
(``__s2s_ad_origin__``): differentiating it again reads ``f``'s IR, not the
generated text, so a gradient with a tape, recorded branch decisions, helper
pairs or NumPy un-broadcasting is differentiated like the straight-line one.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from typing import Callable

from s2s_ad import tree_values
from s2s_ad.callplan import private
from s2s_ad.cache import (_lengths_key, _wrt_key, array_arguments, entry, generated,
                          positional_names, shapes, static_parameters)
from s2s_ad.errors import S2SError
from s2s_ad.frontend import statics as frontend_statics, targets
from s2s_ad.pipeline import Wrt, WrtError, lower_called, resolve_wrt, wrt_name

__all__ = ["transform", "HigherOrderError"]


class HigherOrderError(S2SError, ValueError):
    """A derivative of a generated function that s2s-ad does not make."""


SECOND = ("second",)
"""The origin of the functions the higher-order API returns (``grad`` or
``jvp`` of a generated gradient, ``hvp``, ``hessian``): Python that calls
generated code, not one generated function."""


def _not_second(fn: Callable) -> None:
    """Refuse a function the higher-order API returned (third derivatives)."""
    if origin(fn) is SECOND:
        raise HigherOrderError(
            f"{fn.__name__} computes second derivatives by calling generated modules; it is "
            "not one generated function, so s2s-ad does not differentiate it again (third "
            "derivatives). Write the gradient modules to files and differentiate the second "
            "one: `s2s-ad grad f.py:f -o g1.py`, `s2s-ad grad g1.py:grad_f -o g2.py`, then "
            "s2s_ad.grad(g2.grad_grad_f) (docs/forward.md)")


def _static_origin(fn: Callable):
    """For ``grad(f)`` of an ``f`` taking static values (strings, None, bools),
    whose code is chosen per call by them: ``("grad", f, wrt, None, lengths)``;
    else None."""
    made = getattr(fn, "__s2s_ad_static_origin__", None)
    if made is None or made[0] != "grad" or made[3] is not None:
        return None
    return made


def origin(fn: Callable):
    """``(kind, f, wrt, output, lengths)`` for a function s2s-ad generated, else None."""
    return getattr(fn, "__s2s_ad_origin__", None)


def transform(fn: Callable, wrt: Wrt, kind: str, output, lengths, checkpoint=None,
              jacobian: bool = False) -> Callable:
    """The generated ``kind`` ("grad", "value_and_grad", "jvp") of ``fn``; for a
    gradient s2s-ad generated, made from the original function's IR. ``jacobian``:
    asked for by ``jacfwd``, which does not choose its code per static value (a
    gradient that does is refused)."""
    made = origin(fn)
    statics = getattr(fn, "__s2s_ad_statics__", None)
    if made is None and _static_origin(fn) is not None and not jacobian:
        # grad(grad(f)), f taking a string, None or bool: the code of each derivative
        # is chosen per call by those values, as the first gradient's is
        if kind == "jvp":
            return _jvp_of_grad(fn, _static_origin(fn), wrt)
        return _grad_of_grad(fn, _static_origin(fn), wrt, output, kind == "value_and_grad")
    if made is None and statics is not None:
        raise HigherOrderError(
            f"{fn.__name__} chooses its generated code per call by the static arguments "
            f"(strings, bools, None) {statics.__name__} is given, so s2s-ad does not "
            f"differentiate it again: use s2s_ad.hessian({statics.__name__}) or "
            f"s2s_ad.hvp({statics.__name__}) (at the defaults of those arguments), or a "
            "function fixing their values")
    if made is None:
        return entry(fn, wrt, kind, output, lengths, checkpoint)
    _not_second(fn)
    if made[0] == "jvp":
        # A JVP module is in the subset: it is differentiated from its text
        # (the code itself, not the dispatch on argument kinds around it).
        raw = getattr(fn, "__wrapped__", fn)
        if not getattr(raw, "__s2s_ad_by_shape__", False):
            return entry(raw, wrt, kind, output, lengths, checkpoint)
        f, along, given = made[1], made[2], made[4]
        memo: dict = {}

        def per_shape(*args, **kwargs):
            # the JVP code for these lengths, then its own derivative
            forward = _concrete(f, along, "jvp", None, args, kwargs, given, memo=memo)
            derivative = _concrete(forward, wrt, kind, output, args, kwargs, lengths, memo=memo)
            return derivative(*args, **kwargs)

        per_shape.__name__ = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(
            kind, "grad_") + fn.__name__
        per_shape.__s2s_ad_origin__ = SECOND
        return per_shape
    if made[0] != "grad":
        raise HigherOrderError(
            f"{fn.__name__} is a generated {made[0].replace('_', ' ')} function; s2s-ad "
            f"differentiates generated gradients (grad) and JVPs (jvp): use "
            f"s2s_ad.grad({made[1].__name__}) or s2s_ad.hvp/hessian of it")
    if kind == "jvp":
        return _jvp_of_grad(fn, made, wrt)
    return _grad_of_grad(fn, made, wrt, output, kind == "value_and_grad")


# --- the generated functions a call needs -------------------------------------------------

def _concrete(fn: Callable, wrt, kind: str, output, args: tuple, kwargs: dict,
              lengths: dict | None = None, memo: dict | None = None) -> Callable:
    """The generated ``kind`` of ``fn`` for the kinds and lengths of these
    arguments, without dispatch (its source is one module). ``memo``: the
    functions already found by the caller (one per function it returns, so
    that asking s2s-ad again regenerates after an edit, as ``grad`` does)."""
    memo = {} if memo is None else memo
    key = (fn, fn.__code__, _wrt_key(wrt), kind, _wrt_key(output), _lengths_key(lengths),
           _kinds(args, kwargs))
    known = memo.get(key)
    if known is not None:
        return known
    own = set(_signature(fn).parameters)
    given = {k: v for k, v in kwargs.items() if k in own}
    found = {**(lengths or {}), **shapes(fn, args, given)}
    arrays = array_arguments(positional_names(fn), args, given)
    compiled = generated(fn, wrt, kind, output, found or None, arrays,
                         _call_statics(fn, args, given))
    # (a closure's: the code itself, which takes its captured data by keyword)
    compiled = getattr(compiled, "__s2s_ad_compiled__", compiled)
    known = memo[key] = getattr(compiled, "__wrapped__", compiled)
    return known


_signature = functools.lru_cache(maxsize=1024)(inspect.signature)


def _call_statics(fn: Callable, args: tuple, given: dict) -> dict | None:
    """The static arguments (strings, None, bools; defaults applied) of a
    call of ``fn`` at its parameters that may be static, as ``grad`` chooses
    its code by them (:func:`s2s_ad.cache.static_parameters`); None when
    ``fn`` has no such parameter."""
    candidates = static_parameters(fn)
    if not candidates:
        return None
    bound = _signature(fn).bind_partial(*args, **given)
    bound.apply_defaults()
    return {n: v for n, v in bound.arguments.items()
            if n in candidates and frontend_statics.static_at_candidate(v)}


def _kind(value):
    if value is None or value.__class__ is str or value.__class__ is bool:
        return (value.__class__, value)  # a static value: code of its own
    return tree_values.kind(value)


def _kinds(args: tuple, kwargs: dict) -> tuple:
    """What decides the generated code of a call: each argument's class, and
    a list's length or an array's number of dimensions (a structure's spec,
    :func:`s2s_ad.tree_values.kind`); a static value (string, None, bool)
    itself."""
    return (tuple(_kind(a) for a in args),
            tuple(sorted((k, _kind(v)) for k, v in kwargs.items())))


def _tangent_names(jvp_fn: Callable, n: int) -> list[str]:
    """The last ``n`` (keyword-only) parameters of a generated JVP: its tangents."""
    return list(_signature(jvp_fn).parameters)[-n:]


def _chosen(fn: Callable, wrt: Wrt, args: tuple, kwargs: dict,
            lengths: dict | None = None, memo: dict | None = None,
            without_ints: bool = False) -> tuple[list[str], bool]:
    """The parameter names ``wrt`` picks (resolved on ``fn``'s IR, so that
    ``None`` leaves out integer parameters; ``without_ints`` also those
    annotated ``int``), and whether a tuple is returned."""
    # Which parameters are integers, and the names, depend on the source and
    # the argument kinds only: lowered once per function, wrt and kinds.
    memo = {} if memo is None else memo
    key = ("wrt", fn, fn.__code__, _wrt_key(wrt), _lengths_key(lengths), _kinds(args, kwargs))
    known = memo.get(key)
    if known is None:
        found = {**(lengths or {}), **shapes(fn, args, kwargs)}
        arrays = array_arguments(positional_names(fn), args, kwargs)
        values, many = resolve_wrt(lower_called(fn, found or None, arrays,
                                         _call_statics(fn, args, kwargs)), wrt)
        known = memo[key] = ([v.var for v in values], many,
                             [v.var for v in values if v.kind != "int"])
    return list(known[2] if without_ints else known[0]), known[1]


def _zero_like(x):
    return tree_values.zeros_like(x)


def _scale(c, x):
    if isinstance(x, (list, tuple, dict)) or tree_values.is_tree(x):
        leaves, rebuild = tree_values.flatten(x)
        if len(leaves) != 1 or leaves[0] is not x:
            return rebuild([_scale(c, item) for item in leaves])
        return type(x)(_scale(c, item) for item in x)
    return c * x


def _add(x, y):
    if isinstance(x, (list, tuple, dict)) or tree_values.is_tree(x):
        leaves, rebuild = tree_values.flatten(x)
        if len(leaves) != 1 or leaves[0] is not x:
            return rebuild([_add(a, b) for a, b in zip(leaves, tree_values.flatten(y)[0])])
        return type(x)(_add(a, b) for a, b in zip(x, y))
    return x + y


def _split(fn: Callable, args: tuple, kwargs: dict):
    """``fn``'s own arguments, bound (defaults applied), and the rest of ``kwargs``."""
    sig = _signature(fn)
    own = {k: v for k, v in kwargs.items() if k in sig.parameters}
    rest = {k: v for k, v in kwargs.items() if k not in sig.parameters}
    bound = sig.bind(*args, **own)
    return bound, rest


def _captured(fn):
    """For a closure capturing data (numbers, arrays, structures of them): a
    function reading those data now, passed by keyword to the generated code,
    which takes them as keyword-only parameters; None for other functions."""
    if not targets.captured_values(fn):
        return None
    return targets.reader(fn)




# --- derivatives of generated gradients -----------------------------------------------------

def _gradient_plan(grad_fn: Callable, made):
    """What a generated gradient ``grad_fn = grad(f, W)`` computes: ``f``,
    its seed's name and default, and how ``W`` is resolved."""
    _, f, w, _, lengths = made
    if getattr(grad_fn, "__s2s_ad_by_shape__", False) \
            or getattr(grad_fn, "__s2s_ad_statics__", None) is not None:
        return f, w, lengths, None, 1.0  # the seed is found per call (_seed_for)
    seed = _seed_of(grad_fn, f)
    return f, w, lengths, seed.name, seed.default


def _seed_of(grad_fn: Callable, f: Callable) -> inspect.Parameter:
    sig = _signature(getattr(grad_fn, "__s2s_ad_compiled__", grad_fn))
    captured = targets.captured_values(f)
    seed = [p for p in sig.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
            and p.name not in _signature(f).parameters and p.name not in captured]
    if len(seed) != 1:
        raise HigherOrderError(f"{grad_fn.__name__}: cannot find its output seed")
    return seed[0]


def _seed_for(f, w, lengths, args, kwargs, memo) -> str:
    """The seed's name of the gradient generated for these arguments' lengths
    (a gradient made per list length has no signature of its own)."""
    own = {k: v for k, v in kwargs.items() if k in _signature(f).parameters}
    return _seed_of(_concrete(f, w, "grad", None, args, own, lengths, memo=memo), f).name


def _resolve_on(grad_fn, f, seed, wrt) -> tuple[list[str], bool]:
    """``wrt`` on the generated gradient's signature: ``f``'s parameters and the seed."""
    names = list(inspect.signature(f).parameters) + ([seed] if seed else [])
    one = wrt is not None and not isinstance(wrt, (list, tuple))
    picked = None if wrt is None else [wrt] if one else list(wrt)
    if picked is None:
        return None, True
    out = []
    for w in picked:
        out.append(wrt_name(w, names, grad_fn.__name__))
    if len(set(out)) != len(out):
        raise WrtError(f"wrt names a parameter twice: {wrt!r}")
    return out, not one


def _tangent_keyword(taken: set, name: str) -> str:
    out = "d" + name
    while out in taken:
        out += "_1"
    return out


def _tangent_keywords(taken: set, names: list) -> dict:
    """Each name's tangent keyword (``d`` and the name, ``_1`` added while
    taken), none given twice: ``x_1`` and ``x`` beside a seed ``dx`` get
    ``dx_1`` and ``dx_1_1``."""
    used, out = set(taken), {}
    for m in names:
        out[m] = _tangent_keyword(used, m)
        used.add(out[m])
    return out


def _jvp_of_grad(grad_fn: Callable, made, wrt: Wrt) -> Callable:
    """``jvp(grad(f, W))``: with ``(H t, ∇f)`` the gradient of ``jvp_f`` along
    ``t`` with respect to ``W`` and its tangents, the JVP of ``σ·∇f`` is
    ``(σ·∇f, σ·H t + t_σ·∇f)``."""
    f, w, lengths, seed, default = _gradient_plan(grad_fn, made)
    picked, _ = _resolve_on(grad_fn, f, seed, wrt)
    own = list(inspect.signature(f).parameters)
    taken = set(own) | {seed or "dout"}
    tangents = _tangent_keywords(taken, own + ([seed] if seed else []))
    memo: dict = {}
    held = _captured(f)

    def jvp_grad(*args, **kwargs):
        seed_now = seed or _seed_for(f, w, lengths, args, kwargs, memo)
        sigma = kwargs.pop(seed_now, default)
        extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in own}
        gradient, tuple_result = _chosen(f, w, args, kwargs, lengths, memo=memo)
        moved = picked if picked is not None else \
            _chosen(f, None, args, kwargs, lengths, memo=memo)[0] + [seed_now]
        keys = {m: tangents.get(m) or _tangent_keyword(taken | set(tangents.values()), m)
                for m in moved}
        given = {m: extra.pop(keys[m]) for m in moved if keys[m] in extra}
        if extra:
            raise TypeError(f"jvp of {grad_fn.__name__}: unexpected keyword argument(s) "
                            f"{', '.join(extra)} (tangents: {', '.join(keys.values())})")
        numbers_moved = [m for m in moved if m != seed_now]
        missing = [m for m in numbers_moved if m not in given]
        if missing == numbers_moved and len(missing) == 1 and isinstance(
                _split(f, args, kwargs)[0].arguments.get(missing[0]), numbers.Number):
            given[missing[0]] = 1.0  # one number to move: its tangent defaults to 1.0
        elif missing:
            raise TypeError(f"jvp of {grad_fn.__name__}: missing tangent(s) "
                            f"{', '.join(keys[m] for m in missing)}")
        t_seed = given.pop(seed_now, 0.0)
        bound, _ = _split(f, args, kwargs)
        bound.apply_defaults()
        if held is not None:
            kwargs = {**held(), **kwargs}  # a closure's data, by keyword
        along = [p for p in own if p in given or p in gradient]
        forward = _concrete(f, along, "jvp", made[3], args, kwargs, lengths, memo=memo)
        tnames = dict(zip(along, _tangent_names(forward, len(along))))
        call = dict(kwargs)
        for p in along:
            call[tnames[p]] = given[p] if p in given else _zero_like(bound.arguments[p])
        second = _concrete(forward, tuple(gradient) + tuple(tnames[p] for p in gradient),
                           "grad", 1, args, call, lengths, memo=memo)
        out = second(*args, **call)
        n = len(gradient)
        hv, g = out[:n], out[n:]
        value = [_scale(sigma, x) for x in g]
        tangent = [_add(_scale(sigma, a), _scale(t_seed, b)) for a, b in zip(hv, g)]
        if tuple_result:
            return tuple(value), tuple(tangent)
        return value[0], tangent[0]

    jvp_grad.__name__ = "jvp_" + grad_fn.__name__
    jvp_grad.__s2s_ad_tangents__ = dict(tangents)
    jvp_grad.__s2s_ad_origin__ = SECOND
    return jvp_grad


def _grad_of_grad(grad_fn: Callable, made, wrt: Wrt, output, with_value: bool) -> Callable:
    """``grad(grad(f, w))``: ``∂(σ·∂f/∂w)/∂q = σ·∇_q [jvp_f along w]`` for
    a parameter ``q`` of ``f``, and ``∂f/∂w`` for the seed σ."""
    f, w, lengths, seed, default = _gradient_plan(grad_fn, made)
    picked, many = _resolve_on(grad_fn, f, seed, wrt)
    own = list(inspect.signature(f).parameters)
    out_seed = _tangent_keyword(set(own) | {seed or "dout"},
                                "d" + (w if isinstance(w, str) else "out"))
    memo: dict = {}
    held = _captured(f)

    def grad_grad(*args, **kwargs):
        seed_now = seed or _seed_for(f, w, lengths, args, kwargs, memo)
        sigma = kwargs.pop(seed_now, default)
        tau = kwargs.pop(out_seed, 1.0)
        gradient, tuple_result = _chosen(f, w, args, kwargs, lengths, memo=memo)
        if tuple_result:
            if output is None:
                raise HigherOrderError(
                    f"{grad_fn.__name__} returns {len(gradient)} gradients; pass output=K to "
                    "choose the one to differentiate")
            if isinstance(output, bool) or not isinstance(output, numbers.Integral) \
                    or not -len(gradient) <= output < len(gradient):
                raise HigherOrderError(f"output={output!r}: {grad_fn.__name__} returns "
                                       f"{len(gradient)} gradients")
            target = gradient[output]
        elif output is not None:
            raise HigherOrderError(f"{grad_fn.__name__} returns one gradient; output="
                                   f"{output!r} applies to gradients returning a tuple")
        else:
            target = gradient[0]
        bound, _ = _split(f, args, kwargs)
        bound.apply_defaults()
        if not isinstance(bound.arguments[target], numbers.Number):
            raise HigherOrderError(
                f"the gradient with respect to {target!r} is not a number: use "
                f"s2s_ad.hessian or s2s_ad.jacobian of {f.__name__} for its derivatives")
        chosen = picked if picked is not None else \
            _chosen(f, None, args, kwargs, lengths, memo=memo)[0] + [seed_now]
        if held is not None:
            kwargs = {**held(), **kwargs}  # a closure's data, by keyword
        forward = _concrete(f, [target], "jvp", made[3], args, kwargs, lengths, memo=memo)
        call = {**kwargs, _tangent_names(forward, 1)[0]: 1.0}
        inner = [c for c in chosen if c != seed_now]
        results = {}
        if inner:
            second = _concrete(forward, tuple(inner), "value_and_grad", 1, args, call, lengths,
                               memo=memo)
            (value, slope), parts = second(*args, **call)
            results.update(zip(inner, parts))
        else:
            value, slope = forward(*args, **call)
        results = {k: _scale(tau * sigma, v) for k, v in results.items()}
        results[seed_now] = _scale(tau, slope)
        answer = tuple(results[c] for c in chosen)
        answer = answer if many else answer[0]
        if with_value:
            return grad_fn(*args, **kwargs, **{seed_now: sigma}), answer
        return answer

    grad_grad.__name__ = ("value_and_grad_" if with_value else "grad_") + grad_fn.__name__
    grad_grad.__s2s_ad_origin__ = SECOND
    return grad_grad


def vjp_of(fn: Callable, args: tuple, kwargs: dict):
    """``s2s_ad.vjp`` of a function s2s-ad generated: of a JVP, its own code
    (read from its text); of a gradient ``σ·∇_W f``, from ``f``: the cotangent
    ``c`` gives ``σ·∇_q (∇_W f · c)`` for each parameter ``q`` of ``f`` (the
    gradient of ``jvp_f`` along ``c``, one pass) and ``c · ∇_W f`` for the
    seed σ, in signature order. None for a function s2s-ad did not generate."""
    made = origin(fn) or _static_origin(fn)
    if made is None:
        return None
    if made[0] == "jvp":
        raw = getattr(fn, "__wrapped__", fn)
        if getattr(raw, "__s2s_ad_by_shape__", False):
            raw = _concrete(made[1], made[2], "jvp", None, args, kwargs, made[4])
        return ("source", raw)
    if made[0] != "grad":
        transform(fn, None, "grad", None, None)  # raises the message for these
    f, w, lengths, seed, default = _gradient_plan(fn, made)
    # vjp_fn runs the second pass later, at these arguments: its own copies
    args = tuple(private(a) for a in args)
    kwargs = {k: private(v) for k, v in kwargs.items()}
    memo: dict = {}
    seed = seed or _seed_for(f, w, lengths, args, kwargs, memo)
    kwargs = dict(kwargs)
    sigma = kwargs.pop(seed, default)
    value = fn(*args, **kwargs, **{seed: sigma})
    gradient, tuple_result = _chosen(f, w, args, kwargs, lengths, memo=memo)
    # an `int` parameter has no derivative (0.0, as in f's gradient); its JVP
    # module's text may use it as an int without the annotation
    moving = _chosen(f, None, args, kwargs, lengths, memo=memo, without_ints=True)[0]
    forward = _concrete(f, gradient, "jvp", made[3], args, kwargs, lengths, memo=memo)
    tangents = _tangent_names(forward, len(gradient))
    own = list(_signature(f).parameters)

    def vjp_fn(cotangent):
        parts = list(cotangent) if tuple_result else [cotangent]
        call = {**kwargs, **dict(zip(tangents, parts))}
        second = _concrete(forward, tuple(moving), "value_and_grad", 1, args, call, lengths,
                           memo=memo)
        (_, slope), partials = second(*args, **call)
        found = dict(zip(moving, partials))
        return tuple(_scale(sigma, found[p]) if p in found else 0.0 for p in own) + (slope,)

    vjp_fn.__doc__ = f"Cotangents of the parameters of {fn.__name__} (its seed last)."
    return ("made", (value, vjp_fn))
