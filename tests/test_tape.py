"""What the forward pass records for the reverse sweep: only the values the
sweep reads, one list per value, pushed once per iteration (and the header
says so). Gradients here are also checked against finite differences, so a
smaller tape can never hide a wrong one."""

import ast

import pytest

import s2s_ad
from s2s_ad import api

import cf_programs as P
from oracle import central_difference, close


def _code(fn, wrt=None, lengths=None):
    functions, _, _ = api.program(fn, wrt, lengths=lengths)
    return functions[0]


def _loops(fn, wrt=None, lengths=None):
    return {line: pushed for line, _, pushed in _code(fn, wrt, lengths).loops}


def _calls(source: str, method: str) -> int:
    return sum(1 for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)
               and n.attr == method)


def test_horner_pushes_one_float_per_iteration():
    assert list(_loops(P.horner, ("c", "x"), {"c": 5}).values()) == [["s"]]
    text = s2s_ad.gradient_source(P.horner, ("c", "x"), lengths={"c": 5})
    # a loop inside no other loop: one slot per iteration, written and read at i
    assert "s_tape = [None] * 5" in text
    assert "s_tape[i] = s" in text and "s = s_tape[i]" in text
    assert _calls(text, "append") == 0 and _calls(text, "pop") == 0
    assert "records 1 value per iteration (s)" in " ".join(text.split())


def test_running_sum_pushes_nothing():
    assert list(_loops(P.sum_list, ("c", "x"), {"c": 5}).values()) == [[]]
    text = s2s_ad.gradient_source(P.sum_list, ("c", "x"), lengths={"c": 5})
    assert _calls(text, "append") == 0 and "_tape" not in text
    assert "records 0 values per iteration" in " ".join(text.split())


def test_each_pushed_value_is_pushed_once_per_iteration_at_run_time():
    # Count pushes by running the generated code with a list type that counts.
    text = s2s_ad.gradient_source(P.horner, ("c", "x"), lengths={"c": 6})
    pushes = []

    class Counting(list):
        def __setitem__(self, k, v):
            pushes.append(v)
            super().__setitem__(k, v)

    assert "s_tape = [None] * 6" in text
    text = text.replace("s_tape = [None] * 6", "s_tape = Counting([None] * 6)")
    namespace = {"Counting": Counting}
    exec(compile(text, "<horner>", "exec"), namespace)
    c = [0.5, -1.0, 2.0, 0.25, 1.5, -0.75]
    dc, dx = namespace["grad_horner"](c, 0.9)
    assert len(pushes) == 6
    assert close(dx, central_difference(P.horner, [c, 0.9], 1))


def test_element_of_a_list_parameter_is_recomputed_not_pushed():
    loops = _loops(P.for_each_product, lengths={"xs": 4})
    assert list(loops.values()) == [["p"]]


def test_loop_invariant_values_are_not_pushed():
    # exp(y) * x is recomputed from values alive across the loop; nothing to push
    loops = _loops(P.loop_invariant_reads, ("x", "y"))
    assert list(loops.values()) == [[]] or all("x" not in p and "y" not in p
                                              for p in loops.values())


def test_branch_decision_is_recomputed_from_the_taped_value():
    # `if s > 1.0` inside the loop: s is taped anyway, the decision is recomputed.
    loops = _loops(P.loop_with_branch, ("x",))
    assert list(loops.values()) == [["s"]]
    text = s2s_ad.gradient_source(P.loop_with_branch, "x")
    assert "recomputed, not taped" in text


def test_inner_trip_count_is_taped_per_outer_iteration():
    loops = _loops(P.return_in_nested_loop, "x")
    outer = [p for p in loops.values() if any(name.startswith("n_j") for name in p)]
    assert outer, loops


def test_while_records_its_trip_count():
    text = s2s_ad.gradient_source(P.newton_sqrt)
    tree = ast.parse(text)
    assert any(isinstance(n, ast.AugAssign) and n.target.id == "n_iter" for n in ast.walk(tree))
    assert "for _ in range(n_iter)" in text


def test_straight_line_code_has_no_tape_lists():
    text = s2s_ad.gradient_source(P.branch_elif)
    assert "_tape" not in text and "append" not in text


def test_golden_horner(golden):
    golden("horner.grad.py", s2s_ad.gradient_source(
        __import__("horner").horner, ("c", "x"), lengths={"c": 4}))


def test_golden_newton(golden):
    golden("newton.grad.py", s2s_ad.gradient_source(__import__("newton").cube_root))


def test_examples_are_right():
    import horner, logistic_map, newton, piecewise
    dc, dx = s2s_ad.grad(horner.horner, ("c", "x"))([1.0, 2.0, 3.0], 0.5)
    assert dc == [0.25, 0.5, 1.0] and close(dx, 2 * 1.0 * 0.5 + 2.0)
    g = s2s_ad.grad(logistic_map.logistic, ("x", "r"))(0.2, 2.5, 6)
    assert close(g[0], central_difference(logistic_map.logistic, [0.2, 2.5, 6], 0))
    assert close(g[1], central_difference(logistic_map.logistic, [0.2, 2.5, 6], 1))
    assert close(s2s_ad.grad(newton.cube_root)(8.0), 1.0 / 12.0, rtol=1e-9)
    for x in (1.5, 0.5, -0.5):
        got = s2s_ad.grad(piecewise.piecewise, ("x", "a"))(x, 2.0)
        assert close(got[0], central_difference(piecewise.piecewise, [x, 2.0], 0))
        assert close(got[1], central_difference(piecewise.piecewise, [x, 2.0], 1))


def test_unread_items_become_a_length_check():
    """Horner indexes c[i] in its loop: no item of c is read by name, so the
    generated code checks c's length instead of unpacking 100 dead names,
    and a list of another length is refused at run time."""
    import horner
    import s2s_ad
    from oracle import close, fd_gradient

    text = s2s_ad.gradient_source(horner.horner, ("c", "x"), lengths={"c": 100})
    assert "c_0" not in text and "if len(c) != 100:" in text
    g = s2s_ad.grad(horner.horner, wrt=("c", "x"), lengths={"c": 5})
    c = [0.5, -1.0, 0.25, 2.0, -0.75]
    dc, dx = g(c, 0.8)
    want = fd_gradient(lambda x: horner.horner(c, x), [0.8], [0])
    assert close(dx, want[0])
    with pytest.raises(ValueError, match="c must have 5 items"):
        g([1.0, 2.0], 0.8)
