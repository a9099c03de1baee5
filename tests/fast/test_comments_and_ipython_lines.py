"""IPython lines and comments stay with their statements through every rewrite, and
what libcst itself would drop (a byte order mark, form feeds, a last ``\\r``, indented
comment lines ending the cell) comes back byte for byte. Pure text: no framework is
imported."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

import msmagic
from msmagic.engine.ipython import mask
from tests.fast.codemod import assert_ports, dedent, finding_ids


def assert_ports_ipython(before: str, after: str, *, dedent_text: bool = True):
    """Port ``before`` (holding IPython lines) and assert the output is ``after``, is
    Python once its IPython lines are set aside, and ports to itself."""
    if dedent_text:
        before, after = dedent(before), dedent(after)
    result = msmagic.port(before)
    assert result.code == after, result.code
    ast.parse(mask(result.code).text)
    assert msmagic.port(after).code == after
    return result


# ----------------------------------------------------------------------------- IPython lines


def test_ipython_lines_in_an_unwrapped_no_grad_block_take_the_new_indentation():
    assert_ports_ipython(
        """
            import torch
            x = torch.ones(3)
            with torch.no_grad():
                %time y = x * 2
                !ls
                %matplotlib inline
                z = %env HOME
                w = x.sum()
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            %time y = x * 2
            !ls
            %matplotlib inline
            z = %env HOME
            w = x.sum()
        """,
    )


def test_ipython_lines_in_a_nested_unwrapped_block_keep_the_enclosing_indentation():
    assert_ports_ipython(
        """
            import torch
            for i in range(2):
                with torch.no_grad():
                    !ls
                    y = torch.ones(2)
                    x?
        """,
        """
            import mindspore
            for i in range(2):
                !ls
                y = mindspore.ops.ones(2)
                x?
        """,
    )


def test_timeit_stays_on_the_statement_it_timed_when_that_statement_is_rewritten():
    # the timed line and the line after it both start with "torch": the prefix used to
    # go to the line after, which kept its first token
    assert_ports_ipython(
        """
            import torch
            x = torch.ones(3)
            %timeit torch.ones(3).sum()
            y = torch.special.airy_ai(x)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            x = mindspore.ops.ones(3)
            %timeit mindspore.ops.ones(3).sum()
            y = torch.special.airy_ai(x)  # msmagic: GEN001 torch.special.airy_ai has no known MindSpore mapping; left as PyTorch
        """,
    )


def test_timed_statement_with_its_own_comment_and_a_finding_comment():
    assert_ports_ipython(
        """
            import torch
            x = torch.ones(3)
            %time y = torch.special.airy_ai(x)  # slow
            %prun -l 4 z = torch.ones(3)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            x = mindspore.ops.ones(3)
            %time y = torch.special.airy_ai(x)  # slow  # msmagic: GEN001 torch.special.airy_ai has no known MindSpore mapping; left as PyTorch
            %prun -l 4 z = mindspore.ops.ones(3)
        """,
    )


def test_timed_statement_inside_an_unwrapped_block_and_a_timed_with():
    assert_ports_ipython(
        """
            import torch
            with torch.no_grad():
                %time y = torch.ones(2).view(-1)
            %time with torch.no_grad(): z = torch.zeros(3)
        """,
        """
            import mindspore
            %time y = mindspore.ops.ones(2).view(-1)
            %time z = mindspore.ops.zeros(3)
        """,
    )


def test_timed_setup_statement_of_a_cell_magic_stays_on_the_first_line():
    assert_ports_ipython(
        """
            %%timeit -n 3 x = torch.ones(3)
            import torch
            y = x.sum()
        """,
        """
            %%timeit -n 3 x = mindspore.ops.ones(3)
            import mindspore
            y = x.sum()
        """,
    )


def test_backslash_continued_ipython_lines_are_kept_as_written():
    """IPython joins a shell or magic line ending in a backslash with the next line:
    the continuation lines are part of it, not Python (they used to be refused as an
    unexpected indent)."""
    assert_ports_ipython(
        "!pip install \\\n  --quiet numpy\nimport torch\nx = torch.ones(2)\n",
        "!pip install \\\n  --quiet numpy\nimport mindspore\nx = mindspore.ops.ones(2)\n",
        dedent_text=False,
    )
    assert_ports_ipython(
        "files = !ls \\\r\n   -l\r\nimport torch\r\nx = torch.zeros(1)\r\n",
        "files = !ls \\\r\n   -l\r\nimport mindspore\r\nx = mindspore.ops.zeros(1)\r\n",
        dedent_text=False,
    )


def test_backslash_continued_ipython_lines_move_with_an_unwrapped_block():
    assert_ports_ipython(
        "import torch\nwith torch.no_grad():\n    %pip install \\\n        numpy \\\n"
        "      scipy\n    y = torch.zeros(2)\n",
        "import mindspore\n%pip install \\\n        numpy \\\n      scipy\n"
        "y = mindspore.ops.zeros(2)\n",
        dedent_text=False,
    )


def test_the_timing_marker_never_reaches_the_output():
    r = msmagic.port("import torch\n%time a = torch.ones(2)\n%time b = 1  # note\n")
    assert "__msmagic" not in r.code
    assert r.code == "import mindspore\n%time a = mindspore.ops.ones(2)\n%time b = 1  # note\n"


# ------------------------------------------------------ line magics in a rewritten training step

STEP = """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 2)
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(3, 4)
    y = torch.zeros(3, 2)
