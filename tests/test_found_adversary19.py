"""Adversarial programs of round 19: what the round found refused or wrong
against the documented behaviour. Each derivative is compared with central
differences in float64 of the function itself (second derivatives with
central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source

H = 1e-6


def _fd_list(f, args: list, i: int) -> np.ndarray:
    """∂f/∂args[i] by central differences, args[i] a list of floats."""
    xs = args[i]
    out = []
    for k in range(len(xs)):
        up, down = list(args), list(args)
        up[i] = xs[:k] + [xs[k] + H] + xs[k + 1:]
        down[i] = xs[:k] + [xs[k] - H] + xs[k + 1:]
        out.append((f(*up) - f(*down)) / (2 * H))
    return np.array(out)


STARRED_SRC = '''
def first_and_rest(xs):
    a, *rest = xs
    return a * sum(rest) + rest[-1] * rest[0]


def ends(xs, c):
    *init, last = xs
    s = 0.0
    for v in init:
        s = s * c + v * last
    return s


def middle(xs):
    a, *mid, b = xs
    return a * b + sum(m * m for m in mid)
'''
STARRED = {"first_and_rest": [[0.2, 0.5, -1.0, 0.4]], "ends": [[0.2, 0.5, -1.0, 0.4], 0.7],
           "middle": [[0.2, 0.5, -1.0, 0.4, 0.9]]}


@pytest.mark.parametrize("api", ["grad", "value_and_grad", "checkpoint", "vjp", "hvp"])
@pytest.mark.parametrize("name", sorted(STARRED))
def test_a_list_parameter_unpacked_with_a_starred_name(tmp_path, name, api):
    """``a, *rest = xs`` with ``xs`` a list parameter: ``grad`` (which lowers
    a parameter as a number until the code says otherwise) takes the
    unpacking for a use as a list and generates the code for the call's
    list, as ``vjp`` does (before: refused, '`xs` is a number; a starred
    name unpacks a tuple or list built in the function ...')."""
    src = import_source(tmp_path, STARRED_SRC, f"found_adversary19_starred_{name}")
    f = getattr(src, name)
    args = STARRED[name]
    want = _fd_list(f, args, 0)
    if api == "hvp":
        v = [0.3, -0.2, 0.5, 0.1, -0.4][:len(args[0])]
        h = 1e-5
        g = s2s_ad.grad(f, wrt=0)
        up = np.array(g([a + h * d for a, d in zip(args[0], v)], *args[1:]), dtype=float)
        down = np.array(g([a - h * d for a, d in zip(args[0], v)], *args[1:]), dtype=float)
        np.testing.assert_allclose(np.array(g(*args), dtype=float), want, rtol=1e-6, atol=1e-8)
        got = s2s_ad.hvp(f, wrt=0)(*args, v)
        np.testing.assert_allclose(np.array(got, dtype=float), (up - down) / (2 * h),
                                   rtol=1e-4, atol=1e-6)
        return
    if api == "vjp":
        got = s2s_ad.vjp(f, *args)[1](1.0)[0]
    elif api == "value_and_grad":
        value, got = s2s_ad.value_and_grad(f, wrt=0)(*args)
        assert value == f(*args)
    else:
        got = s2s_ad.grad(f, wrt=0, checkpoint=True if api == "checkpoint" else None)(*args)
    np.testing.assert_allclose(np.array(got, dtype=float), want, rtol=1e-6, atol=1e-8)


def test_a_starred_list_parameter_without_a_call_asks_for_its_length(tmp_path):
    """Made without a call, the gradient of such a function asks for the
    list's length and says why a list of any length does not do."""
    src = import_source(tmp_path, STARRED_SRC, "found_adversary19_starred_source")
    with pytest.raises(SourceError) as err:
        s2s_ad.gradient_source(src.first_and_rest)
    text = str(err.value)
    assert "parameter 'xs' is used as a list or tuple; give its length" in text
    assert "a starred name unpacks" in text
    assert "found_adversary19_starred_source.py:3:" in text


CALL_SLICES_SRC = '''
import numpy as np


def _pair(a, b):
    return [a * b, a + b]


def _trip(x):
    return x, x * x, x * x * x


def _rows(m):
    return np.tanh(m) * 2.0


def tail_of_a_call(a, b):
    ys = _pair(a, b)[1:]
    return ys[0] * a


def sum_of_a_sliced_call(a, b):
    return sum(_pair(a, b)[:]) * a


def tail_in_a_loop(a, b):
    s = 0.0
    for k in range(3):
        t = _trip(a * (k + 1) + b)[1:]
        s = s + t[0] * t[1]
    return s


def loop_over_a_reversed_call(a, b):
    s = 0.0
    for v in _pair(a, b)[::-1]:
        s = s * a + v
    return s


def loop_over_a_lambdas_tail(a, b):
    g = lambda t: [t, t * b, b]
    s = 0.0
    for v in g(a)[1:]:
        s = s * a + v
    return s


def loop_over_rows_of_a_call(m, b):
    s = 0.0
    for r in _rows(m * b)[1:]:
        s = s + np.sum(r * r) * s + np.sum(r)
    return s
'''
M3 = np.array([[0.3, -0.7, 1.1], [0.45, -0.2, 0.9], [0.6, 0.1, -0.4]])
CALL_SLICES = {"tail_of_a_call": (0.7, -0.4), "sum_of_a_sliced_call": (0.7, -0.4),
               "tail_in_a_loop": (0.7, -0.4), "loop_over_a_reversed_call": (0.7, -0.4),
               "loop_over_a_lambdas_tail": (0.7, -0.4), "loop_over_rows_of_a_call": (M3, 0.8)}


@pytest.mark.parametrize("api", ["grad", "checkpoint", "vjp", "jvp", "hvp"])
@pytest.mark.parametrize("name", sorted(CALL_SLICES))
def test_a_slice_of_a_helpers_result_read_where_the_call_is(tmp_path, name, api):
    """``h(a, b)[1:]`` (and ``[:]``, ``[::-1]``), a slice taken of a call's
    result itself, not of a name bound to it: the items of what the helper
    returned, as ``r = h(a, b); r[1:]`` gives them (before: refused, '`_pair(a,
    b)` is computed from parameter 'a', lowered as a number, ... say 'a'
    receives a NumPy array', by grad and vjp alike); in a loop's header the
    slice is made once before the loop, as Python makes it (before: refused,
    'a for loop must iterate over range(...), a list or tuple ...')."""
    src = import_source(tmp_path, CALL_SLICES_SRC, f"found_adversary19_call_slices_{name}")
    f = getattr(src, name)
    args = CALL_SLICES[name]
    for i in range(2):
        want = _fd(f, list(args), i)
        if api == "hvp":
            g = s2s_ad.grad(f, wrt=i)
            v = np.linspace(0.3, -0.2, np.size(args[i])).reshape(np.shape(args[i])) \
                if np.ndim(args[i]) else 0.7

            def moved(s):
                a = list(args)
                a[i] = args[i] + s * v
                return np.asarray(g(*a), dtype=float)
            np.testing.assert_allclose(np.asarray(g(*args), dtype=float), want, rtol=1e-6,
                                       atol=1e-8)
            np.testing.assert_allclose(np.asarray(s2s_ad.hvp(f, wrt=i)(*args, v), dtype=float),
                                       (moved(1e-5) - moved(-1e-5)) / 2e-5, rtol=1e-4, atol=1e-6)
            continue
        if api == "vjp":
            got = s2s_ad.vjp(f, *args)[1](1.0)[i]
        elif api == "jvp":
            x = args[i]
            got = np.zeros(np.shape(x))
            for k in np.ndindex(np.shape(x)):  # one unit tangent at a time
                e = np.zeros(np.shape(x))
                e[k] = 1.0
                other = 1 - i
                tangents = {"d" + f.__code__.co_varnames[i]: e if np.ndim(x) else 1.0,
                            "d" + f.__code__.co_varnames[other]:
                                np.zeros(np.shape(args[other])) if np.ndim(args[other]) else 0.0}
                got[k] = s2s_ad.jvp(f, wrt=(0, 1))(*args, **tangents)[1]
        else:
            got = s2s_ad.grad(f, wrt=i, checkpoint=True if api == "checkpoint" else None)(*args)
        np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-6, atol=1e-8)


