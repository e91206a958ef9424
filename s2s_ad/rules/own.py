"""Rules for the helpers s2s-ad's own NumPy gradients call (``unbroadcast``,
``matmul_adjoint``, ...; their text is in :mod:`s2s_ad.rules.numpy_helpers`).

A gradient module read back from its file calls these functions, which
s2s-ad wrote and knows: the frontend recognises a module-level function whose
source is exactly one of them (:mod:`s2s_ad.frontend.own_helpers`) and
lowers a call to it as the primitive below instead of reading its body (type
tests and fast paths for plain arrays, outside the subset). Each is linear in
the adjoint it moves (``x0``) and, for ``matmul_adjoint``, in the other
factor too; the operand that only gives a shape gets no adjoint.

* ``unbroadcast(x0, x1)`` sums ``x0`` down to ``x1``'s shape, so its adjoint
  broadcasts ``g`` back to the shape both broadcast to, then sums that down to
  ``x0``'s shape (``x0`` may have had fewer axes: a 0.0 adjoint).
* ``matmul_adjoint(x0, x1, x2, 0)`` is the adjoint of ``x1 @ x2`` with respect
  to ``x1`` for the cotangent ``x0``: ``⟨A(x0), c⟩ = ⟨x0, c @ x2⟩`` for every
  ``c`` shaped like ``x1``, so ``⟨g, A⟩ = ⟨x0, g @ x2⟩``: adjoint to ``x0``
  ``g @ x2``, to ``x2`` the adjoint of ``g @ x2`` with respect to its second
  factor for the cotangent ``x0``. ``matmul_adjoint(x0, x1, x2, 1)`` likewise
  with ``⟨A(x0), c⟩ = ⟨x0, x1 @ c⟩``. ``g`` is shaped like the result (``x1``,
  resp. ``x2``) by ``np.broadcast_to`` first: an adjoint that is a 0.0 (the
  caller read no item of a tuple its pair returns) has no axes for
  ``np.matmul``.
* ``inner_adjoint(x0, x1, x2, i)`` is the same for ``np.inner(x1, x2)``
  (which contracts the last axes): ``np.inner`` takes the place of ``@``; and
  ``dot_adjoint(x0, x1, x2, i)`` for ``np.dot(x1, x2)``, with ``np.dot``.
* ``tensordot_adjoint(x0, x1, x2, axes, i)``, ``kron_adjoint(x0, x1, x2, i)``
  and ``convolve_adjoint(x0, x1, x2, mode, i)`` are the same for
  ``np.tensordot(x1, x2, axes)``, ``np.kron(x1, x2)`` and
  ``np.convolve(x1, x2, mode)``: the
  product itself takes the place of ``@`` (the adjoint of an adjoint is the
  linear map it came from).
* ``spread(x0, x1)`` broadcasts ``x0`` to ``x1``'s shape: adjoint
  ``unbroadcast(g, x0)``.
* ``extreme_adjoint(x0, x1, x2, axis)`` is ``x0`` times the weights of the
  elements of ``x1`` equal to their extreme ``x2`` (ties split evenly), a
  diagonal map: adjoint the same weights times ``g``, summed to ``x0``'s shape.
* ``astype_like(x0, x1)`` is ``x0`` in ``x1``'s floating dtype: adjoint ``g``
  in ``x0``'s.
* ``total(x)`` is ``np.sum(x)`` (``x`` itself for a number): adjoint ``g``
  spread over ``x``; ``array_sum(x)`` is ``np.sum(x)`` (of a number too), the
  same adjoint; ``own(x)`` is a copy: adjoint ``g``.
* ``rolled(x, shift, axis)`` is ``np.roll``: adjoint the roll back; ``eye_matrix(n)``
  is ``np.eye(n)``, a constant; ``moved(x, source, destination)`` is
  ``np.moveaxis``: adjoint the move back; so is ``float_zeros(x)`` (``np.zeros_like(x) + 0.0``).
* ``seeded(x, y)`` is ``float_zeros(x) + y`` (``y`` itself where it already
  has that shape and dtype): adjoint to ``y`` ``g`` summed back to ``y``'s
  shape; ``x`` gives the shape.
* ``pad_adjoint(x0, x1, pad_width)`` (``np.pad``'s adjoint: ``x0`` without the
  padding) is linear in ``x0``, and its transpose pads with zeros:
  ``np.pad(g, pad_width)``; ``x1`` gives the shape.
* ``take_along_axis_adjoint(x0, x1, index, axis)`` adds ``x0`` into zeros shaped
  like ``x1`` where ``np.take_along_axis(x1, index, axis)`` took each element
  from (repeats add up), a linear map whose transpose takes again:
  ``np.take_along_axis(g, index, axis=axis)``; ``x1`` gives the shape and the
  integer ``index`` has no adjoint.
* ``delete_adjoint(x0, x1, obj, axis)`` puts ``x0`` back among zeros shaped
  like ``x1`` where ``np.delete(x1, obj, axis)`` kept each element, a linear
  map whose transpose deletes again: ``np.delete(g, obj, axis=axis)``;
  ``delete_slice_adjoint(x0, x1, start, stop, step, axis)`` the same for a
  slice.
* ``scatter(x0, x1, index)``, zeros shaped like ``x1`` with ``x0`` added at
  ``x1[index]`` (repeated indices add up), as it is called with an index that
  is one expression (an integer array, a mask, an int): a linear map whose
  transpose reads ``g`` back at the index, ``unbroadcast(g[index], x0)``
  (``x1`` only gives the shape). With a tuple or slice index the call is the
  subscript write :mod:`s2s_ad.frontend.scatter_calls` makes of it.
* ``tile_adjoint(x0, x1, reps)`` sums the tiles of ``x0`` (the adjoint of
  ``np.tile(x1, reps)``) into ``x1``'s shape, a linear map whose transpose
  tiles again: adjoint to ``x0`` ``np.tile(g, reps)``; ``x1`` only gives the
  shape. Likewise ``repeat_adjoint(x0, x1, repeats, axis)`` (the copies
  summed; transpose ``np.repeat``), ``trace_adjoint(x0, x1, offset)`` (``x0``
  on a diagonal; transpose ``np.trace``) and ``diag_adjoint(x0, x1, k)`` (a
  diagonal taken, or placed back; transpose ``np.diag`` either way).
  ``stacked_part(x0, (x1, ..., xn), i, how)`` (the part of ``x0`` that
  ``np.hstack``/``np.vstack`` took from operand ``i``; the others only give
  shapes) has the transpose ``stacked_back``: the stack of ``g`` in that
  place and zeros in the others'.
* ``quantile_adjoint(x0, x1, q, axis, keepdims, method)`` (``np.quantile``'s
  adjoint: ``x0`` times the weights the quantile gives ``x1``'s elements) and
  ``quantile_tangent(x0, x1, q, ...)`` (the weights applied to a tangent
  ``x0``) are linear in ``x0`` and each other's transposes; ``x1`` enters
  through comparisons only: no adjoint. The weights move with ``q`` (``t``,
  the fraction of ``(n − 1)·q``): ``q``'s adjoint is ``quantile_mixed_q``
  (the derivative in ``q`` of the weights, which is the slope's derivative
  along ``x0``, or along ``g``).
  ``quantile_q_adjoint(x0, x1, q, ...)`` (``q``'s adjoint: ``x0`` times
  ``quantile_slope``, the derivative in ``q``, summed to ``q``'s shape) and
  ``quantile_q_tangent(x0, x1, q, ...)`` (a tangent of ``q`` times it) are
  likewise linear in ``x0`` and each other's transposes; the slope is
  constant in ``q`` between order statistics, and moves with ``x1``:
  ``x1``'s adjoint is ``quantile_mixed_x`` (the slope's transpose,
  ``(n − 1)`` times the higher order statistic's weights minus the lower's).
  Forward mode writes the same derivatives as tangents
  (:data:`s2s_ad.forward.linear.TANGENTS`, ``quantile_mixed_tangent``).
* ``running_extreme_adjoint(x0, x1, x2, axis)`` (``np.maximum.accumulate``'s
  and ``np.minimum.accumulate``'s adjoint: ``x0`` times the weights the
  running extreme ``x2`` of ``x1`` gives its elements) and
  ``running_extreme_tangent(x0, x1, x2, axis)`` are likewise linear in
  ``x0`` and each other's transposes; ``x1`` and ``x2`` enter through
  comparisons only.
* ``assign(y, index, v)`` (a copy of ``y`` with ``y[index] = v``, as written for
  ``y[index] = v`` where the forward pass keeps each version of ``y``) is the
  subscript write itself, ``array.setitem`` (:mod:`s2s_ad.rules.numpy`), its
  index read back from the expression s2s-ad wrote (``slice(1, None)`` as ``1:``).
  ``gather(g, index, y)`` (the adjoint of a value written into ``y[index]``) is
  ``spread(g, y)[index]``, ``zeroed(g, index, y)`` (the adjoint of the array
  written into) the write ``spread(g, y)[index] = 0.0``, and
  ``cumsum_adjoint(g, x, axis)`` the cumulative sum of ``g`` from the end
  (``np.flip``, ``np.cumsum``, ``np.flip``; over the flattened array, reshaped
  to ``x``'s shape, for ``axis=None``), ``contract(subscripts, *operands)``
  (an einsum's adjoint) ``np.einsum(subscripts, *operands)`` and
  ``cross_product(a, b)`` ``np.cross(a, b)``, and ``others_product(x, axis)``
  (``np.prod``'s adjoint: the product of the other elements along ``axis``)
  its exclusive cumulative products from both sides, ``sort_adjoint(g, x,
  axis)`` (``np.sort``'s adjoint) ``np.take_along_axis(g, np.argsort(np.argsort(x,
  axis=axis), axis=axis), axis=axis)`` (over the flattened arrays, reshaped to
  ``x``'s shape, for ``axis=None``), and ``cumprod_adjoint(g,
  x, out, axis)`` the exact form its text takes where a slice holds a zero
  (for every slice: quadratic in the axis length, the same values): each
  lowered as those operations
  (:mod:`s2s_ad.frontend.own_helpers`), which have rules, rather than a rule
  of its own.

``tests/test_closure.py`` checks each adjoint against central differences
and each tangent (:mod:`s2s_ad.forward.linear`) against the adjoint.
"""