"""
STEP_OUT = """
    import mindspore
    import mindspore.nn as nn
    model = nn.Dense(4, 2)
    criterion = nn.MSELoss()
    opt = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
    x = mindspore.ops.ones((3, 4))
    y = mindspore.ops.zeros((3, 2))
"""


def assert_ports_step(body: str, body_after: str):
    """:func:`assert_ports_ipython` of a training cell: the model, loss and optimizer,
    then ``body``."""
    return assert_ports_ipython(dedent(STEP) + dedent(body), dedent(STEP_OUT) + dedent(body_after),
                                dedent_text=False)


def test_a_timed_forward_statement_times_the_step_call_where_its_names_stay_visible():
    """``%time loss = ...`` moved into forward_fn: IPython runs it in a copy of the
    function's locals, so ``return loss`` raised NameError. The timing goes on the step
    call, which binds ``loss`` in the loop; the user's comment stays on its statement."""
    r = assert_ports_step("""
        for epoch in range(3):
            opt.zero_grad()
            out = model(x)
            %time loss = criterion(out, y)  # the loss
            loss.backward()
            opt.step()
    """, """
        def forward_fn():
            out = model(x)
            loss = criterion(out, y)  # the loss
            return loss, out
        grad_fn = mindspore.value_and_grad(forward_fn, None, opt.parameters, has_aux=True)
        for epoch in range(3):
            %time (loss, out), grads = grad_fn()
            opt(grads)
    """)
    step = next(e for e in r.edits if e.rule_id == "TRN001" and e.api == "loss.backward()")
    assert "%time on `loss = criterion(out, y)` times the step call" in step.detail
    assert not r.unsupported


def test_a_timed_backward_times_the_step_call_and_a_second_timing_is_dropped():
    r = assert_ports_step("""
        for epoch in range(3):
            opt.zero_grad()
            %prun -l 4 out = model(x)
            %time loss = criterion(out, y)
            %time loss.backward()  # slow
            opt.step()
    """, """
        def forward_fn():
            out = model(x)
            loss = criterion(out, y)
            return loss, out
        grad_fn = mindspore.value_and_grad(forward_fn, None, opt.parameters, has_aux=True)
        for epoch in range(3):
            %prun -l 4 (loss, out), grads = grad_fn()
            # slow
            opt(grads)
    """)
    step = next(e for e in r.edits if e.rule_id == "TRN001" and e.api == "loss.backward()")
    assert "the timing of `loss = criterion(out, y)`, `loss.backward()` is dropped" in step.detail


