"""Fused generated code (s2s_ad/emit/fuse.py): the same numbers, bit for bit.

The rewrites claim exactness — the same IEEE operations on the same operands
in the same order — so the code generated with them and without them
(``fuse.disabled()``) must return bitwise equal results (or raise the same
exception) on every function of the corpora, for the gradient, the
forward/backward pair and the JVP. Gradients are also compared with central
differences where the shape changed most (``x * x`` doubled, negations
folded, temporaries fused in helpers, loops and branches).
"""

import importlib
import inspect
import math
import random
import signal
import struct

import pytest

import s2s_ad
from s2s_ad.emit import fuse
from s2s_ad.emit.loader import load
from oracle import close, fd_gradient
from tests.modules import import_source
from tests.soak import breadth, on

CORPORA = ["corpus_scalar", "everyday_src", "calls_src", "calls_loops_src", "forward_src",
           "inline_src", "hoist_src", "read_once_src", "rules_src", "partials_src",
           "syntax_src", "metamorphic_src", "fuzz_found_src", "recursion_src", "funargs_src",
           "static_src", "structures_src", "checkpoint_src", "iterables_src",
           "comprehensions_src", "closures_src", "kinds_src", "check_paths_src"]


def _bits(v):
    """A comparable form of a result: floats by their bits (NaNs equal),
    containers item by item."""
    if isinstance(v, float):
        return "nan" if math.isnan(v) else struct.pack("<d", v)
    if isinstance(v, (tuple, list)):
        return type(v).__name__, [_bits(x) for x in v]
    if isinstance(v, dict):
        return {k: _bits(x) for k, x in v.items()}
    try:
        import numpy as np
        if isinstance(v, np.ndarray) or isinstance(v, np.generic):
            a = np.asarray(v)
            return a.dtype.str, a.shape, a.tobytes() if a.dtype.kind != "f" else \
                np.where(np.isnan(a), np.nan, a).tobytes()
    except ImportError:  # pragma: no cover
        pass
    return repr(v)


def _outcome(call):
    try:
        return "value", _bits(call())
    except Exception as e:  # the exception raised first is part of the behaviour
        return "raises", type(e).__name__


def _texts(make):
    """The module text with the rewrites and without, or None when s2s-ad
    generates none for this function."""
    try:
        fused = make()
    except Exception:
        return None
    with fuse.disabled():
        plain = make()
    return fused, plain


def _functions():
    for name in CORPORA:
        mod = importlib.import_module(name)
        for fname, fn in sorted(vars(mod).items()):
            if inspect.isfunction(fn) and fn.__module__ == mod.__name__ \
                    and not fname.startswith("_"):
                yield name, fn


def _floats(fn, rng):
    params = inspect.signature(fn).parameters
    return [rng.uniform(0.3, 1.4) for _ in params]


class _Slow(Exception):
    pass


def _finishes(fn, args) -> bool:
    """Does ``fn(*args)`` return or raise within a second? (A float given
    to ``while n:`` never ends; its gradient's tape would fill the memory.)"""
    def stop(*_):
        raise _Slow
    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        fn(*args)
    except _Slow:
        return False
    except Exception:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return True


def _compare(fused_text, plain_text, entry, calls) -> int:
    fm = load(fused_text, "fused")
    pm = load(plain_text, "plain")
    compared = 0
    for args, kwargs in calls:
        a = _outcome(lambda: entry(fm)(*args, **kwargs))
        b = _outcome(lambda: entry(pm)(*args, **kwargs))
        assert a == b, (fused_text, args, kwargs)
        compared += a[0] == "value"
    return compared


