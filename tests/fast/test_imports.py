"""Imports (IMP001): PyTorch imports become MindSpore imports; others are left alone."""

import pytest

from tests.fast.codemod import assert_ports, dedent, port


def test_import_torch():
    assert_ports(
        """
            import torch
            x = torch.ones(2)
        """,
        """
            import mindspore
            x = mindspore.ops.ones(2)
        """,
        edits={"FUN009", "IMP001"},
    )


def test_import_nn_and_functional_aliases():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            y = F.relu(torch.zeros(3))
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import mindspore.ops as F
            y = F.relu(mindspore.ops.zeros(3))
        """,
        edits={"FUN001", "FUN009", "IMP001"},
    )


def test_from_torch_import_nn():
    assert_ports(
        """
            from torch import nn
            layer = nn.Linear(2, 3)
        """,
        """
            from mindspore import nn
            layer = nn.Dense(2, 3)
        """,
        edits={"IMP001", "LAY001"},
    )


def test_from_torch_import_optim_unused_is_removed():
    assert_ports(
        """
            import torch
            from torch import optim
            x = torch.zeros(2)
        """,
        """
            import mindspore
            x = mindspore.ops.zeros(2)
        """,
        edits={"FUN009", "IMP001"},
    )


def test_import_torch_optim_as_optim_is_removed():
    assert_ports(
        """
            import torch.nn as nn
            import torch.optim as optim
            model = nn.Linear(4, 2)
            opt = optim.SGD(model.parameters(), lr=0.1)
        """,
        """
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            opt = nn.SGD(model.trainable_params(), learning_rate=0.1)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_non_torch_imports_kept():
    assert_ports(
        """
            import os
            import numpy as np
            import torch
            from collections import OrderedDict
            x = torch.tensor(np.zeros(3))
        """,
        """
            import os
            import numpy as np
            import mindspore
            from collections import OrderedDict
            x = mindspore.Tensor(np.zeros(3))
        """,
        edits={"DAT001", "IMP001"},
    )


def test_import_torch_only():
    assert_ports(
        """
            import torch
        """,
        """
            import mindspore
        """,
        edits={"IMP001"},
    )


def test_from_torch_utils_data_import():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset
            ds = TensorDataset(torch.arange(4.0))
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset
            ds = TensorDataset(mindspore.ops.arange(4.0))
        """,
        edits={"FUN001", "IMP001", "LDR001"},
    )


def test_from_torch_distributions_import():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal
            d = Normal(torch.zeros(2), torch.ones(2))
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal
            d = Normal(mindspore.ops.zeros(2), mindspore.ops.ones(2))
        """,
        edits={"DST001", "FUN009", "IMP001"},
    )


def test_import_torch_nn_functional_without_alias():
    assert_ports(
        """
            import torch
            import torch.nn.functional
            y = torch.nn.functional.relu(torch.ones(2))
        """,
        """
            import mindspore
            import mindspore.ops
            y = mindspore.ops.relu(mindspore.ops.ones(2))
        """,
        edits={"FUN001", "FUN009", "IMP001"},
    )


def test_no_torch_no_change():
    assert_ports(
        """
            import math
            x = math.sqrt(2.0)
        """,
        """
            import math
            x = math.sqrt(2.0)
        """,
        edits=set(),
    )


def test_generated_code_does_not_use_an_alias_the_cell_imports_further_down():
    """``import torch.nn.functional as F`` comes after the update (a tutorial imports as it
    goes): the ported update cannot spell ``mindspore.ops`` as ``F`` there, where F is not
    yet bound; after the import it can."""
    result = port(dedent("""
        import torch
        w = torch.zeros(3, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        import torch.nn.functional as F
        y = F.relu(w)
        with torch.no_grad():
            w -= 0.1 * w.grad
    """))
    lines = result.code.splitlines()
    first = next(i for i, line in enumerate(lines) if "assign(" in line)
    assert lines[first].startswith("mindspore.ops.assign(w"), result.code
    assert "F.relu(w)" in result.code


# ----------------------------------------------------------------------------- text kept


def test_the_comment_on_a_removed_import_line_stays_on_a_line_of_its_own():
    """``import torch.optim as O  # note``: the import goes (its names reach mindspore.nn),
    its comment used to go with it."""
    assert_ports(
        """
            import torch
            import torch.optim as O  # note
            import torch.nn as nn  # layers
            from torch import optim  # also this

            import numpy as np
            model = nn.Linear(2, 2)
            opt = O.SGD(model.parameters(), lr=0.1)
        """,
        """
            import mindspore
            # note
            import mindspore.nn as nn  # layers
            # also this

            import numpy as np
            model = nn.Dense(2, 2)
            opt = nn.SGD(model.trainable_params(), learning_rate=0.1)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_the_comment_on_an_import_line_that_keeps_other_names_stays_on_it():
    for before, after in [
        ("import os, torch.optim as O  # note\nimport torch\nx = torch.ones(2)\n",
         "import os  # note\nimport mindspore\nx = mindspore.ops.ones(2)\n"),
        ("import torch\nimport torch.optim as O; import os  # note\nx = torch.ones(2)\n",
         "import mindspore\nimport os  # note\nx = mindspore.ops.ones(2)\n"),
    ]:
        assert port(before).code == after


@pytest.mark.parametrize("before, after", [
    # one blank line on each side of the removed import: one stays
    ("import torch\n\nimport torch.optim as O\n\nx = torch.ones(2)\n",
     "import mindspore\n\nx = mindspore.ops.ones(2)\n"),
    ("import numpy as np\n\n\nimport torch.optim as O\n\n\nimport torch\nx = torch.ones(2)\n",
     "import numpy as np\n\n\nimport mindspore\nx = mindspore.ops.ones(2)\n"),
    ("import torch\nx = torch.ones(2)\n\nimport torch.optim as O\n\n# comment\ny = 1\n",
     "import mindspore\nx = mindspore.ops.ones(2)\n\n# comment\ny = 1\n"),
    # blank lines on one side only: they stay, no more and no fewer
    ("import numpy as np\n\nimport torch.optim as O\nx = 1\nimport torch\ny = torch.ones(2)\n",
     "import numpy as np\n\nx = 1\nimport mindspore\ny = mindspore.ops.ones(2)\n"),
    ("import torch\nimport torch.optim as O\n\nx = torch.ones(2)\n",
     "import mindspore\n\nx = mindspore.ops.ones(2)\n"),
    # the removed import's comment keeps the blank lines on both sides of it
    ("import numpy as np\n\nimport torch.optim as O  # opt\n\nimport torch\nx = torch.ones(2)\n",
     "import numpy as np\n\n# opt\n\nimport mindspore\nx = mindspore.ops.ones(2)\n"),
])
def test_removing_an_import_neither_adds_nor_eats_blank_lines(before, after):
    result = port(before)
    assert result.code == after
    assert port(after).code == after
