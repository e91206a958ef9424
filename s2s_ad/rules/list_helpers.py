"""The helpers of a reverse loop run on Python lists of array elements
(:mod:`s2s_ad.reverse.element_lists`), as source text; part of
:data:`s2s_ad.rules.numpy_helpers.HELPERS`."""

LIST_HELPERS = {
    "float_lists": '''
def float_lists(reads, writes, numbers):
    """The elements of each array of reads and writes as a Python list, for the
    loop that follows, which reads (and into writes, writes) them one at a time:
    a float item computes what a NumPy float64 scalar computes, several times
    faster. Only where each array is a 1-d float64 ndarray (those written into
    owning their data, none the same as another) and each of numbers (what else
    the loop computes with) an int, a float or a 0-d float64 array, whose sums
    and products with a float are float64's; otherwise the arrays themselves
    (float32, complex, Dask arrays; a float32 number would make a float's
    products float32)."""
    arrays = reads + writes
    if not all(type(a) is np.ndarray and a.ndim == 1 and a.dtype == np.float64
               for a in arrays) or not all(isinstance(v, (int, float)) or type(v) is np.ndarray
                                           and v.ndim == 0 and v.dtype == np.float64
                                           for v in numbers):
        return arrays
    if any(w.base is not None for w in writes) or len({id(a) for a in arrays}) < len(arrays) \\
            or any(r.base is not None and any(r.base is w for w in writes) for r in reads):
        return arrays
    return [a.tolist() for a in arrays]
''',
    "put_floats": '''
def put_floats(a, items):
    """a[:] = items, the list float_lists made of a's elements (unless it gave a itself)."""
    if items is not a:
        a[:] = items
''',
}
