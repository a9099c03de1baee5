"""Data-object rules (DAT001-DAT006): ported examples run on both sides with run_pair."""

import ast

from msmagic.parity_check import run_pair
from tests.rules.support import rule_list as rules
from tests.rules.support import check, src
from msmagic.rules.data import DTYPES


def test_tensor_inferred_dtypes_agree_without_explicit_dtype():
    run = run_pair(src("""
        import torch
        import numpy as np
        f = torch.tensor([1.0, 2.5])
        i = torch.tensor([[1, 2], [3, 4]])
        b = torch.tensor([True, False])
        mixed = torch.tensor([1, 2.5])
        f64 = torch.tensor(np.array([0.1, 0.2]))
        i32 = torch.tensor(np.array([1, 2], dtype=np.int32))
        s = torch.tensor(3.0)
        k = torch.tensor(data=[7, 8])
    """))
    code = run.port.code
    assert "dtype=mindspore" not in code
    assert "f = mindspore.Tensor([1.0, 2.5])\n" in code
    assert "k = mindspore.Tensor(input_data=[7, 8])\n" in code
    names = ["f", "i", "b", "mixed", "f64", "i32", "s", "k"]
    assert run.agree(*names), run.explain()  # agree() includes the dtype check
    assert [run.row(n).ms_dtype for n in names] == [
        "Float32", "Int64", "Bool", "Float32", "Float64", "Int32", "Float32", "Int64"]


def test_tensor_dtype_kept_device_and_requires_grad_dropped():
    run = run_pair(src("""
        import torch
        x = torch.tensor([[1, 2], [3, 4]], dtype=torch.float16, device="cpu", requires_grad=False)
        y = torch.tensor([0.5, 1.5], requires_grad=True)
    """))
    code = run.port.code
    assert "x = mindspore.Tensor([[1, 2], [3, 4]], dtype=mindspore.float16)\n" in code
    assert "y = mindspore.Tensor([0.5, 1.5])\n" in code
    assert rules(run.port).count("DEV003") == 1 and "DAT005" in rules(run.port)
    assert run.agree("x", "y"), run.explain()


def test_from_numpy_shares_memory_on_both_sides():
    run = run_pair(src("""
        import torch
        import numpy as np
        arr = np.arange(4.0)
        t = torch.from_numpy(arr)
        arr[0] = 10.0
        first = t[0].item()
    """))
    assert "t = mindspore.from_numpy(arr)\n" in run.port.code
    assert "DAT002" in rules(run.port)
    assert run.agree("t", "first"), run.explain()
    assert run.torch_ns["first"] == 10.0  # the write reached the tensor
    assert run.row("t").ms_dtype == "Float64"


def test_variable_unwrapped_or_parameter():
    run = run_pair(src("""
        import torch
        from torch.autograd import Variable
        a = torch.tensor([1.0, 2.0])
        b = torch.tensor([3.0, -1.0])
        x = Variable(a)
        y = Variable(a + b) * 2
        w = Variable(b, requires_grad=True)
        flag = True
        v = Variable(a, requires_grad=flag)
        z = Variable(a, volatile=True) + w * v
    """))
    code = run.port.code
    assert "x = a\ny = (a + b) * 2\nw = mindspore.Parameter(b)\n" in code
    assert "v = mindspore.Parameter(a, requires_grad=flag)\n" in code
    assert "z = a + w * v\n" in code
    assert "Variable" not in code
    assert rules(run.port).count("DAT003") == 5
    assert run.agree("x", "y", "w", "v", "z"), run.explain()
    import mindspore

    assert isinstance(run.ms_ns["w"], mindspore.Parameter)
    assert not isinstance(run.ms_ns["x"], mindspore.Parameter)


