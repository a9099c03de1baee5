"""Verification cases for torch.distributions (rules DST*) and utilities (rules UTL*).

Distribution objects are bound to names starting with ``_`` (or used inline): a
MindSpore distribution is a parameterless Cell, which lockstep reports as "module on
one side only" when compared by name."""

from __future__ import annotations

from msmagic.apis.cases import case, flagged

_D = """
    import torch
    from torch.distributions import Normal, Bernoulli, Categorical, Uniform, Exponential
    x = torch.tensor([0.5, 2.5])
"""

case("torch.distributions.Normal", _D + """
    lp = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).log_prob(x)
    lq = Normal(loc=0.0, scale=2.0).log_prob(x)
""")
case("torch.distributions.Uniform", _D + """
    c = Uniform(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0])).cdf(x)
""")
case("torch.distributions.Exponential", _D + """
    lp = Exponential(torch.tensor([0.5, 2.0])).log_prob(x)
""")
case("torch.distributions.Bernoulli", _D + """
    lb = Bernoulli(torch.tensor([0.2, 0.7])).log_prob(torch.tensor([1.0, 0.0]))
""")
case("torch.distributions.Bernoulli", _D + """
    lb = Bernoulli(logits=torch.tensor([0.3, -1.0])).log_prob(torch.tensor([1.0, 0.0]))
""")
case("torch.distributions.Categorical", _D + """
    p = torch.tensor([[1.0, 2.0, 1.0], [0.5, 0.2, 0.3]])
    lc = Categorical(p).log_prob(torch.tensor([2, 0]))
""")
case("torch.distributions.Categorical", _D + """
    hc = Categorical(logits=torch.tensor([[1.0, 2.0, 1.0], [0.5, 0.2, 0.3]])).entropy()
""")
case("Distribution.log_prob", _D + """
    lp = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).log_prob(x)
""")
case("Distribution.cdf", _D + """
    c = Exponential(torch.tensor([0.5, 2.0])).cdf(x)
""")
case("Distribution.entropy", _D + """
    h = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).entropy()
""")
case("Distribution.mean", _D + """
    m = Uniform(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0])).mean
""")
case("Distribution.stddev", _D + """
    s = Exponential(torch.tensor([0.5, 2.0])).stddev
""")
case("Distribution.variance", _D + """
    v = Bernoulli(torch.tensor([0.2, 0.7])).variance
""")
case("Distribution.sample", _D + """
    s = Normal(torch.zeros(2), torch.ones(2)).sample((3,))
    shape = tuple(s.shape)
    b = Bernoulli(torch.tensor([0.2, 0.7])).sample((4,))
    c = Categorical(torch.tensor([0.2, 0.8])).sample((5,))
    lp = Normal(torch.zeros(2), torch.ones(2)).log_prob(s)
""")
case("Distribution.rsample", _D + """
    s = Normal(torch.zeros(2), torch.ones(2)).rsample((3,))
    shape = tuple(s.shape)
""")
case("Distribution.mode", _D + """
    m = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).mode
""")
case("Distribution.loc", _D + """
    mu = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).loc
""")
case("Distribution.scale", _D + """
    sd = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).scale
""")
case("torch.distributions.kl_divergence", _D + """
    from torch.distributions import kl_divergence
    _p = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    _q = Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
    kl = kl_divergence(_p, _q)
    _a = Categorical(torch.tensor([[0.2, 0.8], [0.5, 0.5]]))
    _b = Categorical(torch.tensor([[0.5, 0.5], [0.1, 0.9]]))
    kc = kl_divergence(_a, _b)
""")

