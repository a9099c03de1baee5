"""Tensor methods outside op_db (TNS001-TNS006): ported cells run on both sides."""

import msmagic
from tests.rules.support import check, flagged, findings, parity_cells, rule_list, src


def test_queries_keep_their_form_and_python_types():
    run = check(src("""
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        i = torch.tensor([3, 1, 2])
        b = i > 1
        f = x[1, 2].item()
        n = i[0].item()
        t = b[0].item()
        s = torch.tensor(2.5).item()
        rows = x.tolist()
        ints = i.tolist()
        scalar = torch.tensor(1.5).tolist()
        dims = (x.dim(), x.ndimension(), torch.tensor(1.0).dim())
        sizes = (x.numel(), x.nelement(), torch.tensor(1.0).numel())
        kinds = (x.is_floating_point(), i.is_floating_point(), b.is_floating_point())
        contiguous = (x.is_contiguous(), x.t().is_contiguous(), x[:, ::2].is_contiguous(),
                      torch.ones(1, 3).expand(2, 3).is_contiguous(), x.t().contiguous().is_contiguous())
        cast = i.type_as(x)
        to_bool = x.type_as(b)
    """), "f", "n", "t", "s", "rows", "ints", "scalar", "dims", "sizes", "kinds", "contiguous", "cast",
        "to_bool")
    for name, typ in (("f", float), ("n", int), ("t", bool), ("s", float), ("scalar", float)):
        assert type(run.ms_ns[name]) is typ and type(run.torch_ns[name]) is typ, name
    assert "x.numel()" in run.port.code and "x[1, 2].item()" in run.port.code
    assert not run.port.unsupported


def test_item_on_unknown_receiver_is_left_silently():
    r = msmagic.port(src("""
        import torch
        def value(loss):
            return loss.item() + loss.numel()
    """))
    assert "return loss.item() + loss.numel()" in r.code
    assert not r.unsupported


def test_data_ptr_sharing_agrees():
    check(src("""
        import torch
        x = torch.arange(6.0)
        v = x.view(2, 3)
        c = x.clone()
        shared = x.data_ptr() == v.data_ptr()
        copied = x.data_ptr() == c.data_ptr()
    """), "shared", "copied")


def test_element_size_becomes_itemsize():
    run = check(src("""
        import torch
        sizes = [torch.zeros(2, dtype=d).element_size()
                 for d in (torch.float32, torch.float16, torch.float64, torch.int64, torch.int8, torch.bool)]
        x = torch.ones(3, 4)
        nbytes = x.element_size() * x.numel()
    """), "sizes", "nbytes", rule="TNS002")
    assert "x.itemsize * x.numel()" in run.port.code
    assert run.ms_ns["sizes"] == [4, 2, 8, 8, 1, 1]


def test_new_tensor_takes_the_receiver_dtype():
    run = check(src("""
        import torch
        x = torch.zeros(2, dtype=torch.float64)
        i = torch.tensor([1, 2])
        a = x.new_tensor([1, 2, 3])
        b = x.new_tensor([[0.5]], dtype=torch.float32)
        c = i.new_tensor([2.7, -1.2])
        d = x.new_tensor(i, device="cpu")
    """), "a", "b", "c", "d", rule="TNS003")
    assert "a = mindspore.Tensor([1, 2, 3], dtype=x.dtype)" in run.port.code
    assert "DEV003" in rule_list(run.port)
    assert [run.row(n).ms_dtype for n in "abcd"] == ["Float64", "Float32", "Int64", "Float64"]


def test_new_tensor_requires_grad_is_flagged():
    flagged(src("""
        import torch
        x = torch.zeros(2)
        w = x.new_tensor([1.0], requires_grad=True)
    """), "TNS003", "new_tensor requires_grad= not ported")