def test_parameter_in_cell_named_after_attribute():
    run = run_pair(src("""
        import torch
        import torch.nn as nn

        class Affine(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.tensor([2.0, 0.5, -1.0]))
                self.shift = nn.Parameter(torch.tensor([0.1, 0.2, 0.3]), False)

            def forward(self, x):
                return x * self.scale + self.shift

        m = Affine()
        y = m(torch.tensor([1.0, 2.0, 3.0]))
    """))
    code = run.port.code
    assert "self.scale = mindspore.Parameter(mindspore.Tensor([2.0, 0.5, -1.0]))\n" in code
    assert "mindspore.Parameter(mindspore.Tensor([0.1, 0.2, 0.3]), requires_grad=False)" in code
    assert "DAT004" in rules(run.port)
    assert run.agree("y", "m.scale", "m.shift"), run.explain()
    cell = run.ms_ns["m"]
    assert [n for n, _ in cell.parameters_and_names()] == ["scale", "shift"]
    assert [p.name for p in cell.trainable_params()] == ["scale"]


def test_register_buffer_is_kept_and_behaves_like_torch():
    run = run_pair(src("""
        import torch
        import torch.nn as nn

        class Shift(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("offset", torch.tensor([1.0, -1.0]))
                self.register_buffer("scratch", torch.tensor([0.0, 0.0]), persistent=False)

            def forward(self, x):
                return x + self.offset + self.scratch

        m = Shift()
        y = m(torch.tensor([2.0, 3.0]))
        offset = m.offset
        keys = sorted(m.state_dict().keys())
    """), names=["y", "offset"])
    assert 'self.register_buffer("offset", mindspore.Tensor([1.0, -1.0]))' in run.port.code
    assert run.agree("y", "offset"), run.explain()
    cell = run.ms_ns["m"]
    assert sorted(dict(cell.named_buffers())) == ["offset", "scratch"]
    assert "offset" in cell.state_dict() and "scratch" not in cell.state_dict()


def test_every_dtype_maps_to_same_width():
    lines = ["import torch"] + [
        f"t_{name} = torch.tensor([1, 0], dtype=torch.{name})" for name in DTYPES
        if name not in ("bfloat16",)
    ] + ["t_bf16 = torch.tensor([1.5, 0.0], dtype=torch.bfloat16).float()"]
    run = run_pair("\n".join(lines) + "\n")
    for name, ms in DTYPES.items():
        if name != "bfloat16":
            assert f"dtype=mindspore.{ms})" in run.port.code
    assert "dtype=mindspore.bfloat16).float()" in run.port.code
    names = [f"t_{n}" for n in DTYPES if n != "bfloat16"] + ["t_bf16"]
    assert run.agree(*names), run.explain()


def test_tensor_casts_and_queries_kept_unchanged():
    cell = src("""
        import torch
        x = torch.tensor([[1.7, -2.2, 0.0], [3.5, 4.0, -0.6]])
        a = x.float()
        b = x.long()
        c = x.int()
        d = x.double()
        e = x.half()
        f = x.bool()
        g = x[0, 0].item()
        h = x.tolist()
        n = x.numel()
        k = x.dim()
    """)
    run = run_pair(cell)
    body = cell.split("\n", 2)[2]
    assert body in run.port.code  # every line after the tensor is unchanged
    assert run.agree(*"abcdefghnk"), run.explain()


def test_size_becomes_shape():
    run = run_pair(src("""
        import torch
        x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        rows = x.size(0)
        cols = x.size(dim=1)
        last = (x + 1).size(-1)
        shape = x.size()
        def width(t):
            return t.size(1)
        w = width(x)
    """))
    code = run.port.code
    assert "rows = x.shape[0]\ncols = x.shape[1]\nlast = (x + 1).shape[-1]\nshape = x.shape\n" in code
    assert "return t.shape[1]\n" in code
    assert rules(run.port).count("DAT006") == 5
    assert run.agree("rows", "cols", "last", "shape", "w"), run.explain()
    ast.parse(code)