_U = """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0])
    v = torch.tensor([1.0, 0.5, -1.0])
"""
case("torch.autograd.functional.jacobian", _U + """
    J = torch.autograd.functional.jacobian(torch.sin, x)
""")
case("torch.autograd.functional.hessian", _U + """
    H = torch.autograd.functional.hessian(torch.sum, x)
""")
case("torch.autograd.functional.jvp", _U + """
    out, jv = torch.autograd.functional.jvp(torch.exp, x, v)
""")
case("torch.autograd.functional.vjp", _U + """
    out, vj = torch.autograd.functional.vjp(torch.sin, x, v)
""")
case("torch.allclose", _U + """
    same = torch.allclose(x, x + 1e-7)
    near = torch.allclose(x, x + 0.1, atol=0.2)
    far = torch.allclose(x, v)
""")
case("torch.bucketize", _U + """
    b = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), x)
    r = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), x, right=True)
""")
case("torch.as_tensor", _U + """
    c = torch.as_tensor([1.0, 2.0], dtype=torch.float64)
    d = torch.as_tensor(x)
""")


case("torch.nn.utils.rnn.pad_sequence", """
    import torch
    from torch.nn.utils.rnn import pad_sequence
    seqs = [torch.ones(3, 2), torch.full((1, 2), 2.0), torch.zeros(2, 2)]
    padded = pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    time_major = pad_sequence(seqs)
""")
case("torch.nn.utils.parameters_to_vector", """
    import torch
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    n = vec.numel()
""")

# typed tensor constructors (DAT007): data in, the matching dtype out
for _name, _data in (("DoubleTensor", "[1.5, -2.0]"), ("HalfTensor", "[1.5, -2.0]"),
                     ("BFloat16Tensor", "[1.5, -2.0]"), ("IntTensor", "[3, -1]"),
                     ("ShortTensor", "[3, -1]"), ("CharTensor", "[3, -1]"),
                     ("ByteTensor", "[3, 1]"), ("BoolTensor", "[True, False]")):
    case(f"torch.{_name}", f"""
        import torch
        out = torch.{_name}({_data})
    """)

case("torch.backends.mps.is_built", """
    import torch
    built = torch.backends.mps.is_built()
    out = torch.tensor(float(built))
""")

case("object.dataset", """
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    data = TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))
    loader = DataLoader(data, batch_size=4)
    n = len(loader.dataset)
""")

# torchvision cannot be installed beside the CPU torch here: the transforms the port
# leaves as they are must be flagged; InterpolationMode's members are ported (untested)
for _name in ("ColorJitter", "FiveCrop", "GaussianBlur", "Grayscale", "Lambda", "PILToTensor", "Pad",
              "RandomAffine", "RandomApply", "RandomChoice", "RandomCrop", "RandomErasing",
              "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip",
              "ToPILImage"):
    flagged(f"torchvision.transforms.{_name}", f"""
        import torchvision.transforms as T
        t = T.{_name}()
    """)
for _name in ("NEAREST", "BILINEAR", "BICUBIC"):
    case(f"torchvision.transforms.InterpolationMode.{_name}", f"""
        import torchvision.transforms as T
        mode = T.InterpolationMode.{_name}
    """)


# data loading (LDR*): msmagic/apis/data_cases.py

case("torch.optim.lr_scheduler.LRScheduler", """
    import torch
    class Halving(torch.optim.lr_scheduler.LRScheduler):
        def get_lr(self):
            return [base_lr * 0.5 ** self.last_epoch for base_lr in self.base_lrs]
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.Adam([p], lr=0.1)
    sched = Halving(opt)
    rates = []
    for _ in range(3):
        opt.step()
        sched.step()
        rates.append(float(opt.param_groups[0]["lr"]))
""")

case("torch.nn.Embedding.from_pretrained", """
    import torch
    import torch.nn as nn
    table = torch.arange(12.0).reshape(4, 3) / 4
    frozen = nn.Embedding.from_pretrained(table)
    a = frozen(torch.tensor([[3, 0], [1, 1]]))
    b = nn.Embedding.from_pretrained(table * 2, freeze=False)(torch.tensor([2]))
""")

for _check in ("isfile", "exists"):
    case(f"object.{_check}", f"""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        model_file = os.path.join(tempfile.mkdtemp(), "net.tar")
        before = int(os.path.{_check}(model_file))
        torch.save(nn.Linear(3, 2).state_dict(), model_file)
        after = int(os.path.{_check}(model_file))
    """)