from __future__ import annotations

from . import Rule


def _bilinear(name: str, product: str, first: str, second: str, attr: str | None = None,
              default=None) -> list:
    """The two rules of ``name(x0, x1, x2, [attr,] i)``, the adjoint of
    ``product`` (a template of its two factors) with respect to its factor
    ``i`` for the cotangent ``x0``: linear in ``x0`` and in the other factor.
    The adjoint of an adjoint is the product it came from (``g`` shaped like
    the factor first: a 0.0 adjoint has no axes), summed to ``x0``'s shape;
    the other factor's is the adjoint of the other side; the factor that
    only gives a shape gets none."""
    extra = f", {attr}" if attr else ""
    attrs = ((attr, default),) if attr else ()
    g1, g2 = "np.broadcast_to(g, np.shape(x1))", "np.broadcast_to(g, np.shape(x2))"
    return [
        Rule(f"own.{name}.0", f"{name}(x0, x1, x2{extra}, 0)",
             (f"unbroadcast({product.format(g1, 'x2')}, x0)", None,
              f"{name}(x0, {g1}, x2{extra}, 1)"), "array",
             f"adjoint to x0: {first}; to x2: the adjoint of {first} for x0", adjoint=True,
             attrs=attrs),
        Rule(f"own.{name}.1", f"{name}(x0, x1, x2{extra}, 1)",
             (f"unbroadcast({product.format('x1', g2)}, x0)",
              f"{name}(x0, x1, {g2}{extra}, 0)", None), "array",
             f"adjoint to x0: {second}; to x1: the adjoint of {second} for x0", adjoint=True,
             attrs=attrs)]