def test_torch_tensor_as_a_type_and_its_legacy_constructor():
    """``torch.Tensor`` in isinstance and annotations is ``mindspore.Tensor``; called, it
    is the legacy float32 constructor (DAT007, below)."""
    import msmagic

    run = run_pair(src("""
        import torch
        def double(x: torch.Tensor) -> torch.Tensor:
            return x * 2
        x = torch.ones(3)
        is_tensor = isinstance(x, torch.Tensor)
        is_not = isinstance([1.0], torch.Tensor)
        y = double(x)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("is_tensor", "is_not", "y"), run.explain()
    assert "isinstance(x, mindspore.Tensor)" in run.port.code
    legacy = msmagic.port("import torch\nt = torch.Tensor([1, 2])\n")
    assert not legacy.unsupported and "mindspore.Tensor([1, 2], mindspore.float32)" in legacy.code


# ----------------------------------------------------------------------------- DAT007


def test_typed_constructors_from_data_and_as_cast_types():
    run = run_pair(src("""
        import torch
        import numpy as np
        ids = torch.LongTensor([3, 1, 2])
        trunc = torch.LongTensor([1.7, -2.2])
        w = torch.FloatTensor(np.arange(4.0))
        h = torch.DoubleTensor([[0.5, 1.5]])
        b = torch.ByteTensor([1, 0, 255])
        flags = torch.BoolTensor([True, False])
        words = ["a", "b"]
        vocab = torch.IntTensor([len(w) for w in words])
        as_long = torch.tensor([1.7, -2.2]).type(torch.LongTensor)
        as_float = ids.type(torch.FloatTensor)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    code = run.port.code
    assert "ids = mindspore.Tensor([3, 1, 2], mindspore.int64)" in code
    assert "as_long = mindspore.Tensor([1.7, -2.2]).type(mindspore.int64)" in code
    names = ["ids", "trunc", "w", "h", "b", "flags", "vocab", "as_long", "as_float"]
    assert run.agree(*names), run.explain()  # dtypes included
    assert not run.port.unsupported


def test_typed_constructors_from_sizes_become_zeros():
    """The intermediate_language_model idiom: an uninitialised LongTensor of a token
    count, filled element by element."""
    run = run_pair(src("""
        import torch
        def get_data(lines):
            tokens = 0
            for line in lines:
                tokens += len(line.split())
            ids = torch.LongTensor(tokens)
            token = 0
            for line in lines:
                for word in line.split():
                    ids[token] = len(word)
                    token += 1
            return ids
        ids = get_data(["the cat", "sat on the mat"])
        grid = torch.FloatTensor(2, 3)
        grid[:] = 1.5
        n = 4
        buf = torch.IntTensor(n)
        buf.fill_(7)
        empty = torch.FloatTensor()
        count = empty.numel()
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    code = run.port.code
    assert "ids = mindspore.ops.zeros(tokens, mindspore.int64)" in code
    assert "grid = mindspore.ops.zeros((2, 3), mindspore.float32)" in code
    assert "buf = mindspore.ops.zeros(n, mindspore.int32)" in code
    assert run.agree("ids", "grid", "buf", "count"), run.explain()


def test_typed_constructors_that_cannot_be_told_apart_are_flagged():
    import msmagic

    port = msmagic.port(src("""
        import torch
        a = torch.LongTensor(q)
        b = torch.FloatTensor([1.0], pin_memory=True)
        c = isinstance(a, torch.LongTensor)
    """))
    code = port.code
    ast.parse(code)
    assert "a = mindspore.Tensor(q, mindspore.int64)  # msmagic: DAT007 torch.LongTensor(x): x taken as data" in code
    assert "b = torch.FloatTensor([1.0], pin_memory=True)  # msmagic: DAT007" in code
    assert "c = isinstance(a, torch.LongTensor)  # msmagic: DAT007 torch.LongTensor as a type" in code
    assert "import torch" in code
    assert [f.line for f in port.unsupported] == [2, 3, 4]


def test_legacy_tensor_constructor_from_data_is_float32():
    """``torch.Tensor(data)``: float32 whatever the data's dtype (a float64 array, ints,
    a slice of an array), in a chain, inside a function, fed to a layer (udacity's
    time-series RNN); ``device=`` dropped."""
    run = run_pair(src("""
        import torch
        from torch import nn
        import numpy as np
        seq_length = 6
        data = np.sin(np.linspace(0, np.pi, seq_length + 1))
        data.resize((seq_length + 1, 1))
        ints = torch.Tensor([[1, 2], [3, 4]])
        from_f64 = torch.Tensor(data)
        batch = torch.Tensor(data).unsqueeze(0)
        on_cpu = torch.Tensor([0.5, 1.5], device="cpu")
        def to_tensors(data):
            x = data[:-1]
            y = data[1:]
            return torch.Tensor(x).unsqueeze(0), torch.Tensor(y)
        x_t, y_t = to_tensors(data)
        torch.manual_seed(0)
        rnn = nn.RNN(1, 4, 1, batch_first=True)
        out, hidden = rnn(x_t, None)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    names = ["ints", "from_f64", "batch", "on_cpu", "x_t", "y_t", "out", "hidden"]
    assert run.agree(*names), run.explain()
    assert all(str(run.row(n).ms_dtype) == "Float32" for n in names[:6])
    assert not run.port.unsupported, run.port.unsupported
    assert "mindspore.Tensor(x, mindspore.float32).unsqueeze(0)" in run.port.code


def test_legacy_tensor_constructor_from_sizes_is_zeros_and_flagged():
    run = run_pair(src("""
        import torch
        x = torch.Tensor(2, 3, 4)
        x[:] = 0.25
        y = torch.Tensor(3)
        y[1:] = 2.0
        y[0] = -1.0
        e = torch.Tensor()
        n = e.numel()
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("x", "y", "n"), run.explain()
    assert "x = mindspore.ops.zeros((2, 3, 4), mindspore.float32)" in run.port.code
    assert [(f.rule_id, f.line) for f in run.port.unsupported] == [("DAT007", 2), ("DAT007", 4)]
    assert "uninitialised" in run.port.unsupported[0].reason


def test_typed_tensor_mapped_over_zipped_batches():
    """graykode's BERT: ``map(torch.LongTensor, zip(*batch))`` builds one tensor per field
    of the batch; each item is data (a tuple), so the constructor becomes a lambda making
    a MindSpore tensor of that dtype, at top level and in a function."""
    run = check(src("""
        import torch
        batch = [([1, 2, 3], [0, 0, 1], 1), ([4, 5, 6], [1, 0, 0], 0)]
        input_ids, segment_ids, is_next = map(torch.LongTensor, zip(*batch))
        def to_tensors(rows):
            return list(map(torch.FloatTensor, [[r[2], r[2] * 0.5] for r in rows]))
        halves = to_tensors(batch)
        scores, = map(torch.FloatTensor, [[1.5, 2.0]])
    """), "input_ids", "segment_ids", "is_next", "halves", "scores", rule="DAT007")
    assert "import torch" not in run.port.code
    assert run.row("input_ids").ms_dtype == "Int64" and run.row("scores").ms_dtype == "Float32"


def test_torch_tensor_mapped_over_arrays_and_referenced_as_a_value():
    """The nn tutorial's ``x_train, y_train, ... = map(torch.tensor, (x_train, y_train, ...))``:
    each item is data, mindspore.Tensor gives the same values and dtypes, nothing is
    flagged; ``f = torch.tensor`` elsewhere is flagged (arguments given later are not
    ported), and parity compares around the class it binds instead of failing on it."""
    run = run_pair(
        "import numpy as np\nimport torch\n"
        "x_train, y_train = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 0])\n"
        "x_train, y_train, lst = map(torch.tensor, (x_train, y_train, [[1.0, 2.0]]))\n"
        "s = x_train.sum() + y_train.sum() + lst.sum()\n"
        "f = torch.tensor\n")
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("x_train", "y_train", "lst", "s"), run.explain()
    assert str(run.ms_ns["y_train"].dtype) == "Int64"
    assert "map(mindspore.Tensor, (x_train, y_train, [[1.0, 2.0]]))" in run.port.code
    assert [(f.line, f.rule_id) for f in run.port.unsupported] == [(6, "DAT001")]
