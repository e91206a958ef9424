"""Determinants by expansion by minors, as real code writes them, and the
integer lists and index arrays they are written with: ``np.delete`` for the
minor, a list of ints made when the code runs used as an index array into a
NumPy array, and ints read from a list of ints used as list indices.

Every gradient is compared with central differences of the function itself
(float64), and the determinants' also with the closed form
``det(A)·inv(A)ᵀ``; ``vjp`` and ``jvp`` against the same differences along a
random direction."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient
from gradbench.det import det_flat, det_kept, det_minors

RNG = np.random.default_rng(47)
TESTED = {"list.index_array", "index.is_index"}
"""The rules these tests exercise (tests/test_numpy_rules_table.py checks
every NumPy rule is tested somewhere)."""


def closed_form(A, ell):
    m = np.reshape(A, (ell, ell))
    return (np.linalg.det(m) * np.linalg.inv(m).T).ravel()


def check_all(f, A, *rest, wrt=0, atol=1e-7):
    """grad, vjp and jvp of f with respect to argument ``wrt`` against
    central differences."""
    args = [A, *rest]
    fd = fd_gradient(f, args, wrt)
    g = s2s_ad.grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=atol)
    value, back = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args))
    np.testing.assert_allclose(np.asarray(back(2.5)[wrt]), 2.5 * fd, rtol=1e-6, atol=atol)
    v = RNG.normal(size=np.shape(A))
    name = f.__code__.co_varnames[wrt]
    value, tangent = s2s_ad.jvp(f, wrt=wrt)(*args, **{f"d{name}": v})
    assert np.isclose(value, f(*args))
    assert np.isclose(tangent, np.sum(fd * v), rtol=1e-6, atol=atol)
    return g


# ---- np.delete: the minor ----------------------------------------------------

def rows_deleted(x, drop):
    """np.delete of a list of rows in a loop, of a slice, of the flattened x."""
    s = 0.0
    for k in range(x.shape[0] - 1):
        s = s + np.sum(np.sin(np.delete(x, [k, k + 1], axis=0)) * k)
    return s + np.sum(np.delete(x, slice(0, 3)) ** 2) + np.sum(np.delete(x, np.s_[::2], 1) * drop)


def slice_at_run_time(x, drop):
    return np.sum(np.delete(x, slice(0, drop)))


def test_np_delete_in_a_loop_of_lists_slices():
    check_all(rows_deleted, RNG.normal(size=(4, 5)), 3)


def test_np_delete_of_a_slice_known_only_when_the_code_runs_is_refused():
    with pytest.raises(s2s_ad.SourceError, match="`stop` must be a constant") as e:
        s2s_ad.grad(slice_at_run_time, wrt=0)
    assert "test_int_lists47.py:" in str(e.value)


# ---- ints read from lists of ints as list indices -----------------------------

def det_joined(a, n, rows, cols):
    """The minor's columns joined from two slices of the list of columns."""
    if len(rows) == 1:
        return a[rows[0] * n + cols[0]]
    total = 0.0
    for k in range(len(cols)):
        rest = cols[:k] + cols[k + 1:]
        total += (-1) ** k * a[rows[0] * n + cols[k]] * det_joined(a, n, rows[1:], rest)
    return total


def det_flat_joined(a, ell):
    return det_joined(a, ell, list(range(ell)), list(range(ell)))


def gathered(a, order):
    """a read through a list of ints in a while loop, `order` a parameter."""
    s = 0.0
    k = 0
    while k < len(order):
        s = s + a[order[k]] * a[order[len(order) - 1 - k]] * (k + 1)
        k += 1
    return s


def test_list_indices_read_from_a_list_parameter_in_a_while_loop():
    check_all(gathered, list(RNG.normal(size=5)), [4, 0, 2, 2, 1])


# ---- lists of ints made when the code runs, as index arrays ---------------------

def det_take(m):
    """The minor's rows by a list of ints, its columns by np.take."""
    n = m.shape[0]
    if n == 1:
        return m[0, 0]
    total = 0.0
    every = list(range(n))
    for col in range(n):
        cols = every[:col] + every[col + 1:]
        total += (-1) ** col * m[0, col] * det_take(np.take(m[every[1:], :], cols, axis=1))
    return total


def det_take_a(A, ell):
    return det_take(A.reshape(ell, ell))


def picked(x, k):
    """Rows and columns picked by lists of ints, repeats summing, in a loop."""
    s = 0.0
    for i in range(x.shape[0]):
        keep = [j for j in range(x.shape[1]) if j != i % x.shape[1]]
        twice = [k, k] + keep
        s = s + np.sum(np.sin(x[:, twice]) * (i + 1.0)) + np.sum(x[keep] ** 2)
    return s


def rows_of(x, order):
    """A list parameter of ints indexing an array."""
    return np.sum(np.cos(x[order]) * np.arange(1.0, 1.0 + len(order))[:, None])


@pytest.mark.parametrize("ell", [1, 2, 3, 4])
@pytest.mark.parametrize("f, as_list", [(det_minors, False), (det_kept, False), (det_take_a, False),
                                        (det_flat, True), (det_flat_joined, True)])
def test_determinants_by_minors(f, as_list, ell):
    """np.delete minors, lists of ints as index arrays (examples/gradbench/det.py's
    styles and np.take), and a flat list read at ints from lists of ints."""
    A = RNG.normal(size=ell * ell)
    g = check_all(f, list(A) if as_list else A, ell)
    np.testing.assert_allclose(np.asarray(g), closed_form(A, ell), rtol=1e-8, atol=1e-10)