def test_zero_and_copy_update_in_place_with_aliases():
    run = check(src("""
        import torch
        import torch.nn as nn
        layer = nn.Linear(3, 2)
        with torch.no_grad():
            layer.bias.zero_()
            layer.weight.copy_(torch.arange(6.0).reshape(2, 3))
        x = torch.arange(6.0).reshape(2, 3)
        alias = x
        x.zero_()
        ints = torch.tensor([4, 5, 6])
        same = ints.zero_()
        dst = torch.zeros(2, 3, dtype=torch.int64)
        dst.copy_(torch.tensor([1.7, 2.2, -3.9]))
        y = layer(torch.ones(1, 3))
    """), "layer.weight", "layer.bias", "x", "alias", "ints", "same", "dst", "y",
        rule="TNS004")
    code = run.port.code
    assert "layer.bias.copy_(mindspore.ops.zeros_like(layer.bias))" in code
    assert "x.copy_(mindspore.ops.zeros_like(x))" in code
    assert "dst.copy_(mindspore.Tensor([1.7, 2.2, -3.9]))" in code
    assert float(abs(run.ms_ns["alias"]).sum()) == 0.0  # the alias saw the write


def test_zero_on_element_or_slice_is_flagged():
    r = flagged(src("""
        import torch
        x = torch.ones(2, 3)
        x[0].zero_()
        x[:, 1].copy_(torch.zeros(2))
    """), "TNS004", "Tensor.zero_ on x[0] not ported")
    assert "Tensor.copy_ on x[:, 1] not ported" in r.code
    assert "x[0].zero_()" in r.code


def test_type_with_dtype_kept_and_type_name_flagged():
    check(src("""
        import torch
        x = torch.tensor([1.7, -2.2])
        i = x.type(torch.int32)
        d = x.type(dtype=torch.float64)
    """), "i", "d")
    flagged(src("""
        import torch
        x = torch.tensor([1.7, -2.2])
        name = x.type()
    """), "TNS005", "Tensor.type() name differs in MindSpore")
    flagged(src("""
        import torch
        x = torch.tensor([1.7, -2.2])
        y = x.type("torch.IntTensor")
    """), "TNS005", "Tensor.type(...) not ported")


def test_requires_grad_and_get_device_are_flagged():
    r = flagged(src("""
        import torch
        def make():
            w = torch.ones(3).requires_grad_()
            dev = w.get_device()
    """), "TNS006", "Tensor.requires_grad_ not ported")
    assert "Tensor.get_device not ported" in r.code


def test_idempotent_on_every_ported_example():
    from msmagic.rules.registry import get_rule

    for rid in ("TNS001", "TNS002", "TNS003", "TNS004", "TNS005", "TNS006"):
        out = msmagic.port(get_rule(rid).example).code
        assert msmagic.port(out).code == out, rid


def test_no_api005_for_covered_methods():
    r = msmagic.port(src("""
        import torch
        x = torch.ones(2, 2)
        n = x.numel() + x.dim() + x.element_size()
        v = x.sum().item()
        y = x.new_tensor([1.0])
    """))
    assert "API005" not in findings(type("R", (), {"port": r})())


def test_new_with_sizes_and_the_zero_of_a_new_tensor():
    # udacity char-RNN / sentiment-RNN: weight.new(n_layers, batch, hidden).zero_() in a
    # Module's method; the other new_* constructors with spread-out sizes and keywords
    run = check(src("""
        import torch
        import torch.nn as nn

        class CharRNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.n_layers, self.n_hidden = 2, 5
                self.lstm = nn.LSTM(3, 5, 2, batch_first=True)

            def init_hidden(self, batch_size):
                weight = next(self.parameters()).data
                return (weight.new(self.n_layers, batch_size, self.n_hidden).zero_(),
                        weight.new(self.n_layers, batch_size, self.n_hidden).zero_())

            def forward(self, x, hidden):
                return self.lstm(x, hidden)

        def blank(t, n):
            return t.new(n, 2).zero_()

        net = CharRNN()
        h, c = net.init_hidden(4)
        out, state = net(torch.ones(4, 6, 3), (h, c))
        w = torch.ones(3, 2, dtype=torch.float64)
        z = w.new_zeros(2, 3)
        z2 = w.new_zeros((2, 3), dtype=torch.int64, device="cpu")
        o = w.new_ones(4, 1, dtype=torch.float32)
        e = w.new_empty(3, 1).shape
        f = w.new_full((2, 2), 7)
        d = w.new([1, 2, 3])
        n = w.new().shape
        b = blank(w, 3)
    """), "h", "c", "out", "z", "z2", "o", "e", "f", "d", "n", "b", rule="TNS007")
    code = run.port.code
    assert "weight.new_zeros((self.n_layers, batch_size, self.n_hidden))," in code
    assert "return t.new_zeros((n, 2))" in code and "w.new_zeros((2, 3))" in code
    assert [run.row(k).ms_dtype for k in ("z", "z2", "o", "f", "d", "b")] == [
        "Float64", "Int64", "Float32", "Float64", "Float64", "Float64"]
    assert not run.port.unsupported, run.port.unsupported


