"""Modules -> Cells (CEL) and training mode (MOD): each port is executed on both sides."""

import ast

import numpy as np
import pytest
import torch

import mindspore as ms
import msmagic
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import findings, rules

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _inputs(shape, seed=0):
    arr = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return {"x": torch.tensor(arr)}, {"x": ms.Tensor(arr)}


def pair(body, shape=(3, 4), **kw):
    tns, mns = _inputs(shape)
    run = run_pair(HEAD + body, torch_ns=tns, ms_ns=mns, **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


def same(run, name):
    """A non-tensor value (list of names, lengths) bound on both sides, compared as data."""
    t, m = run.torch_ns[name], run.ms_ns[name]
    assert t == m, f"{name}: torch={t!r} mindspore={m!r}\n{run.explain()}"
    return t


MLP = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(8, 3), nn.Linear(8, 3)])
        self.extra = nn.ModuleDict({"out": nn.Linear(3, 2)})

    def forward(self, x):
        h = self.body(self.fc(x))
        h = self.heads[0](h) + self.heads[1](h)
        return self.extra["out"](h)

model = Net()
y = model(x)
"""


def test_module_subclass_forward_and_containers_match():
    run = pair(MLP)
    assert run.agree("y"), run.explain()
    params = [r for r in run.rows if r.name.startswith("model.")]
    assert len(params) == 10 and all(r.status == "match" for r in params), run.explain()
    code = run.port.code
    assert "class Net(nn.Cell):" in code
    assert "def construct(self, x):" in code and "def forward" not in code
    assert "nn.SequentialCell(nn.Dense(8, 8), nn.ReLU())" in code
    assert "nn.CellList([" in code and "nn.CellDict({" in code
    # the __init__ ends with self.set_train(), containers inside it get no chain
    assert "        self.set_train()\n\n    def construct" in code
    assert ".set_train()\n" not in code.replace("        self.set_train()\n", "")
    assert {"CEL001", "CEL002", "CEL003", "MOD001"} <= rules(run)
    assert not run.port.unsupported


def test_forward_calls_become_construct():
    run = pair("""
class Base(nn.Module):
    def forward(self, x):
        return x * 2

class Child(Base):
    def forward(self, x):
        return super().forward(x) + 1

    def twice(self, x):
        return self.forward(self.forward(x))

net = Child()
y = net(x)
z = net.forward(x)
w = net.twice(x)
""")
    assert run.agree("y", "z", "w"), run.explain()
    code = run.port.code
    assert "super().construct(x)" in code and "net.construct(x)" in code
    assert "self.construct(self.construct(x))" in code and "forward" not in code
    assert sum(e.rule_id == "CEL002" for e in run.port.edits) == 6  # 2 defs, 4 calls


def test_parameter_and_child_walks_match():
    run = pair(MLP + """
names = [n for n, _ in model.named_parameters()]
prefixed = [n for n, _ in model.named_parameters(prefix="m")]
direct = [n for n, _ in model.named_parameters(recurse=False)]
children = [n for n, _ in model.named_children()]
kinds = len(list(model.children()))
tree = [n for n, _ in model.named_modules()]
n_modules = len(list(model.modules()))
n_params = sum(p.numel() for p in model.parameters())
n_direct = len(list(model.parameters(recurse=False)))
""")
    assert same(run, "names")[:2] == ["fc.weight", "fc.bias"]
    assert same(run, "prefixed")[0] == "m.fc.weight"
    same(run, "direct")
    assert same(run, "children") == ["fc", "body", "heads", "extra"]
    assert same(run, "tree")[:3] == ["", "fc", "body"]
    assert run.agree("kinds", "n_modules", "n_params", "n_direct"), run.explain()
    code = run.port.code
    assert "model.parameters_and_names(name_prefix=\"m\")" in code
    assert "model.parameters_and_names(expand=False)" in code
    assert "model.name_cells().items()" in code and "model.cells()" in code
    assert "model.cells_and_names()" in code and "model.get_parameters(expand=False)" in code
    assert "CEL004" in rules(run)


def test_walks_on_unknown_receiver_port_only_when_unambiguous():
    run = pair("""
