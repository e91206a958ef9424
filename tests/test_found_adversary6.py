"""Wrong gradients and crashes found by adversarial programs on the tangents
moved into a branch's arms, the guard of untouched adjoints and the newest
forms, each against central differences (float64)."""

import math

import pytest

import s2s_ad
from tests.array_oracle import make_function
from tests.oracle import central_difference


def _first_orders(f, x, y, forward: bool = True) -> None:
    """grad and vjp (and, with ``forward``, jvp along each axis) of ``f`` at
    (x, y) against central differences of ``f``."""
    refs = [central_difference(f, [x, y], i, h=1e-6) for i in range(2)]
    got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    _, back = s2s_ad.vjp(f, x, y)
    for i in range(2):
        assert math.isclose(got[i], refs[i], rel_tol=1e-6, abs_tol=1e-7), (got, i, refs)
        assert math.isclose(back(1.0)[i], refs[i], rel_tol=1e-6, abs_tol=1e-7)
        if forward:
            _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=float(i == 0), dy=float(i == 1))
            assert math.isclose(tangent, refs[i], rel_tol=1e-6, abs_tol=1e-7)


SUNK_TANGENTS = '''
import math

def carried(x, y):
    s = 0.0
    prev = x
    for i in range(3):
        if i > 0:
            s = s + prev * 2.0
        r = math.sqrt(1.0 + x * x + i)
        if y > i - 1.0:
            s = s + r * y
        prev = r
    return s

def while_carried(x, y):
    s = 0.0
    r = x
    k = 0
    while k < 3:
        s = s + r
        r = math.log(2.0 + x * x + k)
        if y > 0.0:
            s = s + r * y
        k = k + 1
    return s

def in_an_arm(x, y):
    if x > 0.0:
        r = math.sqrt(1.0 + x * x)
        if y > 0.0:
            q = r * y
        else:
            q = x
        out = r
    else:
        q = y
        out = x * y
    return out + q

def pair(x, y):
    r = math.sqrt(1.0 + x * x)
    if y > 0.0:
        q = r * y
    else:
        q = x
    return r, q

def returned(x, y):
    a, b = pair(x, y)
    return a * b + a
'''

POINTS = [(0.7, 0.4), (0.7, -0.4), (-0.7, -0.4), (1.5, -1.5)]


@pytest.mark.parametrize("name", ["carried", "while_carried", "in_an_arm", "returned"])
@pytest.mark.parametrize("x,y", POINTS)
def test_a_singular_tangent_read_after_the_region(name, x, y):
    # The tangent of r (a root or logarithm: a division in its tangent) is
    # read inside one arm of a later branch and also by what follows the
    # statements of its region: the next iteration (prev = r), the φ of an
    # outer branch (out = r) or the helper's return. It was moved into the
    # arm, so jvp read the previous iteration's tangent (carried at
    # (0.7, -0.4): 0.0 where 2.06 is right) or raised UnboundLocalError, and
    # hessian refused the forward module read back ("`dr` may be undefined").
    f = make_function(SUNK_TANGENTS, name)
    refs = [central_difference(f, [x, y], i, h=1e-6) for i in range(2)]
    for i in range(2):
        tangents = {"dx": float(i == 0), "dy": float(i == 1)}
        value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, **tangents)
        assert value == f(x, y)
        assert math.isclose(tangent, refs[i], rel_tol=1e-6, abs_tol=1e-7), (i, tangent, refs)
    got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    for i in range(2):
        assert math.isclose(got[i], refs[i], rel_tol=1e-6, abs_tol=1e-7)
    hess = s2s_ad.hessian(f, wrt=(0, 1))(x, y)
    g = s2s_ad.grad(f, wrt=(0, 1))
    for j, (dx, dy) in enumerate([(1e-5, 0.0), (0.0, 1e-5)]):
        up, down = g(x + dx, y + dy), g(x - dx, y - dy)
        for i in range(2):
            # the gradient is checked against central differences of f above
            assert math.isclose(hess[i][j], (up[i] - down[i]) / 2e-5, rel_tol=1e-5,
                                abs_tol=1e-6), (i, j, hess)


CHANGED_IN_PLACE = '''
def appended(x, y, n):
    xs = []
    for i in range(n):
        xs.append(x * (i + 1.0))
    s = sum(xs)
    xs.append(y * 3.0)
    if y > 0.0:
        out = s * x
    else:
        out = x
    return out + xs[-1]

def written(x, y, n):
    xs = [0.0] * n
    for i in range(n):
        xs[i] = x * (i + 1.0)
    s = sum(xs)
    xs[0] = y * 3.0
    if y > 0.0:
        out = s * x
    else:
        out = x
    return out + xs[0]
'''


