"""The frontend: Python source → SSA IR, and its text form."""

import corpus_scalar
import seed_ggml
import s2s_ad
from s2s_ad import ir


def ir_text(f) -> str:
    return ir.format_function(s2s_ad.lower(f))


def test_seed_ir(golden):
    text = ir_text(seed_ggml.f)
    assert "b = mul x x" in text and "y = mul a b" in text
    golden("seed_ggml.ir", text)


def test_every_reassignment_is_a_new_value():
    func = s2s_ad.lower(corpus_scalar.reassigned)
    names = [op.out.name for op in func.body.ops]
    assert len(names) == len(set(names))
    assert {"x_1", "x_2", "x_3"} <= set(names)
    ir.verify(func)


def test_nested_expressions_become_three_address_ops():
    func = s2s_ad.lower(corpus_scalar.deep_nesting)
    assert [op.prim for op in func.body.ops] == [
        "mul", "add", "math.sqrt", "math.log", "math.exp", "math.cos", "math.sin"]
    assert all(len(op.args) <= 2 for op in func.body.ops)


def test_augmented_assignment():
    prims = [op.prim for op in s2s_ad.lower(corpus_scalar.augmented).body.ops]
    assert prims == ["add", "mul", "mul", "sub", "add", "div", "pow"]


def test_tuple_unpacking_binds_before_assigning():
    func = s2s_ad.lower(corpus_scalar.tuple_swap)
    # a, b = b, a * b: the new a is the old b, the new b the product of the old ones.
    text = ir.format_function(func)
    assert "b_1 = mul a b" in text


def test_globals_resolve():
    func = s2s_ad.lower(corpus_scalar.aliases)
    assert [op.prim for op in func.body.ops] == ["math.cos", "math.sin", "math.exp", "mul", "add"]
    consts = s2s_ad.lower(corpus_scalar.constants)
    values = [a.value for op in consts.body.ops for a in op.args if isinstance(a, ir.Const)]
    assert 2.5 in values and -0.75 in values
    assert any(abs(v - 3.141592653589793) < 1e-15 for v in values)


def test_max_of_three_is_a_chain():
    func = s2s_ad.lower(corpus_scalar.maximum)
    assert [op.prim for op in func.body.ops].count("max") == 3


def test_kinds():
    func = s2s_ad.lower(corpus_scalar.rounding)
    kinds = {op.prim: op.out.kind for op in func.body.ops}
    assert kinds["math.floor"] == "int" and kinds["round"] == "int"
    assert kinds["mul"] == "float"


def test_ops_carry_locations():
    func = s2s_ad.lower(seed_ggml.f)
    lines = [op.loc.line for op in func.body.ops]
    assert lines == [9, 10]
    assert all(op.loc.file.endswith("seed_ggml.py") for op in func.body.ops)


def test_verify_catches_a_broken_graph():
    func = s2s_ad.lower(seed_ggml.f)
    func.body.ops.reverse()  # b is now used before it is defined
    try:
        ir.verify(func)
    except ir.IRError as exc:
        assert "used before definition" in str(exc)
    else:
        raise AssertionError("verify accepted a use before definition")


INTS_SRC = '''
def f(a, b, n: int, m):
    i = 0
    k = len(a) - 1
    h = k / 2
    j = i
    j = m
    i_tape = []
    x_tape = []
    y = np.zeros(len(a))
    z = np.copy(y)
    w = np.zeros_like(b) + 0.0
    v = np.ones(n)
    u = np.zeros(k + 1)
    u = np.zeros((2, n))
    while i < len(a):
        i_tape.append(i)
        x_tape.append(a[i])
        i = i + 1
    for t in range(n):
        i = i_tape.pop()
        x = x_tape.pop()
        q = i - 1
'''


def test_int_names_and_arrays_of_one_axis_from_the_text():
    """What int_names (s2s_ad/frontend/int_names.py) reads as ints: every
    binding an int (a stack of ints popped too); arrays of one axis: made
    from an int length, or copies of those; a shadowed `len` is no builtin."""
    import ast as ast_
    from s2s_ad.frontend.int_names import int_names, int_tapes, one_axis
    tree = ast_.parse(INTS_SRC).body[0]
    ints = int_names(tree)
    assert {"i", "k", "n", "t", "q"} <= ints
    assert not {"h", "j", "m", "x", "a"} & ints
    assert int_tapes(tree) == {"i_tape"}
    assert [v for v in "yzwvu" if one_axis(tree, v, ints)] == ["y", "z", "v"]
    shadowed = int_names(tree, {"len": lambda s: 0.5})
    assert "k" not in shadowed and "i" in shadowed
