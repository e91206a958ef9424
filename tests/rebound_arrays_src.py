"""Functions that never name NumPy, take arrays, and rebind a parameter
before indexing it (tests/test_rebound_arrays.py)."""


def scaled_max(A, B):
    A = A * 1.05
    s = 0.0
    for i in range(3):
        s = s + max(A[0, 0], B[0, 0]) * (i + 1)
    return s


def scaled_read(A, x):
    A = A * 1.05
    s = 0.0
    for i in range(3):
        s = s + A[0, 1] * x
    return s


def twice(A, x):
    A = A * 1.05
    A = A + 0.5
    return A[0, 1] * x * A[1, 0]


def summed(A, B):
    C = A + B
    s = 0.0
    for i in range(2):
        s = s + C[i, i] * C[0, 1]
    return s


def length(a, x):
    a = a * 2.0
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * x * a[i]
    return s


def rows(a, x):
    a = a * 2.0
    s = 0.0
    for v in a:
        s = s + v * x * v
    return s


def unpacked(a, x):
    a = a * 2.0
    p, q = a
    return p * q * x


def through_helper(A, x):
    return scaled_read(A, x) + A[1, 1]


def in_branch(A, x):
    if x > 0:
        A = A * 2.0
    return A[0, 0] * x * A[1, 1]


def in_loop(A, x):
    s = 0.0
    for i in range(3):
        A = A * 1.05
        s = s + A[0, 0] * x
    return s


def comprehension(A, x):
    A = A * 1.5
    return sum(A[i, i] * x for i in range(2))


def conditional_expression(A, x):
    B = A * 2.0 if x > 0 else A * 3.0
    return B[1, 1] * x * B[0, 1]


def in_a_lambda(A, x):
    f = lambda M: M[0, 1] * x
    return f(A * 2.0) * A[1, 0]


def rows_of_rows(A, x):
    B = A * x
    s = 0.0
    for row in B:
        for v in row:
            s = s + v * v
    return s