@pytest.mark.parametrize("name", ["appended", "written"])
@pytest.mark.parametrize("x,y", [(0.7, 0.4), (-1.1, 0.9), (0.7, -0.4)])
def test_a_tangent_moved_past_a_change_in_place(name, x, y):
    # s = sum(xs)'s tangent line (sum(dxs), a call) is read in one arm only;
    # it was moved into the arm past xs.append(...) / xs[0] = ..., which
    # change the tangent list in place (no name is assigned), so it summed
    # the new items: jvp with dy = 1 gave 5.1 where 3.0 is right (appended
    # at (0.7, 0.4)), with dx = 1 7.7 where 8.4 is right (written), and
    # hessian and grad(grad(f)) were wrong the same way.
    f = make_function(CHANGED_IN_PLACE, name)
    refs = [central_difference(f, [x, y, 3], i, h=1e-6) for i in range(2)]
    for i in range(2):
        value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, 3, dx=float(i == 0), dy=float(i == 1))
        assert math.isclose(tangent, refs[i], rel_tol=1e-6, abs_tol=1e-7), (i, tangent, refs)
    g = s2s_ad.grad(f, wrt=(0, 1))
    hess = s2s_ad.hessian(f, wrt=(0, 1))(x, y, 3)
    row = s2s_ad.grad(s2s_ad.grad(f, wrt=0), wrt=(0, 1))(x, y, 3)
    for j, (dx, dy) in enumerate([(1e-5, 0.0), (0.0, 1e-5)]):
        up, down = g(x + dx, y + dy, 3), g(x - dx, y - dy, 3)
        assert math.isclose(row[j], (up[0] - down[0]) / 2e-5, rel_tol=1e-5, abs_tol=1e-6)
        for i in range(2):
            assert math.isclose(hess[i][j], (up[i] - down[i]) / 2e-5, rel_tol=1e-5,
                                abs_tol=1e-6), (i, j, hess)


@pytest.mark.parametrize("name", ["nested_roots", "elif_threshold", "nested_in_both"])
@pytest.mark.parametrize("x,y", [(0.0, 0.0), (0.3, 0.4)])
def test_forward_and_second_derivatives_where_an_arm_leaves_a_root_unread(name, x, y):
    # grad was right at the singular point, but jvp raised ZeroDivisionError
    # where the root is read in an arm nested in an arm (an elif chain, a
    # branch in each arm) or is a chain (sqrt(sqrt(s))): the tangent line
    # moved into the outer arm only, and a chain's inner line, read by the
    # outer one, stayed. hessian raised it in the gradient of the JVP
    # module: a guarded backward adding to an adjoint that was itself
    # untouched ended the guard of that adjoint's own producer.
    from tests import untouched_src as src
    f = getattr(src, name)
    refs = [central_difference(f, [x, y], i, h=1e-7) for i in range(2)]
    for i in range(2):
        _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=float(i == 0), dy=float(i == 1))
        assert math.isclose(tangent, refs[i], rel_tol=1e-6, abs_tol=1e-6), (i, tangent, refs)
    hess = s2s_ad.hessian(f, wrt=(0, 1))(x, y)
    g = s2s_ad.grad(f, wrt=(0, 1))
    h = 1e-6 if x == y == 0.0 else 1e-5  # inside the first arm's threshold at the origin
    for j, (dx, dy) in enumerate([(h, 0.0), (0.0, h)]):
        up, down = g(x + dx, y + dy), g(x - dx, y - dy)
        for i in range(2):
            assert math.isclose(hess[i][j], (up[i] - down[i]) / (2 * h), rel_tol=1e-5,
                                abs_tol=1e-5), (i, j, hess)


TUPLES_IN_ARMS = '''
def returned(x, y):
    if y > 0.0:
        return x * y, x
    return x, y * y

def pick(x, y):
    if y > 0.5:
        return x * y, x
    elif y > -0.5:
        return y, x * x * y
    return x, y

def through_helper(x, y):
    a, b = pick(x, y)
    return a + 3.0 * b

def bound(x, y):
    p = (y, x * x)
    if y > 0.0:
        p = (x * y, x)
    a, b = p
    return a + 3.0 * p[1] * b
'''


def _pair_fd(f, x, y, weights):
    def scalar(u, v):
        return sum(w * r for w, r in zip(weights, f(u, v)))
    return [central_difference(scalar, [x, y], i, h=1e-6) for i in range(2)]