def count(m):
    return sum(p.numel() for p in m.parameters()), [n for n, _ in m.named_children()]

def kids(m):
    return list(m.children())

counts = count(nn.Sequential(nn.Linear(4, 2), nn.ReLU()))
n_params, child_names = counts
""")
    assert run.agree("n_params"), run.explain()
    assert same(run, "child_names") == ["0", "1"]
    assert "m.get_parameters()" in run.port.code and "m.name_cells().items()" in run.port.code
    # .children() of an unknown receiver could be anything: flagged, left alone
    assert "list(m.children())" in run.port.code and "GEN002" in findings(run)


def test_named_walk_duplicate_switch_is_flagged():
    run = pair("""
model = nn.Sequential(nn.Linear(4, 2))
names = [n for n, _ in model.named_parameters(remove_duplicate=False)]
""")
    assert "CEL004" in findings(run)
    assert "# msmagic: CEL004" in run.port.code
    ast.parse(run.port.code)
    same(run, "names")


def test_add_module_registers_child():
    run = pair("""
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("fc", nn.Linear(4, 3))
        self.register_module(name="act", module=nn.ReLU())

    def forward(self, x):
        return self.act(self.fc(x))

model = Net()
head = nn.Linear(3, 2)
model.add_module("head", head)
names = [n for n, _ in model.named_parameters()]
y = model(x)
""")
    assert same(run, "names") == ["fc.weight", "fc.bias", "head.weight", "head.bias"]
    assert run.agree("y"), run.explain()
    code = run.port.code
    assert 'self.insert_child_to_cell("fc", nn.Dense(4, 3))' in code
    assert 'self.insert_child_to_cell(child_name="act", child_cell=nn.ReLU())' in code
    assert 'model.insert_child_to_cell("head", head)' in code
    assert "CEL005" in rules(run) and not run.port.unsupported


def test_add_module_on_sequential_appends():
    # SequentialCell never runs a child added by insert_child_to_cell (MindSpore 2.10)
    run = pair("""
model = nn.Sequential(nn.Linear(4, 3))
model.add_module("act", nn.ReLU())
y = model(x)
n_children = len(list(model.named_children()))
""")
    assert run.agree("y", "n_children"), run.explain()
    assert (to_numpy(run.ms_ns["y"]) >= 0).all()  # the appended ReLU ran
    assert "model.append(nn.ReLU())" in run.port.code
    assert "CEL005" in findings(run) and "# msmagic: CEL005" in run.port.code


def test_add_module_on_unknown_receiver_is_flagged():
    run = pair("""
def extend(m):
    m.add_module("act", nn.ReLU())
""")
    assert 'm.insert_child_to_cell("act", nn.ReLU())' in run.port.code
    assert "CEL005" in findings(run)
    ast.parse(run.port.code)


def test_sequential_with_ordered_dict_keeps_names():
    run = pair("""
from collections import OrderedDict
model = nn.Sequential(OrderedDict([("enc", nn.Linear(4, 3)), ("act", nn.ReLU())]))
names = [n for n, _ in model.named_parameters()]
y = model(x)
""")
    assert run.agree("y"), run.explain()
    assert same(run, "names") == ["enc.weight", "enc.bias"]


def test_modules_keyword_is_passed_positionally():
    # CellList(modules=[...]) would be silently empty on MindSpore 2.10
    run = pair("""
heads = nn.ModuleList(modules=[nn.Linear(4, 2), nn.Linear(4, 2)])
table = nn.ModuleDict(modules={"a": nn.Linear(4, 2)})
n_heads = len(heads)
n_table = len(table)
""")
    assert run.agree("n_heads", "n_table"), run.explain()
    assert run.torch_ns["n_heads"] == 2
    assert "nn.CellList([nn.Dense(4, 2), nn.Dense(4, 2)])" in run.port.code
    assert "modules=" not in run.port.code


def test_module_dict_with_container_and_none_values_keeps_them():
    src = HEAD + """