def test_a_timed_step_at_the_top_level_of_a_cell_times_the_step_call():
    assert_ports_step("""
        opt.zero_grad()
        out = model(x)
        %time loss = criterion(out, y)
        loss.backward()  # backprop
        opt.step()
    """, """
        def forward_fn():
            out = model(x)
            loss = criterion(out, y)
            return loss, out
        grad_fn = mindspore.value_and_grad(forward_fn, None, opt.parameters, has_aux=True)
        %time (loss, out), grads = grad_fn()  # backprop
        opt(grads)
    """)
    # the timed backward() at the top level: its line became the step call, timing and all
    assert_ports_step("""
        opt.zero_grad()
        loss = criterion(model(x), y)
        %time loss.backward()
        opt.step()
    """, """
        def forward_fn():
            loss = criterion(model(x), y)
            return loss
        grad_fn = mindspore.value_and_grad(forward_fn, None, opt.parameters)
        %time loss, grads = grad_fn()
        opt(grads)
    """)


def test_a_timed_backward_in_a_function_loses_its_timing_not_its_names():
    """In a function, ``%time`` on the step call would bind nothing the function sees:
    the timing of backward() is dropped (the edit says so), the step still runs."""
    r = assert_ports_step("""
        def train(n):
            for epoch in range(n):
                opt.zero_grad()
                loss = criterion(model(x), y)
                %time loss.backward()
                opt.step()
    """, """
        def train(n):
            def forward_fn():
                loss = criterion(model(x), y)
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, opt.parameters)
            for epoch in range(n):
                loss, grads = grad_fn()
                opt(grads)
    """)
    step = next(e for e in r.edits if e.rule_id == "TRN001" and e.api == "loss.backward()")
    assert step.detail.endswith("the timing of `loss.backward()` is dropped: in a function, timing the step "
                                "call would lose the names it binds")


@pytest.mark.parametrize("magic, where, body", [
    ("%timeit -n 3", "loop", "for epoch in range(3):\n    opt.zero_grad()\n    {m}loss = criterion(model(x), y)\n"
     "    loss.backward()\n    opt.step()\n"),
    ("%timeit", "loop", "for epoch in range(3):\n    opt.zero_grad()\n    loss = criterion(model(x), y)\n"
     "    {m}loss.backward()\n    opt.step()\n"),
    ("%time %timeit", "loop", "for epoch in range(3):\n    opt.zero_grad()\n    {m}loss = criterion(model(x), y)\n"
     "    loss.backward()\n    opt.step()\n"),
    ("%time", "function", "def train():\n    opt.zero_grad()\n    {m}loss = criterion(model(x), y)\n"
     "    loss.backward()\n    opt.step()\n"),
    ("%prun", "function", "def train():\n    opt.zero_grad()\n    loss = criterion(model(x), y)\n"
     "    {m}loss.backward()\n    opt.step()\n"),
])
def test_a_timing_that_cannot_follow_its_statement_leaves_the_step_flagged(magic, where, body):
    """%timeit binds nothing (and a timed backward() adds its gradients up); %time and
    %prun in a function bind nothing the function sees, in PyTorch too: the step is not
    rewritten, the timed line stays as written and backward() carries the finding."""
    source = dedent(STEP) + body.format(m=magic + " ")
    r = msmagic.port(source)
    timed = next(line for line in source.splitlines() if line.lstrip().startswith(magic + " "))
    assert timed in r.code.splitlines() or timed + "  # msmagic: TRN004 " + (
        f"%{magic.split()[-1].lstrip('%')} in the training step") in r.code
    name = "%timeit" if "timeit" in magic else magic
    back = next(f for f in r.unsupported if f.api == ".backward()")
    assert back.rule_id == "TRN004" and back.reason.startswith(f"{name} on `")
    assert f"# msmagic: TRN004 {name} in the training step" in r.code
    assert "grad_fn" not in r.code and "forward_fn" not in r.code
    assert msmagic.port(r.code).code == r.code


