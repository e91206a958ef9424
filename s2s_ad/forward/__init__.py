"""Forward mode: the tangent transform of the SSA IR (:mod:`.transform`), with
the forward rules of the NumPy primitives whose reverse rule is a whole
adjoint rather than a per-operand partial (:mod:`.linear`)."""