_QUANTILE_ATTRS = (("axis", None), ("keepdims", False), ("method", "linear"))

OWN_RULES = [
    Rule("own.unbroadcast", "unbroadcast(x, y)",
         ("unbroadcast(np.broadcast_to(g, np.broadcast_shapes(np.shape(x), np.shape(y))), x)",
          None), "array", "g broadcast back", adjoint=True),
    *_bilinear("matmul_adjoint", "np.matmul({}, {})", "g @ x2", "x1 @ g"),
    *_bilinear("dot_adjoint", "np.dot({}, {})", "np.dot(g, x2)", "np.dot(x1, g)"),
    *_bilinear("tensordot_adjoint", "np.tensordot({}, {}, axes=axes)", "np.tensordot(g, x2, axes)",
               "np.tensordot(x1, g, axes)", "axes", 2),
    *_bilinear("kron_adjoint", "np.kron({}, {})", "np.kron(g, x2)", "np.kron(x1, g)"),
    *_bilinear("convolve_adjoint", "np.convolve({}, {}, mode=mode)",
               "np.convolve(g, x2, mode)", "np.convolve(x1, g, mode)", "mode", "full"),
    Rule("own.inner_adjoint.0", "inner_adjoint(x0, x1, x2, 0)",
         ("np.inner(np.broadcast_to(g, np.shape(x1)), x2)", None,
          "inner_adjoint(x0, np.broadcast_to(g, np.shape(x1)), x2, 1)"), "array",
         "adjoint to x0: np.inner(g, x2); to x2: the adjoint of np.inner(g, x2) for x0",
         adjoint=True),
    Rule("own.inner_adjoint.1", "inner_adjoint(x0, x1, x2, 1)",
         ("np.inner(x1, np.broadcast_to(g, np.shape(x2)))",
          "inner_adjoint(x0, x1, np.broadcast_to(g, np.shape(x2)), 0)", None), "array",
         "adjoint to x0: np.inner(x1, g); to x1: the adjoint of np.inner(x1, g) for x0",
         adjoint=True),
    Rule("own.spread", "spread(x, y)", ("unbroadcast(g, x)", None), "array",
         "g summed back", adjoint=True),
    Rule("own.extreme_adjoint", "extreme_adjoint(x0, x1, x2, axis)",
         ("unbroadcast(extreme_adjoint(g, x1, x2, axis), x0)", None, None), "array",
         "the extreme's weights times g", adjoint=True, attrs=(("axis", None),)),
    Rule("own.astype_like", "astype_like(x, y)", ("astype_like(g, x)", None), "array",
         "g in x's dtype", adjoint=True),
    Rule("own.total", "total(x)", ("spread(g, x)",), "array", "1 for each summed element",
         adjoint=True),
    Rule("own.own", "own(x)", ("g",), "array", "1 (a copy)", adjoint=True),
    Rule("own.array_sum", "array_sum(x)", ("spread(g, x)",), "array", "1 for each summed element",
         adjoint=True),
    Rule("own.rolled", "rolled(x, shift, axis)", ("rolled(g, unshift, axis)",), "array",
         "roll back", adjoint=True, attrs=(("shift", 0), ("axis", None), ("unshift", 0))),
    Rule("own.moved", "moved(x, source, destination)", ("moved(g, destination, source)",),
         "array", "move back", adjoint=True, attrs=(("source", 0), ("destination", 0))),
    Rule("own.tile_adjoint", "tile_adjoint(x, y, reps)", ("np.tile(g, reps)", None), "array",
         "g tiled back", adjoint=True, attrs=(("reps", 1),)),
    Rule("own.stacked_part", "stacked_part(x0, rest, part, how)",
         ("stacked_back(g, rest, part, how)", None), "array", "g put back among zeros",
         adjoint=True, variadic=True, attrs=(("part", 0), ("how", "h"))),
    Rule("own.repeat_adjoint", "repeat_adjoint(x, y, repeats, axis)",
         ("np.repeat(g, repeats, axis=axis)", None), "array", "g repeated back", adjoint=True,
         attrs=(("repeats", 1), ("axis", None))),
    Rule("own.trace_adjoint", "trace_adjoint(x, y, offset)", ("np.trace(g, offset=offset)", None),
         "array", "the diagonal of g", adjoint=True, attrs=(("offset", 0),)),
    Rule("own.diag_adjoint", "diag_adjoint(x, y, k)", ("np.diag(g, k=k)", None), "array",
         "np.diag of g", adjoint=True, attrs=(("k", 0),)),
    Rule("own.eye_matrix", "eye_matrix(x)", (None,), "array", "constant"),
    Rule("own.float_zeros", "float_zeros(x)", (None,), "array", "constant"),
    Rule("own.seeded", "seeded(x, y)", (None, "unbroadcast(g, y)"), "array",
         "to y: g summed back (y is added to zeros shaped like x)", adjoint=True),
    Rule("own.pad_adjoint", "pad_adjoint(x, y, pad_width)", ("np.pad(g, pad_width)", None),
         "array", "g padded back with zeros", adjoint=True, attrs=(("pad_width", 0),)),
    Rule("own.take_along_axis_adjoint", "take_along_axis_adjoint(x0, x1, x2, axis)",
         ("np.take_along_axis(g, x2, axis=axis)", None, None), "array",
         "g read back where each element was taken from", adjoint=True,
         attrs=(("axis", -1),)),
    Rule("own.quantile_adjoint", "quantile_adjoint(x0, x1, x2, axis, keepdims, method)",
         ("quantile_tangent(g, x1, x2, axis, keepdims, method)", None,
          "quantile_mixed_q(x0, g, x1, x2, axis, keepdims, method)"), "array",
         "the quantile's weights applied to g (its transpose); to q: the weights' derivative "
         "in q", adjoint=True, attrs=_QUANTILE_ATTRS),
    Rule("own.quantile_tangent", "quantile_tangent(x0, x1, x2, axis, keepdims, method)",
         ("quantile_adjoint(g, x1, x2, axis, keepdims, method)", None,
          "quantile_mixed_q(g, x0, x1, x2, axis, keepdims, method)"), "array",
         "the quantile's weights spread with g (its transpose); to q: the weights' derivative "
         "in q", adjoint=True, attrs=_QUANTILE_ATTRS),
    Rule("own.quantile_q_adjoint", "quantile_q_adjoint(x0, x1, x2, axis, keepdims, method)",
         ("quantile_q_tangent(g, x1, x2, axis, keepdims, method)",
          "quantile_mixed_x(g, x0, x1, x2, axis, keepdims, method)", None), "array",
         "g times the quantile's derivative in q spread on q's axes (its transpose); to x: "
         "that derivative's own", adjoint=True, attrs=_QUANTILE_ATTRS),
    Rule("own.quantile_q_tangent", "quantile_q_tangent(x0, x1, x2, axis, keepdims, method)",
         ("quantile_q_adjoint(g, x1, x2, axis, keepdims, method)",
          "quantile_mixed_x(x0, g, x1, x2, axis, keepdims, method)", None), "array",
         "g times the quantile's derivative in q summed to q's shape (its transpose); to x: "
         "that derivative's own", adjoint=True, attrs=_QUANTILE_ATTRS),
    *[Rule(f"own.running_extreme_{a}", f"running_extreme_{a}(x0, x1, x2, axis)",
           (f"unbroadcast(running_extreme_{b}(g, x1, x2, axis), x0)", None, None), "array",
           "the running extreme's weights applied to g (its transpose)", adjoint=True,
           attrs=(("axis", 0),))
      for a, b in (("adjoint", "tangent"), ("tangent", "adjoint"))],
    Rule("own.delete_adjoint", "delete_adjoint(x0, x1, x2, axis)",
         ("np.delete(g, x2, axis=axis)", None, None), "array",
         "g with the deleted elements deleted again (its transpose)", adjoint=True,
         attrs=(("axis", None),)),
    Rule("own.delete_slice_adjoint", "delete_slice_adjoint(x0, x1, start, stop, step, axis)",
         ("np.delete(g, slice(start, stop, step), axis=axis)", None), "array",
         "g with the deleted elements deleted again (its transpose)", adjoint=True,
         attrs=(("start", None), ("stop", None), ("step", None), ("axis", None))),
    Rule("own.scatter", "scatter(x0, x1, x2)",
         ("unbroadcast(np.broadcast_to(g, np.shape(x1))[x2], x0)", None, None), "array",
         "g read back at the index", adjoint=True),
]