def test_timing_marks_name_the_magics_and_come_off_comments():
    from msmagic.engine.ipython import timing_marks, without_timing_marks

    m = mask("import torch\nfor i in range(2):\n    %time %timeit -n 3 y = f(x)  # slow\n    %prun z = 1\n")
    assert [magics for _, magics in timing_marks(m.text)] == [("time", "timeit"), ("prun",)]
    first, second = (mark for mark, _ in timing_marks(m.text))
    assert without_timing_marks(f"# slow  {first}  # msmagic: X") == "# slow  # msmagic: X"
    assert without_timing_marks(f"# {second}") == ""


# ----------------------------------------------------------------------------- comments


def test_comments_after_the_body_of_an_unwrapped_no_grad_block_are_kept():
    assert_ports(
        """
            import torch
            x = torch.ones(3)
            with torch.no_grad():
                y = x * 2
                # trailing one

                # trailing two
            z = 1
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            y = x * 2
            # trailing one

            # trailing two
            z = 1
        """,
        edits={"IMP001", "FUN009", "NGR001"},
    )


def test_comments_after_a_nested_no_grad_body_stay_in_the_enclosing_block():
    assert_ports(
        """
            import torch
            x = torch.ones(3)
            for i in range(2):
                with torch.no_grad():
                    y = x * 2
                    # end of the with
            for i in range(2):
                with torch.no_grad():
                    y = x * 2
                    # before the next statement
                z = 1
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            for i in range(2):
                y = x * 2
                # end of the with
            for i in range(2):
                y = x * 2
                # before the next statement
                z = 1
        """,
        edits={"IMP001", "FUN009", "NGR001"},
    )


def test_comments_on_removed_grad_mode_decorators_are_kept():
    assert_ports(
        """
            import functools
            import torch
            # above
            @torch.no_grad()  # on it
            # between
            @functools.cache
            def f(x):
                return torch.ones(2)

            @functools.cache
            @torch.inference_mode()  # last one
            # after
            def g(x):
                return x
        """,
        """
            import functools
            import mindspore
            # above
            # on it
            # between
            @functools.cache
            def f(x):
                return mindspore.ops.ones(2)

            @functools.cache
            # last one
            # after
            def g(x):
                return x
        """,
        edits={"IMP001", "FUN009", "NGR002"},
    )


def test_comments_on_removed_staticmethod_decorators_of_a_custom_function_are_kept():
    r = msmagic.port(dedent(
        """
            import torch
            class MyReLU(torch.autograd.Function):
                # the forward pass
                @staticmethod  # no self
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x.clamp(min=0)

                # the backward pass
                @staticmethod  # also none
                # returns one gradient
                def backward(ctx, grad_output):
                    x, = ctx.saved_tensors
                    return grad_output * (x > 0).float()
        """))
    assert "@staticmethod" not in r.code
    lines = [l.strip() for l in r.code.splitlines()]
    construct, bprop = lines.index("def construct(self, x):"), next(
        i for i, l in enumerate(lines) if l.startswith("def bprop("))
    assert lines[construct - 2: construct] == ["# the forward pass", "# no self"]
    assert lines[bprop - 3: bprop] == ["# the backward pass", "# also none", "# returns one gradient"]
    assert msmagic.port(r.code).code == r.code


LOOP = """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    x = torch.ones(3, 4)
    y = torch.zeros(3, 2)
    for epoch in range(2):
        # reset the gradients
        opt.zero_grad()
        out = model(x)
        loss = loss_fn(out, y)
        # backprop
        loss.backward()  # on backward
        # take a step
        opt.step()
        # after the step
"""


