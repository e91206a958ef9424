"""The helpers a generated NumPy module defines for the adjoint of a write
by index, ``y[index] = v``: ``gather`` (``g[index]``, the value's) and
``zero_at`` (``g[index] = 0``, the overwritten elements'), and for a list of
ints indexing an array, ``index_array_of`` (the array NumPy makes of it), as
source text (see :mod:`s2s_ad.rules.numpy_helpers`)."""

INDEX_HELPERS = {
    "gather": '''
def gather(g, index, y):
    """g[index], where g may still be a number standing for an array of y's
    shape (an adjoint that started at 0.0, or the seed). Integer arrays side
    by side in the index (g[:, rows, cols], the rest whole axes) pick from an
    array of another library (Dask has no such indexing) as one array over
    those axes flattened; the forward write checked the positions."""
    arrays = type(g) is np.ndarray and type(y) is np.ndarray
    if (g.shape != y.shape) if arrays else (np.shape(g) != np.shape(y)):
        g = np.zeros_like(y, dtype=np.result_type(y, g)) + g
    if type(g) is np.ndarray or not isinstance(index, tuple):
        return g[index]
    at = [k for k, i in enumerate(index) if isinstance(i, np.ndarray) and i.dtype.kind in "iu"]
    if len(at) < 2 or at != list(range(at[0], at[-1] + 1)) or any(
            not isinstance(i, slice) or i != slice(None)
            for k, i in enumerate(index) if k not in at):
        return g[index]
    shape = np.shape(g)
    a, b = at[0], at[-1] + 1
    flat = np.ravel_multi_index(index[a:b], shape[a:b], mode="wrap")
    return np.take(np.reshape(g, shape[:a] + (-1,) + shape[b:]), flat, axis=a)
''',
    "zero_at": '''
def zero_at(g, index):
    """g with g[index] = 0: in place for an ndarray; for an array of another
    library (Dask has no writes by several integer arrays) a new array, with
    zeros where a mask made by NumPy says."""
    if type(g) is np.ndarray:
        g[index] = 0.0
        return g
    keep = np.ones(np.shape(g), dtype=bool)
    keep[index] = False
    return np.where(keep, g, 0.0)
''',
    "index_array_of": '''
def index_array_of(xs):
    """A list indexing an array (x[:, keep], np.take(x, keep)), as the array
    NumPy makes of it there: of its ints (of bools: a mask); an empty list
    picks nothing. A list of anything else raises IndexError, as NumPy's
    indexing does."""
    a = np.asarray(xs)
    if a.dtype.kind in "iub":
        return a
    if a.size == 0:
        return a.astype(np.intp)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                     "(`None`) and integer or boolean arrays are valid indices")
''',
}
"""Functions a generated module defines for itself when its code calls them."""
