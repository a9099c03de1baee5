"""The port's plan of a top-level loop (``Statement.loop``): what parity needs to run it
iteration by iteration, found without parity parsing anything."""

import textwrap

import msmagic


def loops(cell: str):
    r = msmagic.port(textwrap.dedent(cell).lstrip("\n"))
    return r, [s.loop for s in r.statements if s.loop is not None]


def span_text(code: str, span) -> str:
    lines = code.split("\n")
    line, col, end_line, end_col = span
    if line == end_line:
        return lines[line - 1][col:end_col]
    return "\n".join([lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]])


def test_hand_written_update_loop_carries_the_weights():
    r, (loop,) = loops("""
        import torch
        x, y = torch.randn(8, 5), torch.randn(8, 1)
        w = torch.randn(5, 1)
        for t in range(100):
            y_pred = x.mm(w)
            grad_w = 2.0 * x.t().mm(y_pred - y)
            w -= 1e-3 * grad_w
    """)
    assert loop.kind == "for" and loop.carried == ("w",)
    assert span_text(r.source, loop.torch_span) == "range(100)"
    assert span_text(r.code, loop.ms_span) == "range(100)"


def test_carried_names_follow_evaluation_order():
    _, (loop,) = loops("""
        import torch
        for step in range(3):
            h = model(x, h)          # read, then bound: carried
            a, b = b, a + b          # both read first
            total += loss.item()     # augmented assignment reads
            fresh = torch.ones(2)    # bound before any read: not carried
            fresh = fresh * 2
            grid[0] = fresh          # an item assignment binds no name
            squares = [k * k for k in range(3)]
            k = 1                    # the comprehension's k is its own
            step = step + 1          # the loop's target is bound by the loop
    """)
    assert loop.carried == ("a", "b", "h", "total")


def test_while_loop_condition_span_and_its_reads():
    r, (loop, *_) = loops("""
        import torch
        loss = torch.tensor(10.0)
        while loss.item() > 1e-3 and (
                True):
            loss = loss / 2
        s = ""
        while "é" + s != "ééé": s = s + "é"
        while "é" + s != "éé":
            s = s + "é"
    """)
    assert loop.kind == "while" and loop.carried == ("loss",)
    assert span_text(r.source, loop.torch_span) == "loss.item() > 1e-3 and (\n        True)"
    # ast's columns are UTF-8 bytes; the plan's are characters
    wide = [s.loop for s in r.statements if s.loop is not None and s.loop.carried == ("s",)]
    assert [span_text(r.source, lp.torch_span) for lp in wide] == ['"é" + s != "ééé"', '"é" + s != "éé"']


def test_training_loop_span_is_found_after_the_definitions_the_port_hoists():
    r, (loop,) = loops("""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        running = 0.0
        for xb, yb in zip(xs, ys):
            loss = ((model(xb) - yb) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
    """)
    assert loop.carried == ("running",)
    assert "def forward_fn" in r.code and span_text(r.code, loop.ms_span) == "zip(xs, ys)"
    assert r.code.split("\n")[loop.ms_span[0] - 1].startswith("for xb, yb in zip(xs, ys)")


def test_loops_with_else_or_inside_blocks_get_no_plan():
    _, found = loops("""
        import torch
        for i in range(3):
            w = w + 1
        else:
            pass
        if True:
            for i in range(3):
                w = w + 1
    """)
    assert found == []


def test_a_cell_without_torch_keeps_its_loop_plan():
    r, (loop,) = loops("""
        for t in range(5):
            w1 -= 0.1 * grad_w1
    """)
    assert loop.carried == ("w1",) and loop.ms_span == loop.torch_span


def test_the_one_loop_of_a_main_block_is_found_and_several_are_not():
    import ast

    from msmagic.engine.plan import loop_facts

    one = 'import torch\nif __name__ == "__main__":\n    w = 1\n    for i in range(3):\n        w = w * 2\n    print(w)\n'
    # the loop's own lines, and what an iteration reads from outside it (w: carried;
    # range; not i, which the loop binds)
    assert loop_facts(ast.parse(one), one) == {1: ("for", ("w",), (4, 13, 4, 21), (4, 5), frozenset({"w", "range"}))}
    two = one.replace("    print(w)\n", "    for j in range(2):\n        w += 1\n")
    assert loop_facts(ast.parse(two), two) == {}
    other = one.replace('__name__ == "__main__"', "flag")
    assert loop_facts(ast.parse(other), other) == {}