torch.manual_seed(0)
blocks = nn.ModuleDict({"enc": nn.Sequential(nn.Linear(4, 2)), "skip": None})
skipped = blocks["skip"] is None
y = blocks["enc"](torch.ones(3, 4))
n = len(blocks)
"""
    run = pair(src)
    assert run.agree("skipped", "y", "n"), run.explain()
    assert run.torch_ns["skipped"] is True and run.torch_ns["n"] == 2
    assert "blocks = ModuleDict({" in run.port.code and not run.port.unsupported


def test_state_dict_and_load_state_dict():
    run = pair("""
src = nn.Linear(4, 3)
dst = nn.Linear(4, 3)
sd = src.state_dict()
keys = list(sd.keys())
missing, unexpected = dst.load_state_dict(sd, strict=False)
lost = list(missing) + list(unexpected)
y = dst(x)
y_src = src(x)
""")
    assert same(run, "keys") == ["weight", "bias"]
    assert same(run, "lost") == []
    assert run.agree("y", "y_src"), run.explain()
    for ns in (run.torch_ns, run.ms_ns):  # dst really was loaded from src
        np.testing.assert_array_equal(to_numpy(ns["y"]), to_numpy(ns["y_src"]))
    code = run.port.code
    assert "sd = src.parameters_dict()" in code
    assert "mindspore.load_param_into_net(dst, sd, strict_load=True)" in code
    assert "CEL006" in rules(run) and not run.port.unsupported


def test_load_state_dict_mismatch_and_strict_finding():
    run = pair("""
src = nn.Sequential(nn.Linear(4, 3))
dst = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 1))
sd = src.state_dict()
not_loaded, _ = dst.load_state_dict(sd, strict=False)
missing = list(not_loaded)
""")
    assert same(run, "missing") == ["1.weight", "1.bias"]
    strict = pair("""
src = nn.Linear(4, 3)
dst = nn.Linear(4, 3)
dst.load_state_dict(src.state_dict())
""")
    assert "CEL006" in findings(strict)
    assert "# msmagic: CEL006" in strict.port.code
    ast.parse(strict.port.code)


def test_state_dict_arguments_are_flagged():
    run = run_pair(HEAD + "m = nn.Linear(2, 2)\nsd = m.state_dict(prefix='m.')\n")
    assert "CEL006" in findings(run)
    ast.parse(run.port.code)


# ------------------------------------------------------------------ training mode

def test_subclass_starts_in_training_mode_and_toggles():
    run = pair(MLP + """
flag_new = model.training
model.eval()
flag_eval = model.training
child_eval = model.body.training
model.train()
flag_train = model.training
model.train(False)
flag_off = model.training
model.train(mode=True)
flag_on = model.training
same_obj = model.eval() is model
""")
    assert run.agree("flag_new", "flag_eval", "child_eval", "flag_train", "flag_off", "flag_on",
                     "same_obj"), run.explain()
    assert run.torch_ns["flag_new"] is True and run.torch_ns["flag_eval"] is False
    code = run.port.code
    assert "model.set_train(False)\n" in code and "model.set_train()\n" in code
    assert "model.set_train(mode=True)" in code
    assert {"MOD001", "MOD002"} <= rules(run)


def test_subclass_of_ported_subclass_sets_mode_again():
    run = pair("""
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

class WithDrop(Base):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

model = WithDrop()
flag = model.drop.training
""")
    assert run.agree("flag"), run.explain()
    assert run.port.code.count("self.set_train()") == 2


def test_mode_switch_inside_init_is_flagged():
    run = pair("""
class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
        self.backbone.eval()

model = Frozen()
""")
    assert "MOD001" in findings(run)
    assert "# msmagic: MOD001" in run.port.code
    ast.parse(run.port.code)


def test_top_level_container_gets_training_mode():
    run = pair("""