def test_comments_of_the_zero_grad_and_backward_lines_move_to_the_kept_statements():
    r = msmagic.port(dedent(LOOP))
    body = r.code.split("for epoch in range(2):\n")[1]
    assert body == dedent("""
        # reset the gradients
        (loss, out), grads = grad_fn()
        # backprop
        # on backward
        # take a step
        opt(grads)
        # after the step
    """).replace("\n", "\n    ").join(["    ", ""]).rstrip(" ")
    assert msmagic.port(r.code).code == r.code


def test_comments_of_a_top_level_zero_grad_and_backward_are_kept():
    r = msmagic.port(dedent("""
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.ones(3, 4)
        # zero first
        opt.zero_grad()  # clear
        loss = model(x).sum()
        loss.backward()  # backprop
        # step
        opt.step()
    """))
    lines = r.code.splitlines()
    assert lines[5:8] == ["# zero first", "# clear", "def forward_fn():"]
    assert "loss, grads = grad_fn()  # backprop" in lines
    assert lines[-2:] == ["# step", "opt(grads)"]


def test_comments_of_a_removed_no_op_step_in_a_block_move_down():
    r = msmagic.port(dedent("""
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(3):
            # nothing to apply
            opt.step()  # no backward
            print(i)
    """))
    assert r.code.splitlines()[-4:] == [
        "for i in range(3):", "    # nothing to apply", "    # no backward", "    print(i)"]


# ----------------------------------------------------------------------------- bytes libcst drops


@pytest.mark.parametrize("source, libcst_gives", [
    ("\ufeffx = 1\n", "x = 1\n"),
    ("x = 1\n\x0cy = 2\n", "x = 1\ny = 2\n"),
    ("x = 1\ny = 2\r", "x = 1\ny = 2"),
    ("x = 1\n    # a\n    # b\n", "x = 1\n    # b\n"),
    ("if x:\n    y = 1\n  # a\n  # b", "if x:\n    y = 1\n  # b"),
    ("x = 1\n\n \n", "x = 1\n \n"),
    ("pass  # a\\\n", "pass  # a\\"),
])
def test_libcst_drops_these_bytes_by_itself(source, libcst_gives):
    """What the port must not inherit (libcst 1.9): if libcst is fixed, this fails and
    the protection in ``engine.ipython`` can go."""
    assert cst.parse_module(source).code == libcst_gives


@pytest.mark.parametrize("source, expected", [
    ("\ufeffimport torch\nx = torch.ones(2)\n", "\ufeffimport mindspore\nx = mindspore.ops.ones(2)\n"),
    ("import torch\r\nx = torch.ones(2)\r\ny = 1\r", "import mindspore\r\nx = mindspore.ops.ones(2)\r\ny = 1\r"),
    ("import torch\n\x0cy = 3\nx = torch.ones(2)\n\x0c\n", "import mindspore\n\x0cy = 3\nx = mindspore.ops.ones(2)\n\x0c\n"),
    ("import torch\nif c:\n\x0c    x = torch.ones(2)\n  \x0c    y = 1\n",
     "import mindspore\nif c:\n    x = mindspore.ops.ones(2)\n  \x0c    y = 1\n"),
    ("import torch\nx = torch.ones(2)\n    # a\n    # b", "import mindspore\nx = mindspore.ops.ones(2)\n    # a\n    # b"),
    ("import torch\nif c:\n    x = torch.ones(2)\n  # a\n\n  # b\r\n",
     "import mindspore\nif c:\n    x = mindspore.ops.ones(2)\n  # a\n\n  # b\r\n"),
    ("import torch\nx = torch.ones(2)\n\n \n", "import mindspore\nx = mindspore.ops.ones(2)\n\n \n"),
    ("import torch\nx = torch.ones(2)  # a\\\r\n", "import mindspore\nx = mindspore.ops.ones(2)  # a\\\r\n"),
    ("import torch\ns = '''\n\x0cy'''\nx = torch.ones(2)\n", "import mindspore\ns = '''\n\x0cy'''\nx = mindspore.ops.ones(2)\n"),
    ("\ufeff%time x = torch.ones(2)\r\n\x0cy = 1\r\nimport torch\r\n    # a\r\n    # b\r",
     "\ufeff%time x = mindspore.ops.ones(2)\r\n\x0cy = 1\r\nimport mindspore\r\n    # a\r\n    # b\r"),
])
def test_the_port_keeps_what_libcst_drops(source, expected):
    r = msmagic.port(source)
    assert r.code == expected
    assert msmagic.port(r.code).code == r.code