ZERO_D_SRC = '''
import numpy as np


def written_by_index(x):
    y = np.zeros(())
    y[()] = x * x
    z = y * 3.0 + y
    return np.sum(z * z)


def written_through_ellipsis(x):
    y = np.zeros(())
    y[...] = x * x
    y[...] += x
    return np.sum(y * y + y)


def a_sum_written_in(v):
    y = np.zeros(())
    y[()] = np.sum(v * v)
    return np.sum(y * y * y) + np.sum(y)


def rewritten_in_a_loop(x):
    y = np.zeros(())
    for i in range(3):
        y[()] = y * 0.5 + x * (i + 1)
    return np.sum(y * y)


def rows_through_ellipsis(v):
    y = np.zeros(3)
    y[...] = v * v
    y[...] += v
    y[1:] = y[1:] * y[:-1]
    return np.sum(y * y)
'''
ZERO_D = {"written_by_index": 0.7, "written_through_ellipsis": 0.7,
          "a_sum_written_in": np.array([0.3, -0.5, 0.8]), "rewritten_in_a_loop": 0.7,
          "rows_through_ellipsis": np.array([0.3, -0.5, 0.8])}


@pytest.mark.parametrize("api", ["grad", "checkpoint", "vjp", "hvp"])
@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_a_whole_array_written_through_an_empty_index_or_an_ellipsis(tmp_path, name, api):
    """``y[()] = v`` and ``y[...] = v`` write all of ``y``, a 0-d array too:
    the reverse sweep adds into and zeroes ``y``'s adjoint by rebinding it
    (``dy = dy + g``, ``dy = float_zeros(dy)``), and ``zeroed`` keeps a 0-d
    adjoint an array. Before: 'numpy.float64' object does not support item
    assignment, raised inside the gradient (``dy + dz`` of 0-d arrays is a
    NumPy scalar, which ``dy[()] = 0.0`` cannot write into), in grad, vjp and
    hvp alike."""
    src = import_source(tmp_path, ZERO_D_SRC, f"found_adversary19_zero_d_{name}")
    f = getattr(src, name)
    x = ZERO_D[name]
    want = _fd(f, [x], 0)
    if api == "checkpoint" and name == "rewritten_in_a_loop":
        pytest.skip("a loop writing by subscript is not checkpointed (refused, located)")
    if api == "hvp":
        g = s2s_ad.grad(f)
        v = np.linspace(0.3, -0.2, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
        np.testing.assert_allclose(np.asarray(g(x), dtype=float), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(s2s_ad.hvp(f)(x, v), dtype=float),
                                   (np.asarray(g(x + 1e-5 * v)) - np.asarray(g(x - 1e-5 * v)))
                                   / 2e-5, rtol=1e-4, atol=1e-6)
        return
    if api == "vjp":
        got = s2s_ad.vjp(f, x)[1](1.0)[0]
    else:
        got = s2s_ad.grad(f, checkpoint=True if api == "checkpoint" else None)(x)
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-6, atol=1e-8)