def test_lists_of_ints_index_arrays_in_a_loop_repeats_adding_up():
    check_all(picked, RNG.normal(size=(4, 4)), 2)


def test_a_list_parameter_of_ints_indexes_an_array():
    check_all(rows_of, RNG.normal(size=(4, 3)), [3, 0, 3, 1])


def test_a_list_of_floats_indexing_an_array_raises_as_numpy_does():
    def f(x, n):
        idx = [j * 0.5 for j in range(n)]
        return np.sum(x[idx])
    with pytest.raises(IndexError):
        f(np.ones(3), 2)
    with pytest.raises(IndexError):
        s2s_ad.grad(f, wrt=0)(np.ones(3), 2)


# ---- a table of a run-time size: refused, saying what to write --------------------

def det_table(A, ell):
    m = [[A[i * ell + j] for j in range(ell)] for i in range(ell)]
    return m[0][0] * m[1][1] - m[0][1] * m[1][0]


def test_a_list_of_lists_of_a_run_time_size_is_refused_naming_the_rewrite():
    with pytest.raises(s2s_ad.SourceError, match=r"one flat list.* read it at flat\[i \* m \+ j\]") as e:
        s2s_ad.grad(det_table, wrt=0)(list(RNG.normal(size=4)), 2)
    assert "test_int_lists47.py:" in str(e.value) and "NumPy array" in str(e.value)


# ---- the imperative style: lists of ints as linked lists of rows and columns -------

def det_of_minor(a, m, n, r, c):
    """The minor of the m x m row-major a whose rows and columns are the
    linked lists r and c (their heads r[m], c[m]), unlinked and linked back
    in place while the expansion recurses."""
    R0 = r[m]
    Cj = c[m]
    Cj1 = m
    if n == 1:
        return a[R0 * m + Cj]
    total = 0.0
    s = 1.0
    r[m] = r[R0]
    for j in range(n):
        if Cj1 == m:
            c[m] = c[Cj]
        else:
            c[Cj1] = c[Cj]
        total = total + s * a[R0 * m + Cj] * det_of_minor(a, m, n - 1, r, c)
        if Cj1 == m:
            c[m] = Cj
        else:
            c[Cj1] = Cj
        s = -s
        Cj1 = Cj
        Cj = c[Cj]
    r[m] = R0
    return total


def det_linked(a, ell):
    r = [0] * (ell + 1)
    c = [0] * (ell + 1)
    for i in range(ell):
        r[i] = i + 1
        c[i] = i + 1
    return det_of_minor(a, ell, ell, r, c)


def linked_walk(a, ell):
    """Integer bookkeeping in the function itself: a linked list of ints
    written and followed in a while loop, its ints indexing a."""
    nxt = [0] * (ell + 1)
    for i in range(ell):
        nxt[i] = (i + 2) % ell
    nxt[ell] = 0
    s = 0.0
    steps = 0
    while steps < 2 * ell:
        k = nxt[ell]
        s = s + a[k] * a[nxt[k]] * (steps + 1.0)
        nxt[ell] = nxt[k]
        steps += 1
    return s


def carried_walk(a, ell):
    nxt = [(i + 2) % ell for i in range(ell)]
    k = nxt[0]
    s = 0.0
    for steps in range(ell):
        s = s + a[k] * steps
        k = nxt[k]
    return s


def test_the_imperative_linked_lists_determinant_is_refused_where_the_helper_writes():
    A = list(RNG.normal(size=9))
    assert np.isclose(det_linked(A, 3), np.linalg.det(np.reshape(A, (3, 3))))
    with pytest.raises(s2s_ad.SourceError, match="changes the argument `r` in place") as e:
        s2s_ad.grad(det_linked, wrt=0)(A, 3)
    assert "test_int_lists47.py:" in str(e.value)


def test_a_linked_list_of_ints_written_and_followed_in_a_while_loop():
    check_all(linked_walk, list(RNG.normal(size=5)), 5)


def test_an_int_a_loop_carries_from_a_list_is_refused_saying_to_read_it_again():
    with pytest.raises(s2s_ad.SourceError, match="read it from its list again") as e:
        s2s_ad.grad(carried_walk, wrt=0)(list(RNG.normal(size=4)), 4)
    assert "test_int_lists47.py:" in str(e.value)


# ---- second order ---------------------------------------------------------------

@pytest.mark.parametrize("f, as_list", [(det_flat, True), (det_minors, False),
                                        (det_kept, False), (det_take_a, False)])
def test_hessian_vector_products_of_the_determinants(f, as_list):
    """hvp against central differences of the gradient (which the tests above
    check against the function's own differences)."""
    A = RNG.normal(size=9)
    v = RNG.normal(size=9)

    def grad_at(a):
        return np.asarray(s2s_ad.grad(f, wrt=0)(list(a) if as_list else a, 3), dtype=float)

    h = 1e-6
    fd = (grad_at(A + h * v) - grad_at(A - h * v)) / (2 * h)
    got = s2s_ad.hvp(f, wrt=0)(list(A) if as_list else A, 3, list(v) if as_list else v)
    np.testing.assert_allclose(np.asarray(got, dtype=float), fd, rtol=1e-6, atol=1e-8)