@pytest.mark.parametrize("x,y", [(0.7, 0.4), (0.7, -0.4), (-1.2, 0.9), (0.3, -0.9)])
def test_a_tuple_returned_from_inside_a_branch(x, y):
    # `if y > 0: return x * y, x` then `return x, y * y`: the result was a φ
    # of a tuple and the placeholder of a result not yet returned, taken for
    # a number: grad gave (0.0, 0.0) ("f returns one number" with output=),
    # vjp raised AttributeError inside s2s-ad. The tuples are merged item by
    # item now (frontend/tuple_merges.py).
    f = make_function(TUPLES_IN_ARMS, "returned")
    for k in range(2):
        ref = _pair_fd(f, x, y, [float(k == 0), float(k == 1)])
        got = s2s_ad.grad(f, wrt=(0, 1), output=k)(x, y)
        for i in range(2):
            assert math.isclose(got[i], ref[i], rel_tol=1e-6, abs_tol=1e-7), (k, got, ref)
    value, back = s2s_ad.vjp(f, x, y)
    assert value == f(x, y)
    ref = _pair_fd(f, x, y, [1.0, 3.0])
    for i, g in enumerate(back((1.0, 3.0))):
        assert math.isclose(g, ref[i], rel_tol=1e-6, abs_tol=1e-7)
    for i in range(2):
        _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=float(i == 0), dy=float(i == 1))
        for k in range(2):
            ref = _pair_fd(f, x, y, [float(k == 0), float(k == 1)])
            assert math.isclose(tangent[k], ref[i], rel_tol=1e-6, abs_tol=1e-7)


@pytest.mark.parametrize("name", ["through_helper", "bound"])
@pytest.mark.parametrize("x,y", [(0.7, 0.8), (0.7, 0.2), (-1.2, -0.9)])
def test_a_tuple_that_differs_between_arms(name, x, y):
    # a helper returning a tuple from three arms was refused ("`pick` returns
    # one number"), and a name given a tuple in each arm ("cannot unpack a
    # tuple returned by a call")
    f = make_function(TUPLES_IN_ARMS, name)
    _first_orders(f, x, y)
    hess = s2s_ad.hessian(f, wrt=(0, 1))(x, y)
    for j, (dx, dy) in enumerate([(1e-5, 0.0), (0.0, 1e-5)]):
        up, down = s2s_ad.grad(f, wrt=(0, 1))(x + dx, y + dy), s2s_ad.grad(f, wrt=(0, 1))(x - dx, y - dy)
        for i in range(2):
            assert math.isclose(hess[i][j], (up[i] - down[i]) / 2e-5, rel_tol=1e-5, abs_tol=1e-6)


IN_A_LOOP = '''
def f(x, y):
    for i in range(3):
        if x * i > 1.0:
            return x * i, y
    return y, x
'''


@pytest.mark.parametrize("x,y", [(0.7, 0.8), (0.4, 0.2), (1.3, -0.9)])
def test_a_tuple_returned_from_inside_a_loop(x, y):
    # refused by this round ("a tuple returned from inside this loop is not
    # supported"); the loop carries the result item by item now
    # (tuple_merges.loop_result): each item's gradient, vjp along it
    for k in range(2):
        f = make_function(IN_A_LOOP, "f")
        ref = _pair_fd(f, x, y, [float(k == 0), float(k == 1)])
        got = s2s_ad.grad(f, wrt=(0, 1), output=k)(x, y)
        for i in range(2):
            assert math.isclose(got[i], ref[i], rel_tol=1e-6, abs_tol=1e-7), (k, got, ref)


TUPLES_REFUSED = {
    "lists": ('''
def f(x, y):
    q = [x, y]
    if y > 0.0:
        p = [x * y, x]
    else:
        p = q
    return p[0] + 3.0 * p[1] + q[0]
''', "`p` holds a different list in each arm of this branch, and `q` holds one of them too",
              4),
    "lengths": ('''
def f(x, y):
    if y > 0.0:
        return x * y, x
    return x, y, x
''', "the result is a tuple of 2 after one arm of this branch and a tuple of 3", 3),
}


CARRIED = '''
def f(x, y):
    p = (x, y)
    for i in range(3):
        p = (p[1] * x, p[0] + y)
    return p[0] + 3.0 * p[1]
'''

