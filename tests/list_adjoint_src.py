"""Functions of a list parameter whose gradient module builds the list adjoint
``dc = [0.0] * n`` and writes it by index in the reverse loop: ``dc[i] = ds``
(each item read once) or ``dc[i] += ...`` (an item read several times)."""


def squares_horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i] * c[i] + x * c[i]
    return s


def weighted(c, x):
    total = 0.0
    for i in range(len(c)):
        total = total + (float(i) + x) * c[i] + 0.5 * c[i] * c[i] * c[i]
    return total


def zeros_written(x, y):
    ys = [0.0] * 3
    for i in range(3):
        ys[i] = x * float(i) + y * y
    ys[1] += x * y
    return ys[0] * ys[1] + ys[2] * x


def zeros_mid(x, y):
    return zeros_written(x, y) * 2.0


def zeros_positions(x, y):
    """The list of zeros in a helper, a helper of a helper, a loop and a branch."""
    t = 0.0
    for k in range(3):
        if x > 0.0:
            t = t + zeros_mid(x, y + float(k))
        else:
            t = t - zeros_written(x, y)
    return t