def test_a_cell_with_a_byte_order_mark_and_no_torch_is_left_as_it_is():
    source = "\ufeffx = 1\n\x0cy = 2\n    # a\n    # b\n"
    assert msmagic.port(source).code == source


def test_line_positions_are_those_of_the_cell_with_its_tail_set_aside():
    r = msmagic.port("import torch\nx = torch.ones(2)\n    # a\n    # b\n")
    assert [(e.rule_id, e.before, e.after) for e in r.edits] == [
        ("IMP001", (1, 1), (1, 1)), ("FUN009", (2, 2), (2, 2))]
    assert not finding_ids(r)


# ----------------------------------------------------------------------------- comments in rewritten calls


def test_comments_in_a_call_whose_arguments_the_port_packs_or_drops_are_kept():
    """``torch.zeros(3,  # rows`` packs its sizes into one tuple, ``device=`` goes: their
    comments used to go with them."""
    assert_ports(
        """
            import torch
            x = torch.ones(2)
            z = torch.zeros(3,  # rows
                            4)
            a = torch.zeros_like(x,
                                 device="cpu",  # where
                                 dtype=torch.float32)
            b = torch.ones(4, device="cpu",  # where
                           dtype=torch.float32)
            c = torch.zeros_like(x,
                                 device="cpu"  # last
                                 )
            layer = torch.nn.Linear(2,  # in
                                    3, bias=True,  # with a bias
                                    device="cpu")
        """,
        """
            import mindspore
            x = mindspore.ops.ones(2)
            z = mindspore.ops.zeros((3,  # rows
                            4))
            a = mindspore.ops.zeros_like(x,
                                 # where
                                 dtype=mindspore.float32)
            b = mindspore.ops.ones(4,  # where
                           dtype=mindspore.float32)
            c = mindspore.ops.zeros_like(x,
                                 # last
                                 )
            layer = mindspore.nn.Dense(2,  # in
                                    3, has_bias=True,  # with a bias
                                    )
        """,
        edits={"IMP001", "FUN009", "FUN017", "FUN001", "DAT005", "DEV003", "LAY001"},
    )


def test_comments_in_a_call_a_rule_replaces_with_another_expression_go_above_it():
    """``x.size(  # rows`` becomes ``x.shape[0]``, ``x.cuda(  # c`` becomes ``x``: the new
    expression has nowhere to hold the comment, so it goes on a line of its own above the
    statement (in a block too), never lost."""
    assert_ports(
        """
            import torch
            x = torch.ones(3, 4)
            n = x.size(  # rows
                0)
            y = x.cuda(  # to the GPU
            )
            def f(x):
                for i in range(2):
                    z = x.detach(  # no grad
                    ).cpu().numpy()  # as NumPy
                return z
            w = x.to('cpu',  # where
                     torch.float64)
        """,
        """
            import mindspore
            x = mindspore.ops.ones((3, 4))
            # rows
            n = x.shape[0]
            # to the GPU
            y = x
            def f(x):
                for i in range(2):
                    # no grad
                    z = x.asnumpy()  # as NumPy
                return z
            # where
            w = x.to(mindspore.float64)
        """,
        edits={"IMP001", "FUN009", "DAT006", "DEV004", "DEV005", "DAT005"},
    )
