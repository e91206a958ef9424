"""The front end: a Python function's source to SSA IR.

``source`` finds and parses the function; ``lowering`` turns its AST into
:mod:`s2s_ad.ir` (with ``control`` for branches and loops, ``numpy`` for
arrays, ``structures`` for tuples and lists, ``aliasing`` for arrays changed
in place); ``calls`` collects the user functions it reaches and ``inline``
copies the small ones into their callers.
"""
