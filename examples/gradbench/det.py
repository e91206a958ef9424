"""The determinant of an ℓ×ℓ matrix by expansion by minors (GradBench's det
eval): the matrix is a flat row-major sequence ``A`` of ℓ² numbers, and the
determinant is expanded recursively along the first row, the signs
alternating, down to 1×1 minors. The gradient with respect to ``A`` is the
cofactor matrix, det(A)·inv(A)ᵀ where A is invertible. Its cost grows as ℓ!.

Three ways real code writes it, each differentiated as it stands:

* ``det_minors``: NumPy, each minor made by ``np.delete`` of a row and a
  column;
* ``det_kept``: NumPy, each minor's columns picked by a list of ints made
  when the code runs (``m[1:][:, keep]``);
* ``det_flat``: no NumPy, the matrix read from the flat list at
  ``row * ℓ + column``, the rows and columns left passed down the recursion
  as lists of ints.
"""

import numpy as np


def minor(m, row, col):
    return np.delete(np.delete(m, row, axis=0), col, axis=1)


def det_of(m):
    n = m.shape[0]
    if n == 1:
        return m[0, 0]
    det = 0.0
    for col in range(n):
        det += (-1) ** col * m[0, col] * det_of(minor(m, 0, col))
    return det


def det_minors(A, ell):
    return det_of(np.reshape(A, (ell, ell)))


def det_of_kept(m):
    n = m.shape[0]
    if n == 1:
        return m[0, 0]
    det = 0.0
    for col in range(n):
        keep = [j for j in range(n) if j != col]
        det += (-1) ** col * m[0, col] * det_of_kept(m[1:][:, keep])
    return det


def det_kept(A, ell):
    return det_of_kept(np.reshape(A, (ell, ell)))


def det_of_rows(a, ell, rows, cols):
    """The minor of the ℓ×ℓ row-major list ``a`` on ``rows`` and ``cols``."""
    if len(rows) == 1:
        return a[rows[0] * ell + cols[0]]
    det = 0.0
    sign = 1.0
    for c in cols:
        rest = [d for d in cols if d != c]
        det += sign * a[rows[0] * ell + c] * det_of_rows(a, ell, rows[1:], rest)
        sign = -sign
    return det


def det_flat(A, ell):
    return det_of_rows(A, ell, list(range(ell)), list(range(ell)))
