"""Formatting survives the port byte for byte: comments, blank lines, odd spacing,
multi-line calls, strings that mention torch, tabs, CRLF line ends, a missing final
newline and non-ASCII text. Only the rewritten expressions change."""

from tests.fast.codemod import assert_ports


def test_comments_blank_lines_and_spacing_kept():
    assert_ports(
        """
            # A small model
            import torch  # the framework
            import torch.nn as nn

            # layers
            fc = nn.Linear(4, 2)  # a dense layer
            x = torch.ones(3, 4)   # odd spacing kept


            y = fc(x)
        """,
        """
            # A small model
            import mindspore  # the framework
            import mindspore.nn as nn

            # layers
            fc = nn.Dense(4, 2)  # a dense layer
            x = mindspore.ops.ones((3, 4))   # odd spacing kept


            y = fc(x)
        """,
        edits={"FUN009", "IMP001", "LAY001"},
    )


def test_multi_line_call_keeps_its_layout_and_comments():
    assert_ports(
        """
            import torch.nn as nn
            model = nn.Sequential(
                nn.Linear(4, 8),  # hidden
                nn.ReLU(),
                nn.Linear(8, 2),
            )
        """,
        """
            import mindspore.nn as nn
            model = nn.SequentialCell(
                nn.Dense(4, 8),  # hidden
                nn.ReLU(),
                nn.Dense(8, 2),
            ).set_train()
        """,
        edits={"CEL003", "FUN013", "IMP001", "LAY001", "MOD003"},
    )


def test_wrapped_arguments_keep_their_lines():
    assert_ports(
        """
            import torch
            y = torch.cat(
                [a, b],
                dim=1,
            )
        """,
        """
            import mindspore
            y = mindspore.ops.cat(
                [a, b],
                axis=1,
            )
        """,
        edits={"FUN002", "IMP001"},
    )


def test_strings_and_docstrings_mentioning_torch_are_untouched():
    assert_ports(
        """
            import torch
            msg = "torch.nn.Linear(4, 2) is a layer"
            def make(n):
                '''Return n ones (uses torch.ones).'''
                # build
                return torch.ones(n)
        """,
        """
            import mindspore
            msg = "torch.nn.Linear(4, 2) is a layer"
            def make(n):
                '''Return n ones (uses torch.ones).'''
                # build
                return mindspore.ops.ones(n)
        """,
        edits={"FUN009", "IMP001"},
    )


def test_class_docstring_comments_and_trailing_comment_on_def():
    assert_ports(
        """
            import torch.nn as nn

            class Net(nn.Module):
                '''A net.'''

                def __init__(self):
                    super().__init__()
                    # one layer
                    self.fc = nn.Linear(2, 2)

                def forward(self, x):  # the forward pass
                    return self.fc(x)
        """,
        """
            import mindspore.nn as nn

            class Net(nn.Cell):
                '''A net.'''

                def __init__(self):
                    super().__init__()
                    # one layer
                    self.fc = nn.Dense(2, 2)
                    self.set_train()

                def construct(self, x):  # the forward pass
                    return self.fc(x)
        """,
        edits={"CEL001", "CEL002", "IMP001", "LAY001", "MOD001"},
    )


def test_semicolons_and_backslash_continuation():
    assert_ports(
        """
            import torch
            a = torch.ones(2); b = torch.zeros(2)
            c = torch.ones(2) + \\
                torch.zeros(2)
        """,
        """
            import mindspore
            a = mindspore.ops.ones(2); b = mindspore.ops.zeros(2)
            c = mindspore.ops.ones(2) + \\
                mindspore.ops.zeros(2)
        """,
        edits=["IMP001", "FUN009", "FUN009", "FUN009", "FUN009"],
    )


def test_f_string_expression_is_ported():
    assert_ports(
        """
            import torch
            x = torch.ones(2)
            print(f'{x.size(0)} items')
        """,
        """
            import mindspore
            x = mindspore.ops.ones(2)
            print(f'{x.shape[0]} items')
        """,
        edits={"DAT006", "FUN009", "IMP001"},
    )


def test_non_ascii_comments_kept():
    assert_ports(
        """
            import torch
            # héllo wörld ✓
            x = torch.ones(2)  # ünïcode
        """,
        """
            import mindspore
            # héllo wörld ✓
            x = mindspore.ops.ones(2)  # ünïcode
        """,
        edits={"FUN009", "IMP001"},
    )


def test_tab_indentation_kept():
    assert_ports(
        "import torch\nif True:\n\tx = torch.zeros(2)\n",
        "import mindspore\nif True:\n\tx = mindspore.ops.zeros(2)\n",
        edits={"FUN009", "IMP001"},
        dedent_text=False,
    )


def test_crlf_line_ends_kept():
    assert_ports(
        "import torch\r\nimport torch.nn as nn\r\nx = nn.Linear(2, 3)\r\n",
        "import mindspore\r\nimport mindspore.nn as nn\r\nx = nn.Dense(2, 3)\r\n",
        edits={"IMP001", "LAY001"},
        dedent_text=False,
    )


def test_missing_final_newline_not_added():
    assert_ports(
        "import torch\nx = torch.zeros(2, 3)",
        "import mindspore\nx = mindspore.ops.zeros((2, 3))",
        edits={"FUN009", "IMP001"},
        dedent_text=False,
    )


def test_trailing_blank_lines_kept():
    assert_ports(
        "import torch\nx = torch.ones(2)\n\n\n",
        "import mindspore\nx = mindspore.ops.ones(2)\n\n\n",
        edits={"FUN009", "IMP001"},
        dedent_text=False,
    )


def test_removed_statement_leaves_its_neighbours_alone():
    assert_ports(
        """
            import torch

            # switch autograd off for inference
            torch.set_grad_enabled(False)
            y = x * 2  # kept
        """,
        """
            import mindspore

            # switch autograd off for inference
            y = x * 2  # kept
        """,
        edits={"IMP001", "NGR003"},
    )
