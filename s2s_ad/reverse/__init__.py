"""The reverse transform: SSA IR to the generated code of a gradient.

``transform`` is the one reverse transform (every function, every pair);
``analysis`` decides what is active and what the sweep reads; ``primal``
is the forward pass that records the tape; ``call_sites`` differentiates
calls to user functions; ``arrays``, ``inplace``, ``shifts`` and
``element_writes`` handle NumPy values.
"""