OWN_PRIMS = {"unbroadcast": "own.unbroadcast", "spread": "own.spread",
             "extreme_adjoint": "own.extreme_adjoint", "astype_like": "own.astype_like",
             "matmul_adjoint": "own.matmul_adjoint", "total": "own.total", "own": "own.own",
             "rolled": "own.rolled", "moved": "own.moved", "eye_matrix": "own.eye_matrix",
             "float_zeros": "own.float_zeros", "seeded": "own.seeded",
             "array_sum": "own.array_sum",
             "assign": "array.setitem", "gather": "own.gather", "zeroed": "own.zeroed",
             "cumsum_adjoint": "own.cumsum_adjoint", "tile_adjoint": "own.tile_adjoint",
             "contract": "own.contract", "cross_product": "own.cross_product",
             "others_product": "own.others_product", "cumprod_adjoint": "own.cumprod_adjoint",
             "inner_adjoint": "own.inner_adjoint", "dot_adjoint": "own.dot_adjoint", "repeat_adjoint": "own.repeat_adjoint",
             "trace_adjoint": "own.trace_adjoint", "diag_adjoint": "own.diag_adjoint",
             "stacked_part": "own.stacked_part", "scatter": "own.scatter",
             "sort_adjoint": "own.sort_adjoint", "pad_adjoint": "own.pad_adjoint",
             "tensordot_adjoint": "own.tensordot_adjoint", "kron_adjoint": "own.kron_adjoint",
             "take_along_axis_adjoint": "own.take_along_axis_adjoint",
             "convolve_adjoint": "own.convolve_adjoint",
             "quantile_adjoint": "own.quantile_adjoint",
             "quantile_tangent": "own.quantile_tangent",
             "running_extreme_adjoint": "own.running_extreme_adjoint",
             "running_extreme_tangent": "own.running_extreme_tangent",
             "quantile_q_adjoint": "own.quantile_q_adjoint",
             "quantile_q_tangent": "own.quantile_q_tangent",
             "index_array_of": "list.index_array", "delete_adjoint": "own.delete_adjoint",
             "delete_slice_adjoint": "own.delete_slice_adjoint"}
"""Helper name -> its primitive (``matmul_adjoint``, ``inner_adjoint``, ``dot_adjoint``,
``tensordot_adjoint``, ``kron_adjoint``, ``convolve_adjoint``: + ``.0``/``.1``,
its last argument)."""