LIST_CARRIED = '''
def f(x, y):
    xs = [x, y]
    for i in range(3):
        xs = [xs[1] * x, xs[0] + y]
    return xs[0] + 3.0 * xs[1]
'''


LISTS_IN_ARMS = '''
def f(x, y):
    if y > 0.0:
        p = [x * y, x]
    else:
        p = [y, x * x]
    return p[0] + 3.0 * p[1]
'''


@pytest.mark.parametrize("y", [0.4, -0.4])
def test_a_different_list_in_each_arm_is_merged_item_by_item(y):
    # refused until lists of one length were merged as tuples are, where no
    # other name holds either ("`p` is a different list in each arm")
    _first_orders(make_function(LISTS_IN_ARMS), 0.7, y)


def test_a_tuple_carried_across_iterations_is_carried_item_by_item():
    # refused before ("`p` holds a tuple of 2 and is given a new value in this loop");
    # tests/test_loop_structures.py has the other structures
    _first_orders(make_function(CARRIED), 0.7, 0.4)
    # and a list, `xs = [xs[1] * x, xs[0] + y]` (refused until the list was
    # carried item by item too: tests/test_lists_carried.py)
    _first_orders(make_function(LIST_CARRIED), 0.7, 0.4)


@pytest.mark.parametrize("name", sorted(TUPLES_REFUSED))
def test_what_is_not_merged_is_refused_where_it_is(name):
    # before: a tuple returned from inside a loop gave grad (0.0, 0.0) too;
    # the others were refused as "a tuple returned by a call"
    source, message, line = TUPLES_REFUSED[name]
    f = make_function(source)
    for make in (lambda: s2s_ad.grad(f, wrt=(0, 1), output=0)(0.7, 0.4) if name in (
            "in_a_loop", "lengths") else s2s_ad.grad(f, wrt=(0, 1))(0.7, 0.4),
                 lambda: s2s_ad.vjp(f, 0.7, 0.4)):
        with pytest.raises(s2s_ad.SourceError) as err:
            make()
        assert message in str(err.value)
        assert err.value.line == line


COALESCED = '''
import math

def h(a, x):
    return (x / 0.5 if x > a else a / (1.5 + math.sin(x))) * a

def f(a, x):
    return h(a, x) * x
'''


@pytest.mark.parametrize("a,x", [(0.3, 0.9), (0.9, 0.3)])
def test_the_gradient_file_of_a_helper_whose_tape_named_a_value_twice(tmp_path, a, x):
    # the pair of h kept `sel` twice on its tape (the arm's x / 0.5 is
    # computed straight into the φ's variable, and both were taped):
    # harmless when run, but the gradient read back to be differentiated
    # again (jvp of the `grad -o` file, grad(grad(f))) raised ValueError
    # ('duplicate parameter name: sel') inside s2s-ad. The tape names each
    # variable once now.
    from s2s_ad import cli
    from tests.modules import import_source
    src = tmp_path / "coalesced.py"
    src.write_text(COALESCED)
    out = tmp_path / "grad_coalesced.py"
    assert cli.main(["grad", f"{src}:f", "-o", str(out)]) == 0
    g = import_source(tmp_path, out.read_text(), "grad_coalesced_6").grad_f
    f = make_function(COALESCED)
    for i in range(2):
        ref = [central_difference(f, [a, x], k, h=1e-6) for k in range(2)]
        assert all(math.isclose(u, v, rel_tol=1e-6) for u, v in zip(g(a, x), ref))
        up = list(g(*[v + 1e-5 * (k == i) for k, v in enumerate((a, x))]))
        down = list(g(*[v - 1e-5 * (k == i) for k, v in enumerate((a, x))]))
        j = s2s_ad.jvp(g, ("a", "x"))
        from tests.fuzz_checks import _tangent_names  # g takes dout: names may differ
        names = _tangent_names(j, ["a", "x"])
        _, tangent = j(a, x, **{names["a"]: float(i == 0), names["x"]: float(i == 1)})
        row = s2s_ad.grad(s2s_ad.grad(f, wrt=i), wrt=(0, 1))(a, x)
        for k in range(2):
            second = (up[k] - down[k]) / 2e-5
            assert math.isclose(tangent[k], second, rel_tol=1e-5, abs_tol=1e-6)
            assert math.isclose(row[k], second, rel_tol=1e-5, abs_tol=1e-6)