def test_new_with_one_argument_of_unknown_kind_is_flagged():
    r = flagged(src("""
        import torch
        def make(w, size):
            return w.new(size).zero_()
    """), "TNS007", "Tensor.new: size or data?")
    assert "w.new(size)" in r.code


def test_fills_of_layer_weights_and_tensors():
    # udacity intro part 2: model.fc1.bias.data.fill_(0); model.fc1.weight.data.normal_(std=0.01)
    source = src("""
        import torch
        import torch.nn as nn

        class Network(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(64, 32)

            def forward(self, x):
                return self.fc1(x)

        def init(m):
            m.bias.data.fill_(0.25)

        model = Network()
        model.fc1.bias.data.fill_(0)
        bias = model.fc1.bias * 1.0
        init(model.fc1)
        model.fc1.weight.data.normal_(std=0.01)
        y = model(torch.ones(1, 64))
        u = torch.zeros(200, 50, dtype=torch.float64)
        u.uniform_(-0.5, 1.5)
        ints = torch.zeros(2, 3, dtype=torch.int64)
        ints.fill_(2.7)
        fresh = torch.zeros(2, 2).fill_(3.0)
        stats = (float(model.fc1.weight.std()) < 0.02, float(u.min()) >= -0.5, float(u.max()) <= 1.5,
                 abs(float(u.mean()) - 0.5) < 0.05)
    """)
    run = check(source, "bias", "model.fc1.bias", "y", "u", "ints", "fresh", "stats", rule="TNS008")
    code = run.port.code
    assert "model.fc1.bias.data.copy_(mindspore.ops.full_like(model.fc1.bias.data, 0))" in code
    assert "m.bias.data.copy_(mindspore.ops.full_like(m.bias.data, 0.25))" in code
    assert "model.fc1.weight.data.copy_(mindspore.ops.randn_like(model.fc1.weight.data) * 0.01)" in code
    assert "u.copy_(mindspore.ops.rand_like(u) * 2.0 - 0.5)" in code
    assert run.torch_ns["stats"] == (True, True, True, True)
    assert run.row("ints").ms_dtype == "Int64" and run.row("u").ms_dtype == "Float64"
    assert not run.port.unsupported, run.port.unsupported
    # the draws are MindSpore's own (parity copied PyTorch's into the module): on their
    # own they have the asked-for spread and range
    ns = {}
    exec(run.port.code, ns)
    assert ns["stats"] == (True, True, True, True)


def test_fill_of_an_element_is_flagged():
    flagged(src("""
        import torch
        x = torch.ones(2, 3)
        x[0].fill_(2)
    """), "TNS004", "Tensor.fill_ on x[0] not ported")


def test_resize_becomes_reshape_and_rebinding():
    # udacity intro parts 2, 3, 6: images.resize_(64, 1, 784), at the top level and in a
    # validation function that assigns the result to the same name
    run = check(src("""
        import torch

        def validation(batches):
            total = 0.0
            for images in batches:
                images = images.resize_(images.size()[0], 6)
                total += float(images.sum(1).max())
            return total

        images = torch.arange(24.0).reshape(4, 1, 2, 3)
        images.resize_(4, 1, 6)
        first = images[0]
        flat = images.resize_(images.shape[0], 6)
        score = validation([torch.ones(2, 2, 3), torch.arange(12.0).reshape(2, 1, 6)])
    """), "images", "first", "flat", "score", rule="TNS009")
    code = run.port.code
    assert "images = images.reshape(4, 1, 6)" in code
    assert "flat = (images := images.reshape(images.shape[0], 6))" in code
    assert "images = images.reshape(images.shape[0], 6)" in code
    assert not run.port.unsupported, run.port.unsupported


