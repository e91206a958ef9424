"""Functions that never name NumPy and write into arrays
(tests/test_array_writes_entry_points.py): the first part writes into arrays
the function made (accepted by grad, vjp, jvp and the CLI with --array
alike), the second into an array the caller passed (refused by all of them
with the same located message)."""


def written_product(a):
    b = a * 2.0
    b[0] = b[1] * 3.0
    return b.sum()


def written_method_copy(a):
    b = a.copy()
    b[0] = b[1] * 3.0
    return (b * b).sum()


def rebound_parameter(a):
    a = a * 1.0
    a[0] = a[1] * 3.0
    return a.sum()


def written_in_a_loop(a):
    b = a * 2.0
    for i in range(1, 3):
        b[i] = b[i - 1] * 3.0
    return b.sum()


def written_slice(a):
    b = a * 2.0
    b[1:] = b[:-1] * 3.0
    return b.sum()


def added_into(a):
    b = a.copy()
    b[0] += b[1] * 3.0
    return b[0] + b[2]


def copy_written_by_helper(b, v):
    c = b.copy()
    c[0] = v * c[1]
    return c


def through_a_helper(a):
    return copy_written_by_helper(a, 2.0).sum()


def item_copied(xs):
    b = xs[0].copy()
    b[0] = 2.0 * b[1]
    return b.sum() + xs[1].sum()


def into_the_parameter(a):
    a[0] = a[1] * 3.0
    return a.sum()


def into_a_slice_of_it(a):
    b = a[:]
    b[0] = 3.0
    return b.sum()


def fill(b, v):
    b[0] = v * b[1]
    return b


def helper_into_the_parameter(a):
    fill(a, 2.0)
    return a.sum()


def into_an_item_of_it(xs):
    xs[0][0] = 2.0
    return xs[0].sum()