DICT_WRITES = '''
def one_arm(x, y):
    d = {"a": x, "b": y}
    if y > 0.0:
        d["a"] = y
    return d["a"] * 3.0 + d["b"]

def both_arms_alias(x, y):
    d = {"a": x, "b": y}
    e = d
    if y > 0.0:
        e["a"] = x * y
    else:
        e["a"] = x + y
    return d["a"] * 3.0 + d["b"]

def nested(x, y):
    ps = [{"w": x}, {"w": y}]
    if y > 0.0:
        ps[1]["w"] = x * y
    elif x > 0.0:
        ps[0]["w"] = y * y
    return ps[0]["w"] * 3.0 + ps[1]["w"]

def list_in_a_dict(x, y):
    d = {"xs": [x, y]}
    if y > 0.0:
        d["xs"][0] = y
    return d["xs"][0] * 3.0 + d["xs"][1]

def list_of_lists(x, y):
    m = [[x, y], [y, x]]
    if y > 0.0:
        m[0][1] = x * x
    return m[0][1] * 3.0 + m[1][1]

def in_a_loop(x, y, n):
    d = {"a": x, "b": y}
    k = 0
    while k < n:
        d["a"] = y
        k = k + 1
    return d["a"] * 3.0 + d["b"]
'''


@pytest.mark.parametrize("name", ["one_arm", "both_arms_alias", "nested", "list_in_a_dict",
                                  "list_of_lists"])
@pytest.mark.parametrize("x,y", [(0.7, 0.4), (0.7, -0.4), (-0.7, -0.4)])
def test_a_write_into_a_dict_inside_one_arm(name, x, y):
    # d["a"] = y in one arm changed the one dict both arms and the code after
    # the branch read: grad of one_arm at y < 0 gave (0.0, 4.0) where (3.0,
    # 1.0) is right; a value the arm computed (x * y) raised IRError ("used
    # before definition") inside s2s-ad. Each arm writes its own dict now,
    # merged key by key (frontend/dict_writes.py).
    f = make_function(DICT_WRITES, name)
    _first_orders(f, x, y)


def test_a_write_into_a_dict_inside_a_loop_is_refused_where_it_is():
    # a while loop writing d["a"] = y gave (0.0, 4.0) where (3.0, 1.0) is
    # right at n = 0; a loop's body runs any number of times, so the write
    # is refused, located, naming the rewrite
    f = make_function(DICT_WRITES, "in_a_loop")
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(f, wrt=(0, 1))(0.7, -0.4, 0)
    assert "the dict `d` is written into inside this loop" in str(err.value)
    assert err.value.line == 40  # the `while` of in_a_loop


KEYS_IN_ONE_ARM = '''
def counted(x, y):
    d = {"a": x}
    if y > 0.0:
        d["b"] = y
    return len(d) * x

def returned_there(x, y):
    d = {"a": x, "b": y}
    if y > 0.0:
        d["c"] = y * y
        return d["c"] * x
    d["b"] = x * x
    return d["a"] * 3.0 + d["b"]
'''


def test_a_key_set_in_one_arm_only():
    # the write changed the dict the code after the branch read, so len(d)
    # was 2 on both sides (grad 2.0 where 1.0 is right at y < 0); an arm's
    # own copy would make it 1 on both. Refused, located, unless the arm
    # that sets it ends in `return` (then the code after runs only where the
    # other arm ran).
    f = make_function(KEYS_IN_ONE_ARM, "counted")
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(f)(0.7, -0.4)
    assert "`d` gets the key 'b' in one arm of this branch only" in str(err.value)
    assert err.value.line == 4
    g = make_function(KEYS_IN_ONE_ARM, "returned_there")
    for x, y in [(0.7, 0.4), (0.7, -0.4)]:
        got = s2s_ad.grad(g, wrt=(0, 1))(x, y)
        for i in range(2):
            assert math.isclose(got[i], central_difference(g, [x, y], i, h=1e-6),
                                rel_tol=1e-6, abs_tol=1e-7)


def test_a_tuple_in_an_arm_that_returns():
    # `p = (x, y); return p[0] * p[1]` in an arm where p was a number before
    # raised AttributeError inside s2s-ad; the code after the branch runs
    # only where the other arm ran, so p is the other arm's there
    f = make_function('''
def f(x, y):
    p = x * 2.0
    if y > 0.0:
        p = (x, y)
        return p[0] * p[1]
    return p * y
''')
    for x, y in [(0.7, 0.4), (0.7, -0.4)]:
        _first_orders(f, x, y, forward=False)


