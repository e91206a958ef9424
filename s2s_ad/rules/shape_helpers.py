"""Helpers a generated NumPy gradient calls where the code fixes how shapes
relate, as source text; part of :data:`s2s_ad.rules.numpy_helpers.HELPERS`:

* ``joined``: the adjoint of an array read as consecutive slices that tile its
  first axis (:mod:`s2s_ad.reverse.scatters`); a gradient module read back
  from its file has its calls written as an array of zeros and one
  assignment per slice (:mod:`s2s_ad.frontend.scatter_calls`);
* ``same_shapes``: the flag under which a group of elementwise operations
  needs no ``unbroadcast`` (:mod:`s2s_ad.reverse.flat_shapes`); read back
  from a file, the flag is taken out (:mod:`s2s_ad.frontend.shape_flags`)."""

SHAPE_HELPERS = {
    "joined": '''
def joined(x, parts, cuts, _array=np.ndarray, _concatenate=np.concatenate):
    """The adjoint of x read as consecutive slices x[:c1], x[c1:c2], ..., x[ck:]
    of its first axis (0 <= c1 <= c2 <= ...: they tile it), from the slices'
    adjoints parts, in order: their concatenation, where it is an ndarray of
    x's shape and dtype (each part has its slice's shape). Otherwise (a part
    may be 0.0, an adjoint never added to, or another library's array) each
    part is assigned into zeros shaped like x at its slice, as scatter would
    (float zeros for an integer x: its adjoint is no integer)."""
    if type(x) is _array:
        dtype = x.dtype
        if dtype.kind in "biu":
            dtype = np.dtype(float)
        try:
            out = _concatenate(parts)
        except ValueError:  # a number among the parts (0-d)
            out = None
        if type(out) is _array and out.shape == x.shape and out.dtype == dtype:
            return out
    foreign = [p for p in parts if type(p) is not _array
               and not isinstance(p, (int, float, complex, np.generic))]
    if type(x) is not _array:
        out = np.zeros_like(x)
    elif not foreign:
        out = np.zeros(x.shape, dtype)
    else:  # another library's adjoint (Dask's): the zeros in its library, as scatter's
        out = np.zeros_like(foreign[0], shape=x.shape, dtype=dtype)
    for p, lo, hi in zip(parts, (0,) + cuts, cuts + (None,)):
        out[lo:hi] = p
    return out
''',
    "same_shapes": '''
def same_shapes(first, *others):
    \"\"\"Do the values all have one shape (lengths known: a Dask array's may not
    be yet)? Then no adjoint of an elementwise operation between them needs
    summing over broadcast axes.\"\"\"
    array = np.ndarray  # (not a parameter: a call's values after *others would be read as it)
    if type(first) is array:  # the common case: ndarrays, their shapes compared at once
        shape = first.shape
        for v in others:
            if type(v) is not array:
                break
            if v.shape != shape:
                return False
        else:
            return True
    shape = np.shape(first)
    if any(n != n for n in shape):
        return False  # nan: a length not known yet
    for v in others:
        if np.shape(v) != shape:
            return False
    return True
''',
}