def test_fused_modules_compute_bitwise_what_unfused_ones_do():
    """Every function of the corpora, in each mode (gradient, vjp pair, JVP)
    with ``--soak``; in the default run each function in one mode, the modes
    taken in turn, so every function and every mode is compared."""
    rng = random.Random(9700)
    compared = {"grad": 0, "vjp": 0, "jvp": 0}
    changed = 0
    every_mode = on()
    for k, (_, fn) in enumerate(_functions()):
        points = [(_floats(fn, rng), {}) for _ in range(2)]
        points = [p for p in points if _finishes(fn, p[0])]
        if not points:
            continue
        modes = ("grad", "vjp", "jvp") if every_mode else (("grad", "vjp", "jvp")[k % 3],)
        texts = _texts(lambda: s2s_ad.gradient_source(fn)) if "grad" in modes else None
        if texts is not None:
            changed += texts[0] != texts[1]
            compared["grad"] += _compare(*texts, lambda m: getattr(m, "grad_" + fn.__name__),
                                         points)
        texts = _texts(lambda: s2s_ad.vjp_source(fn)) if "vjp" in modes else None
        if texts is not None:
            changed += texts[0] != texts[1] and "grad" not in modes
            def pair(m, name=fn.__name__):
                fwd, bwd = getattr(m, name + "_fwd"), getattr(m, name + "_bwd")

                def both(*args):
                    value, tape = fwd(*args)
                    return value, bwd(tape, 0.75)
                return both
            compared["vjp"] += _compare(*texts, pair, points)
        texts = _texts(lambda: s2s_ad.jvp_source(fn)) if "jvp" in modes else None
        if texts is not None:
            changed += texts[0] != texts[1] and "grad" not in modes
            m = load(texts[1], "names")
            jvp = getattr(m, "jvp_" + fn.__name__)
            tangents = [p.name for p in inspect.signature(jvp).parameters.values()
                        if p.kind is p.KEYWORD_ONLY]
            tpoints = [(args, {t: rng.uniform(-1.0, 1.0) for t in tangents})
                       for args, _ in points]
            compared["jvp"] += _compare(*texts, lambda m: getattr(m, "jvp_" + fn.__name__),
                                        tpoints)
    # the corpora are run, not skipped: many functions compared in each mode
    # (a third of them in the default run: 136, 134 and 152 now; 414, 422, 428)
    assert compared["grad"] > breadth(100, 300) and compared["vjp"] > breadth(100, 300) \
        and compared["jvp"] > breadth(67, 200), compared
    assert changed > 100  # modules the rewrites changed (the gradient's, with --soak)


@pytest.mark.parametrize("values", [(0.1, 0.7), (1e308, 3.0), (5e-324, -2.0), (-0.0, 0.0),
                                    (0.0, -0.0), (math.inf, 1.0), (1 / 3, 2 / 3)])
def test_the_exactness_the_rewrites_rest_on(values):
    rng = random.Random(5)
    pairs = [values] + [(rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3)) for _ in range(200)]
    pairs += [(rng.choice([-1, 1]) * 10.0 ** rng.uniform(-320, 308),
               rng.choice([-1, 1]) * 10.0 ** rng.uniform(-320, 308)) for _ in range(200)]
    for a, b in pairs:
        assert _bits(a + a) == _bits(2.0 * a) == _bits(2 * a)  # d = e; d += e  →  d = 2.0 * e
        assert _bits(a + -b) == _bits(a - b)           # d += -e  →  d -= e
        assert _bits(a - -b) == _bits(a + b)
        assert _bits((-a) * b) == _bits(-(a * b)) == _bits(a * -b)
        if b != 0.0:
            assert _bits((-a) / b) == _bits(-(a / b)) == _bits(a / -b)


def test_doubling_onto_an_adjoint_that_holds_a_value_is_not_exact():
    """(d + e) + e and d + 2 * e round differently: the pass doubles only the
    first contribution."""
    assert (0.1 + 1e-17) + 1e-17 != 0.1 + 2 * 1e-17 or (1.0 + 1.2e-16) + 1.2e-16 != 1.0 + 2 * 1.2e-16
    rng = random.Random(1)
    differ = sum((d + e) + e != d + 2 * e for d, e in
                 ((rng.uniform(-1, 1), rng.uniform(-1e-16, 1e-16)) for _ in range(1000)))
    assert differ > 0


def _square_then_sin(x):
    return x * x + math.sin(x)


def _only_square(a, x):
    return a * (x * x)


def test_x_times_x_doubled_only_as_the_first_contribution():
    text = s2s_ad.gradient_source(_only_square, "x")
    assert "dx = 2.0 * (" in text and "dx +=" not in text
    text = s2s_ad.gradient_source(_square_then_sin, "x")
    sweep = text.split("# reverse sweep")[1]
    # sin's contribution comes first here: the two of x * x are added one by one
    # (the contributions of one line chained: (dx + e) + e, as two `+=` compute it)
    assert "dout * math.cos(x) + dout * x + dout * x" in sweep and "2 * (" not in sweep
    for f, at in ((_only_square, [0.7, -1.3]), (_square_then_sin, [0.4])):
        g = s2s_ad.grad(f, wrt=len(at) - 1)(*at)
        assert close(g, fd_gradient(f, at, [len(at) - 1])[0])


def _reorder(x, y, z):
    return x ** 3 + z * math.log(y)


def test_a_temporary_that_may_raise_is_not_moved_past_another():
    """``x ** 3`` (OverflowError) stays before ``math.log(y)`` (ValueError),
    which the reverse sweep reads: fused, the log would run first."""
    text = s2s_ad.gradient_source(_reorder, with_value=True)
    assert "t1 = x ** 3" in text, text
    with pytest.raises(OverflowError):
        _reorder(1e200, -1.0, 2.0)
    with pytest.raises(OverflowError):
        s2s_ad.value_and_grad(_reorder)(1e200, -1.0, 2.0)
    with pytest.raises(OverflowError):
        s2s_ad.jvp(_reorder)(1e200, -1.0, 2.0, dx=1.0, dy=0.0, dz=0.0)