model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
flag = model.training
inner = model[1].training
""")
    assert run.agree("flag", "inner"), run.explain()
    assert run.port.code.count(".set_train()") == 1
    assert "nn.Dropout(p=0.5)).set_train()" in run.port.code
    assert sum(e.rule_id == "MOD003" for e in run.port.edits) == 1


@pytest.mark.parametrize("src", [MLP])
def test_port_is_idempotent(src):
    import msmagic

    once = msmagic.port(HEAD + src).code
    assert msmagic.port(once).code == once


def test_buffers_and_named_buffers_are_kept():
    run = run_pair(HEAD + (
        "class Scaler(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('scale', torch.tensor([2.0, 3.0]))\n"
        "    def forward(self, x):\n"
        "        return x * self.scale\n"
        "m = Scaler()\n"
        "count = len([n for n, _ in m.named_buffers() if n == 'scale'])\n"
        "total = sum(b.sum() for b in m.buffers())\n"
        "y = m(torch.ones(2))\n"))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("count", "total", "y", "m.scale"), run.explain()
    assert not run.port.unsupported


LAYER_IN_FORWARD = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_Q = nn.Linear(8, 8)
{init}
    def forward(self, x):
        context = self.W_Q(x)
        output = {project}(context)
        return nn.LayerNorm(8)(output + x)
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
    def forward(self, x):
        return self.attn(x)
model = Encoder()
x = torch.randn(2, 3, 8)
out = model(x)
"""


def test_a_layer_built_inside_forward_is_where_parity_differs_and_flagged_there():
    """graykode's BERT and Transformer build their output projection inside forward: new
    random weights at every call, drawn by each framework's own generator. The outputs
    differ, and the statement where parity reports it carries the MOD004 finding; built
    once in __init__, the same model matches."""
    inline = msmagic.parity(LAYER_IN_FORWARD.format(init="", project="nn.Linear(8, 8)"))
    assert inline.row("out").status != "match"
    stmt = inline.first_divergence.statement
    assert any(f.rule_id == "MOD004" and f.statement == stmt for f in inline.port.unsupported), \
        (stmt, inline.port.unsupported)
    fixed = msmagic.parity(LAYER_IN_FORWARD.format(init="        self.proj = nn.Linear(8, 8)", project="self.proj"))
    assert fixed.ok, fixed.summary()
    assert fixed.row("out").status == "match"
    assert not [f for f in fixed.port.unsupported if f.rule_id == "MOD004"]


NANOGPT_DICT = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class GPT(nn.Module):
    def __init__(self, n_layer=2):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(10, 4),
            h=nn.ModuleList([nn.Linear(4, 4) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(4),
        ))
        self.heads = nn.ModuleDict({HEADS})
    def forward(self, idx):
        x = self.transformer.wte(idx)
        for block in self.transformer.h:
            x = x + block(x)
        x = self.transformer["ln_f"](x)
        return self.heads["a"](x) + self.heads.b(x)
model = GPT()
out = model(torch.tensor([[1, 2, 3]]))
count = len(list(model.parameters()))
keys = list(model.transformer.keys())
has = "h" in model.transformer and "x" not in model.transformer
size = len(model.heads)
"""


@pytest.mark.parametrize("heads", [
    '{"a": nn.Sequential(nn.Linear(4, 2)), "b": nn.Linear(4, 2)}',
    '[("a", nn.Sequential(nn.Linear(4, 2))), ("b", nn.Linear(4, 2))]',
    'dict(a=nn.Sequential(nn.Linear(4, 2)), b=nn.Linear(4, 2))',
])
def test_a_module_dict_holding_containers_keeps_them(heads):
    """nanoGPT's ``nn.ModuleDict(dict(wte=..., h=nn.ModuleList([...])))``: MindSpore's
    CellDict raises TypeError for a CellList or SequentialCell value, so the dict becomes a
    Cell defined in the cell that holds any cells; item and attribute access, iteration,
    ``in``, ``len`` and the parameters (synchronised by name) all agree."""
    run = pair(NANOGPT_DICT.replace("{HEADS}", heads))
    assert run.agree("out", "count", "has", "size"), run.explain()
    assert run.ms_ns["keys"] == run.torch_ns["keys"] == ["wte", "h", "ln_f"]
    params = [r for r in run.rows if r.name.startswith("model.")]
    assert len(params) == 11 and all(r.status == "match" for r in params), run.explain()
    assert "self.transformer = ModuleDict(dict(" in run.port.code
    assert "self.heads = ModuleDict(" in run.port.code and "nn.CellDict(" not in run.port.code
    assert not run.port.unsupported, run.port.unsupported