def test_resize_of_an_attribute_is_flagged():
    flagged(src("""
        import torch
        class Box:
            pass
        box = Box()
        box.x = torch.ones(2, 3)
        box.x.resize_(3, 2)
    """), "API003", "Tensor.resize_: in-place update not ported")


def test_methods_on_receivers_of_unknown_kind_compute_the_same():
    # bentrevett CNN: [conv.max(dim=-1).values for conv in conved]; udacity part 5:
    # equals.type(torch.FloatTensor) and ps.topk(1, dim=1); uvadlc: k.transpose(-2, -1);
    # udacity sentiment RNN: labels.eq(pred.view_as(labels)): all inside functions
    run = check(src("""
        import torch

        def pooled(conved):
            return [conv.max(dim=-1).values for conv in conved]

        def accuracy(ps, labels):
            top_p, top_class = ps.topk(1, dim=1)
            equals = top_class == labels.view(*top_class.shape)
            return torch.mean(equals.type(torch.FloatTensor)), ps.topk(2, dim=1).indices

        def attention(q, k):
            return torch.softmax(torch.matmul(q, k.transpose(-2, -1)), dim=-1)

        def correct(ps, labels):
            return labels.eq(ps.argmax(1).view_as(labels)).all(), ps.max(dim=1, keepdim=True).indices

        conved = [torch.tensor([[1., 5., 3.], [4., 2., 6.]]), torch.tensor([[0., -1.]])]
        ps = torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3], [0.3, 0.3, 0.4]])
        labels = torch.tensor([1, 2, 2])
        q = torch.arange(24.0).reshape(2, 3, 4) / 10
        p = pooled(conved)
        acc, best = accuracy(ps, labels)
        att = attention(q, q)
        same, where = correct(ps, labels)
    """), "p", "acc", "best", "att", "same", "where")
    code = run.port.code
    assert "conv.max(dim=-1)[0]" in code and "k.swapaxes(-2, -1)" in code
    assert {f.rule_id for f in run.port.unsupported} <= {"API006", "GEN004"}, run.port.unsupported


def test_dot_and_mm_compute_the_same():
    run = check(src("""
        import torch
        a = torch.tensor([1.0, 2.0, 3.0])
        b = torch.tensor([4.0, -5.0, 6.0])
        d = torch.dot(a, b)
        e = a.dot(b)
        i = torch.dot(torch.tensor([1, 2]), torch.tensor([3, 4]))
        x = torch.arange(6.0).reshape(2, 3)
        w = torch.arange(12.0).reshape(3, 4) / 10
        y = torch.mm(x, w)
        z = x.mm(w)
    """), "d", "e", "i", "y", "z")
    assert "mindspore.ops.inner(a, b)" in run.port.code and "mindspore.ops.mm(x, w)" in run.port.code
    assert run.row("i").ms_dtype == "Int64"


def test_weights_filled_in_later_cells_stay_in_step_under_parity(parity_shell):
    # udacity intro part 2, cell by cell under %%ms_parity: the bias is zeroed and the
    # weight drawn in cells of their own (the draw is the cell's output), then used
    cells = [src("""
        import torch
        import torch.nn as nn

        class Network(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(8, 4)

            def forward(self, x):
                return self.fc1(x)

        model = Network()
    """), "model.fc1.bias.data.fill_(0)\n", "model.fc1.weight.data.normal_(std=0.01)\n",
        "out = model(torch.ones(2, 8))\n"]
    reports, _ = parity_cells(parity_shell, cells)
    assert reports[3].row("out").status == "match", reports[3].summary()
    assert reports[1].row("model.fc1.bias").status == "match", reports[1].summary()