SOURCE = '''
import math


def inner(u, v):
    w = -u * v
    return w * w + math.exp(-v) * u / (1.0 + v * v)


def middle(u, v):
    return inner(u, v) * inner(v, u) - u * u


def looped(a, b, n=3):
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s - a * b / (1.0 + s * s)
        else:
            s = s + middle(a, s * b) - (-a) * (-b)
    return s * s
'''


@pytest.mark.parametrize("name", ["inner", "middle", "looped"])
def test_fused_code_in_helpers_loops_and_branches(tmp_path, name):
    mod = import_source(tmp_path, SOURCE, "fused_positions")
    f = getattr(mod, name)
    at = [0.6, -0.45]
    want = fd_gradient(f, at, [0, 1])
    assert all(close(g, w) for g, w in zip(s2s_ad.grad(f, wrt=(0, 1))(*at), want))
    value, pull = s2s_ad.vjp(f, *at)
    assert all(close(g, w) for g, w in zip(pull(1.0)[:2], want))
    _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(*at, du=1.0, dv=0.0) if name != "looped" else \
        s2s_ad.jvp(f, wrt=("a", "b"))(*at, da=1.0, db=0.0)
    assert close(tangent, want[0])
    # the CLI's file, imported in a fresh module, computes the same
    path = tmp_path / f"grad_{name}.py"
    from s2s_ad.cli import main
    assert main(["grad", f"{tmp_path / 'fused_positions.py'}:{name}", "--wrt", "0,1",
                 "-o", str(path)]) == 0
    written = import_source(tmp_path, path.read_text(), f"grad_{name}_mod")
    got = getattr(written, f"grad_{name}")(*at)
    assert all(close(g, w) for g, w in zip(got, want))
    # and it is differentiated again (second derivatives of fused code)
    h = s2s_ad.grad(getattr(written, f"grad_{name}"), wrt=0, output=0)(*at)
    step = 1e-5
    fd = (getattr(written, f"grad_{name}")(at[0] + step, at[1])[0]
          - getattr(written, f"grad_{name}")(at[0] - step, at[1])[0]) / (2 * step)
    assert close(h, fd, rtol=1e-5, atol=1e-7)


def _drawn(kind: str, seed: int):
    from tests.programs import RandomDraw, program
    from tests.programs_conditions import condition_program
    from tests.programs_helpers import helper_program
    from tests.programs_numpy import numpy_program
    from tests.programs_lists import list_program
    from tests.programs_torch import torch_program
    d = RandomDraw(seed)
    return {"scalar": program, "helpers": helper_program, "conditions": condition_program,
            "numpy": numpy_program, "lists": list_program, "torch": torch_program}[kind](d)


@pytest.mark.parametrize("kind", ["scalar", "helpers", "conditions", "numpy", "lists", "torch"])
def test_fuzz_programs_fused_and_unfused_agree_bit_for_bit(tmp_path, kind):
    """Programs of the fuzzer (tests/fuzz.py), each generated with the
    rewrites and without: the gradient and the JVP the same bit for bit
    (10 seeds of each family in the default run, 60 with ``--soak``)."""
    import copy
    import numpy as np
    compared = 0
    for seed in range(9700, 9700 + breadth(10, 60)):
        prog = _drawn(kind, seed)
        name = getattr(prog, "name", "f")
        fn = getattr(import_source(tmp_path, prog.source, f"fz_{kind}_{seed}"), name)
        wrt = tuple(prog.wrt) if isinstance(prog.wrt, (list, tuple)) else prog.wrt
        output = getattr(prog, "output", None)
        for mode in ("grad", "jvp"):
            if mode == "grad":
                make = lambda: s2s_ad.gradient_source(fn, wrt, output=output)  # noqa: E731
            elif output is None:
                make = lambda: s2s_ad.jvp_source(fn)  # noqa: E731
            else:
                continue
            texts = _texts(make)
            if texts is None:
                continue
            entry = (lambda m: getattr(m, f"{mode}_{name}"))
            kwargs = {}
            if mode == "jvp":
                sig = inspect.signature(entry(load(texts[1], "names")))
                kwargs = {p.name: (np.ones_like(prog.point[p.name[1:]])
                                   if p.name[1:] in prog.point else 0.5)
                          for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY}
            with np.errstate(all="ignore"):
                compared += _compare(*texts, entry, [(list(copy.deepcopy(
                    [prog.point[p] for p in inspect.signature(fn).parameters])), kwargs)])
    assert compared > breadth(10, 60), compared  # of 2 per seed (no JVP with an output)