INSTANCES_IN_ARMS = '''
from dataclasses import dataclass
from typing import NamedTuple

class State(NamedTuple):
    a: float
    b: float

@dataclass
class Box:
    a: float
    b: float

def named(x, y):
    s = State(x, y)
    if y > 0.0:
        s = State(s.a * 2.0, s.b * x)
    return s.a * 3.0 + s.b

def boxed(x, y):
    s = Box(x, y)
    if y > 0.0:
        s = Box(s.a * 2.0, s.b * x)
    return s.a * 3.0 + s.b
'''


@pytest.mark.parametrize("name", ["named", "boxed"])
@pytest.mark.parametrize("x,y", [(0.7, 0.4), (0.7, -0.4)])
def test_an_instance_built_in_each_arm(name, x, y):
    # a NamedTuple or dataclass rebuilt in one arm was refused ("`s` is a
    # local value, not something s2s-ad can call or look into"); merged
    # field by field now, as tuples are
    f = make_function(INSTANCES_IN_ARMS, name)
    got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    for i in range(2):
        ref = central_difference(f, [x, y], i, h=1e-6)
        assert math.isclose(got[i], ref, rel_tol=1e-6, abs_tol=1e-7)
        _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=float(i == 0), dy=float(i == 1))
        assert math.isclose(tangent, ref, rel_tol=1e-6, abs_tol=1e-7)


def test_a_conditional_expression_of_tuples():
    # refused before ("a conditional expression must give a number, an
    # array or a bool in both arms, not a tuple or list")
    f = make_function('''
def f(x, y):
    lo, hi = (x, y) if x < y else (y, x)
    a, (b, c) = (lo, (hi, x * y)) if y > 0.0 else (hi, (lo, x))
    return lo * 3.0 + hi * hi + a * b + c
''')
    for x, y in [(0.7, 0.4), (0.3, 0.9), (0.7, -0.4)]:
        got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
        for i in range(2):
            ref = central_difference(f, [x, y], i, h=1e-6)
            assert math.isclose(got[i], ref, rel_tol=1e-6, abs_tol=1e-7)
            _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=float(i == 0), dy=float(i == 1))
            assert math.isclose(tangent, ref, rel_tol=1e-6, abs_tol=1e-7)


AFTER_A_RETURNING_ARM = '''
import math

def dict_written(x, y):
    d = {"a": x, "b": y}
    if x > y:
        d["a"] = x * y
        return d["a"] * 2.0
    else:
        d["a"] = (x + d["b"]) * 0.5
    return d["a"] * 3.0 + d["b"]

def tuple_rebound(x, y):
    p = (x, y)
    if y > 0.5:
        return p[0] * y
    else:
        if x > 0.0:
            p = (math.sin(y), x * x)
    return p[0] + p[1] * 3.0
'''


@pytest.mark.parametrize("name", ["dict_written", "tuple_rebound"])
@pytest.mark.parametrize("x,y", [(0.7, 0.4), (0.2, 0.9), (-0.6, 0.1), (0.6, -0.3)])
def test_structures_after_an_arm_that_returns(name, x, y):
    # the values the other arm gave a dict's key or a tuple's items are read
    # after the branch through φs whose returning side is a stand-in (taking
    # the arm's values as they were raised IRError: "used before definition")
    f = make_function(AFTER_A_RETURNING_ARM, name)
    _first_orders(f, x, y)


CALL_TUPLES_IN_ARMS = '''
def h(u, v):
    return u * v, u * 0.5

def rebound(x, y):
    s = h(x, y)
    a = s[0]
    if x < 0.0:
        s = h(a, y)
        a = s[0] * s[1]
    return a + x

def unread(x, y):
    s = h(x, y)
    a = s[0]
    if x < 0.0:
        s = h(a, y)
        a = s[0] * s[1]
    return a + s[1]
'''


@pytest.mark.parametrize("x,y", [(-0.87, -0.4), (0.87, -0.4), (0.5, 1.3)])
def test_a_name_given_a_calls_tuple_in_one_arm(x, y):
    # s = h(x, y) then `if x < 0: s = h(a, y)`: the name's φ between the two
    # calls' tuples dropped the first call's backward in the reverse sweep:
    # grad (1.0, 0.0) where (0.6, 0.87) is right at (0.87, -0.4) (jvp was
    # right), or NameError inside s2s-ad where the first call's arguments
    # were computed. The name read after the branch was refused then; it holds
    # the tuple of the items' φs now (each call's items read next to it).
    f = make_function(CALL_TUPLES_IN_ARMS, "rebound")
    _first_orders(f, x, y)
    g = make_function(CALL_TUPLES_IN_ARMS, "unread")
    _first_orders(g, x, y)