READ_0D_SRC = '''
import numpy as np


def item_of_a_0d_array(x):
    a = np.array(x * 2.0)
    return a[()] * a + np.sin(a)
'''


def test_the_gradient_file_of_a_0d_item_read_differentiated_again(tmp_path):
    """``a[()]`` of a 0-d array: its gradient module scatters the item's
    adjoint back (``scatter(dt2, a, ())``); the gradient of a probe calling
    that module, read back from its file, writes into a 0-d adjoint. Before:
    'numpy.float64' object does not support item assignment, inside the
    second gradient. Against central differences of the probe."""
    from tests.modules import on_path

    src = import_source(tmp_path, READ_0D_SRC, "found_adversary19_read_0d")
    text = s2s_ad.gradient_source(src.item_of_a_0d_array)
    with on_path(tmp_path, "found_adversary19_read_0d_grad", text):
        probe = import_source(
            str(tmp_path), "import numpy as np\n"
            "from found_adversary19_read_0d_grad import grad_item_of_a_0d_array\n\n\n"
            "def probe(x):\n    g = grad_item_of_a_0d_array(x)\n    return np.sum(g * g)\n",
            "found_adversary19_read_0d_probe")
        np.testing.assert_allclose(s2s_ad.grad(src.item_of_a_0d_array)(0.7),
                                   _fd(src.item_of_a_0d_array, [0.7], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s_ad.grad(probe.probe)(0.7), _fd(probe.probe, [0.7], 0),
                                   rtol=1e-6, atol=1e-7)


FILE_HELPERS_SRC = '''
import numpy as np


def _scaled(x):
    return x * 3.0


def summed_helper(x):
    return np.sum(_scaled(x))


def sine_of_helper(x):
    return np.sum(np.sin(_scaled(x)))


def _written(x):
    y = np.zeros(())
    y[()] = x * 3.0
    return y


def squared_helper(x):
    y = _written(x)
    return np.sum(y * y) + np.sum(_written(x * x))
'''


@pytest.mark.parametrize("point", ["number", "0-d", "array"])
@pytest.mark.parametrize("name", ["summed_helper", "sine_of_helper", "squared_helper"])
def test_a_numpy_gradient_file_called_with_numbers_differentiated_again(tmp_path, name, point):
    """The gradient file of NumPy code calling a helper names no NumPy in its
    main function (``spread(dout, _scaled_1)``, ``astype_like(dx, x)``): read
    back for a number, it was lowered as code of numbers, whose module never
    defined those helpers (NameError: name 'spread' is not defined, raised
    inside the second gradient; for an array, TypeError: an unexpected
    keyword argument 'dout_1'). s2s-ad's helpers are NumPy code wherever they
    are called. Against central differences of a probe calling the file."""
    from tests.modules import on_path

    src = import_source(tmp_path, FILE_HELPERS_SRC, f"found_adversary19_file_{name}")
    f = getattr(src, name)
    x = {"number": 0.7, "0-d": np.array(0.7), "array": np.array([0.3, -0.5, 0.8])}[point]
    if name == "squared_helper" and point == "array":
        x = np.array(0.4)  # (y[()] = x * 3.0 takes one element)
    module = f"found_adversary19_file_{name}_grad_{point.replace('-', '')}"
    with on_path(tmp_path, module, s2s_ad.gradient_source(f)):
        probe = import_source(
            str(tmp_path), f"import numpy as np\nfrom {module} import grad_{name}\n\n\n"
            f"def probe(x):\n    g = grad_{name}(x)\n    return np.sum(g * g * g)\n",
            f"{module}_probe")
        np.testing.assert_allclose(np.asarray(s2s_ad.grad(f)(x), dtype=float),
                                   _fd(f, [x], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(s2s_ad.grad(probe.probe)(x), dtype=float),
                                   _fd(probe.probe, [x], 0), rtol=1e-6, atol=1e-6)


RESHAPE_0D_SRC = '''
import numpy as np


def reshaped_to_0d(v):
    a = np.reshape(v[:1] * 2.0, ())
    return np.sum(a * a * a) + np.sum(v * a)


def method_reshaped_to_0d(v):
    a = (v[:1] * 2.0).reshape(())
    return np.sum(a * a * a)


def broadcast_to_0d(v):
    a = np.broadcast_to(np.sum(v), ())
    return np.sum(a * a * v)
'''


@pytest.mark.parametrize("name", ["reshaped_to_0d", "method_reshaped_to_0d", "broadcast_to_0d"])
def test_the_hvp_of_a_reshape_to_a_0d_array(tmp_path, name):
    """``np.reshape(x, ())``, ``np.broadcast_to(x, ())``: the JVP module binds
    the shape to a name (``t3 = ()``), which the gradient of that module
    (``hvp``, ``hessian``) read as a tuple argument and refused ('`np.reshape`:
    tuple arguments are not supported here'); an empty tuple is a shape too.
    The Hessian against central differences of the gradient."""
    src = import_source(tmp_path, RESHAPE_0D_SRC, f"found_adversary19_reshape_{name}")
    f = getattr(src, name)
    v, d = np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.1, -0.3])
    g = s2s_ad.grad(f)
    np.testing.assert_allclose(g(v), _fd(f, [v], 0), rtol=1e-6, atol=1e-8)
    want = (g(v + 1e-5 * d) - g(v - 1e-5 * d)) / 2e-5
    np.testing.assert_allclose(s2s_ad.hvp(f)(v, d), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(f)(v) @ d, want, rtol=1e-4, atol=1e-6)
