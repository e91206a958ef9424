"""Module-level lists of numbers read through this module's name
(`everyday6_consts.COEFFS`) by tests/everyday6_src.py."""

COEFFS = [0.5, -1.2, 2.0]
TAPER = (1.5, 0.25, -0.75)
MAT = [[1.0, 2.0], [3.0, -4.0]]
