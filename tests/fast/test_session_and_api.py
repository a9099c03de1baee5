"""The public result API on small cells: sessions shared between cells, the edit log's
line ranges and details, findings' positions, notes and syntax errors."""

import pytest

import msmagic
from msmagic.engine.session import PortSession
from tests.fast.codemod import assert_ports, dedent, edit_ids


def test_imports_of_an_earlier_cell_are_known_to_a_later_one():
    session = PortSession()
    assert_ports(
        """
            import torch
            import torch.nn as nn
        """,
        """
            import mindspore
            import mindspore.nn as nn
        """,
        edits=["IMP001", "IMP001"],
        session=session,
    )
    assert_ports(
        """
            fc = nn.Linear(2, 3)
            x = torch.ones(2)
        """,
        """
            fc = nn.Dense(2, 3)
            x = mindspore.ops.ones(2)
        """,
        edits=["LAY001", "FUN009"],
        session=session,
    )
    assert_ports(
        """
            import torch.nn.functional as F
            y = F.log_softmax(x, dim=0)
        """,
        """
            import mindspore.ops as F
            y = F.log_softmax(x, axis=0)
        """,
        edits=["IMP001", "FUN005"],
        session=session,
    )


def test_without_the_session_a_cell_with_no_imports_is_not_ported():
    source = "fc = nn.Linear(2, 3)\nx = torch.ones(2)\n"
    result = msmagic.port(source)
    assert result.code == source and not result.edits and not result.unsupported
    assert result.notes == ["No PyTorch found in this cell: nothing to port."]


def test_kinds_bound_in_an_earlier_cell_type_a_later_one():
    session = PortSession()
    msmagic.port(dedent("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 3)
        x = torch.ones(2, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        class Net(nn.Module):
            def forward(self, x):
                return x
    """), session=session)
    assert_ports(
        """
            model.eval()
            n = x.size(0)
            lr = opt.param_groups[0]["lr"]
            net = Net()
            net.train()
        """,
        """
            model.set_train(False)
            n = x.shape[0]
            lr = float(opt.learning_rate)
            net = Net()
            net.set_train()
        """,
        edits=["MOD002", "DAT006", "SCH005", "MOD002"],
        session=session,
    )


def test_edit_log_order_ranges_and_details():
    result = assert_ports(
        """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 3)
            torch.set_grad_enabled(False)
            y = model(torch.ones(2, 4))
        """,
        """
            import mindspore
            import mindspore.nn as nn

            model = nn.Dense(4, 3)
            y = model(mindspore.ops.ones((2, 4)))
        """,
        edits=["IMP001", "IMP001", "LAY001", "NGR003", "FUN009"],
    )
    by_rule = {e.rule_id: e for e in result.edits}
    assert by_rule["LAY001"].before == (4, 4) and by_rule["LAY001"].after == (4, 4)
    assert by_rule["LAY001"].detail == "torch.nn.Linear -> mindspore.nn.Dense"
    assert by_rule["FUN009"].before == (6, 6) and by_rule["FUN009"].after == (5, 5)
    assert by_rule["NGR003"].before == (5, 5)
    assert [e.detail for e in result.edits if e.rule_id == "IMP001"] == [
        "import mindspore", "import mindspore.nn as nn"]


def test_a_multi_line_statement_spans_its_lines():
    result = assert_ports(
        """
            import torch.nn as nn
            model = nn.Sequential(
                nn.Linear(4, 8),
                nn.ReLU(),
            )
        """,
        """
            import mindspore.nn as nn
            model = nn.SequentialCell(
                nn.Dense(4, 8),
                nn.ReLU(),
            ).set_train()
        """,
        edits={"CEL003", "FUN013", "IMP001", "LAY001", "MOD003"},
    )
    seq = next(e for e in result.edits if e.rule_id == "CEL003")
    assert seq.before == (2, 5) and seq.after == (2, 5)
    dense = next(e for e in result.edits if e.rule_id == "LAY001")
    assert dense.before == (3, 3) and dense.after == (3, 3)


def test_finding_position_api_and_reason():
    result = assert_ports(
        """
            import torch
            x = torch.ones(3)
            y = x.frobnicate()
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            y = x.frobnicate()  # msmagic: API005 Tensor.frobnicate not verified for MindSpore
        """,
        edits={"FUN009", "IMP001"},
        findings={"API005"},
    )
    (finding,) = result.unsupported
    assert (finding.line, finding.column) == (3, 5)
    assert finding.api == "Tensor.frobnicate"
    assert finding.reason.startswith("Tensor.frobnicate has no verified MindSpore mapping")
    assert finding.out_line == 3  # the line of the ``# msmagic:`` comment


def test_several_findings_on_one_line_share_one_comment():
    result = assert_ports(
        """
            from torch.utils.data import DataLoader
            loader = DataLoader(my_dataset, batch_size=4, worker_init_fn=seed_worker, **more)
        """,
        """
            from mindspore.dataset.dataloader import DataLoader
            loader = DataLoader(my_dataset, batch_size=4, **more)  # msmagic: LDR005 worker_init_fn removed (no worker processes); LDR005 unpacked DataLoader arguments not checked
        """,
        edits={"IMP001", "LDR002"},
        findings={"LDR005"},
    )
    assert [f.rule_id for f in result.unsupported] == ["LDR005", "LDR005"]
    assert all(f.line == 2 for f in result.unsupported)


def test_result_helpers():
    result = msmagic.port("import torch\nx = torch.ones(2)\n")
    assert result.changed
    assert result.rule_ids == ["IMP001", "FUN009"]
    assert result.diff() == (
        "--- pytorch\n+++ mindspore\n@@ -1,2 +1,2 @@\n"
        "-import torch\n-x = torch.ones(2)\n+import mindspore\n+x = mindspore.ops.ones(2)\n")
    assert edit_ids(result) == ["IMP001", "FUN009"]


def test_syntax_error_reports_its_position():
    with pytest.raises(msmagic.PortSyntaxError) as info:
        msmagic.port("import torch\nx = (1,\n")
    assert (info.value.line, info.value.column) == (2, 5)
