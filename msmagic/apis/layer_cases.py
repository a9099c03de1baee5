from msmagic.apis.cases import case

# Verification cases for the layers of msmagic/rules/more_layers.py that PyTorch's
# module_db does not sample (or samples only with inputs MindSpore refuses loudly: see
# each case). Each case binds the values to compare; one case per argument pattern.

case("torch.nn.PixelShuffle", """
    import torch
    import torch.nn as nn
    layer = nn.PixelShuffle(2)
    x = torch.randn(1, 8, 3, 3)
    y = layer(x)
""")
case("torch.nn.PixelShuffle", """
    import torch
    import torch.nn as nn
    layer = nn.PixelShuffle(upscale_factor=3)
    x = torch.randn(2, 9, 2, 4)
    y = layer(x)
""")
case("torch.nn.PixelUnshuffle", """
    import torch
    import torch.nn as nn
    layer = nn.PixelUnshuffle(2)
    x = torch.randn(2, 3, 4, 6)
    y = layer(x)
""")
case("torch.nn.PixelUnshuffle", """
    import torch
    import torch.nn as nn
    layer = nn.PixelUnshuffle(downscale_factor=3)
    x = torch.randn(1, 2, 6, 3)
    y = layer(x)
""")
case("torch.nn.ChannelShuffle", """
    import torch
    import torch.nn as nn
    layer = nn.ChannelShuffle(2)
    x = torch.randn(2, 6, 3, 3)
    y = layer(x)
""")
case("torch.nn.ChannelShuffle", """
    import torch
    import torch.nn as nn
    layer = nn.ChannelShuffle(groups=3)
    x = torch.randn(1, 6, 4)
    y = layer(x)
""")
case("torch.nn.Unflatten", """
    import torch
    import torch.nn as nn
    layer = nn.Unflatten(1, (2, 5))
    x = torch.randn(3, 10)
    y = layer(x)
""")
case("torch.nn.Unflatten", """
    import torch
    import torch.nn as nn
    layer = nn.Unflatten(dim=-1, unflattened_size=(3, 2))
    x = torch.randn(2, 4, 6)
    y = layer(x)
""")
case("torch.nn.Hardsigmoid", """
    import torch
    import torch.nn as nn
    layer = nn.Hardsigmoid()
    x = torch.linspace(-5, 5, 24).reshape(2, 3, 4)
    y = layer(x)
""")
case("torch.nn.Hardsigmoid", """
    import torch
    import torch.nn as nn
    layer = nn.Hardsigmoid(inplace=False)
    x = torch.randn(4, 5) * 4
    y = layer(x)
""")
# module_db samples MarginRankingLoss with an int64 target, which MindSpore refuses with
# a TypeError (the target must have the inputs' dtype); a float target computes the same.
case("torch.nn.MarginRankingLoss", """
    import torch
    import torch.nn as nn
    loss = nn.MarginRankingLoss()
    a = torch.randn(8)
    b = torch.randn(8)
    t = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    out = loss(a, b, t)
""")
case("torch.nn.MarginRankingLoss", """
    import torch
    import torch.nn as nn
    loss = nn.MarginRankingLoss(0.5, reduction="none")
    a = torch.randn(2, 6)
    b = torch.randn(2, 6)
    t = torch.sign(torch.randn(2, 6))
    out = loss(a, b, t)
""")
case("torch.nn.MarginRankingLoss", """
    import torch
    import torch.nn as nn
    loss = nn.MarginRankingLoss(margin=0.1, reduction="sum")
    a = torch.randn(6)
    b = torch.randn(6)
    t = torch.ones(6)
    out = loss(a, b, t)
""")
# module_db samples KLDivLoss on standard-normal inputs: targets with negative or NaN
# entries, where PyTorch gives NaN and MindSpore 0. On log-probabilities and
# probabilities (zeros included) the two agree.
case("torch.nn.KLDivLoss", """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    loss = nn.KLDivLoss()
    logp = F.log_softmax(torch.randn(4, 5), dim=1)
    q = F.softmax(torch.randn(4, 5), dim=1)
    out = loss(logp, q)
""")
case("torch.nn.KLDivLoss", """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    loss = nn.KLDivLoss(reduction="batchmean")
    logp = F.log_softmax(torch.randn(3, 4), dim=1)
    q = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0]])
    out = loss(logp, q)
""")
case("torch.nn.KLDivLoss", """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    loss = nn.KLDivLoss(reduction="sum", log_target=False)
    logp = F.log_softmax(torch.randn(2, 3, 4), dim=-1)
    q = F.softmax(torch.randn(2, 3, 4), dim=-1)
    out = loss(logp, q)
""")
# module_db samples LocalResponseNorm on 3-D input, which MindSpore's LRN refuses
# (ValueError: rank must be 4); on 4-D input an odd size computes the same.
case("torch.nn.LocalResponseNorm", """
    import torch
    import torch.nn as nn
    layer = nn.LocalResponseNorm(3)
    x = torch.randn(2, 6, 4, 4)
    y = layer(x)
""")
case("torch.nn.LocalResponseNorm", """
    import torch
    import torch.nn as nn
    layer = nn.LocalResponseNorm(5, 0.01, 0.5, 2.0)
    x = torch.randn(1, 8, 3, 3) * 3
    y = layer(x)
""")
case("torch.nn.LocalResponseNorm", """
    import torch
    import torch.nn as nn
    layer = nn.LocalResponseNorm(size=3, alpha=0.001, beta=0.75, k=1.0)
    x = torch.randn(2, 4, 5, 3)
    y = layer(x)
""")

case("torch.nn.UpsamplingNearest2d", """
    import torch
    import torch.nn as nn
    x = torch.arange(12.0).reshape(1, 1, 3, 4)
    y = nn.UpsamplingNearest2d(scale_factor=2)(x)
    z = nn.UpsamplingNearest2d(size=(5, 7))(x)
""")
case("torch.nn.UpsamplingBilinear2d", """
    import torch
    import torch.nn as nn
    x = torch.arange(12.0).reshape(1, 1, 3, 4)
    y = nn.UpsamplingBilinear2d(scale_factor=2)(x)
    z = nn.UpsamplingBilinear2d(size=(5, 7))(x)
""")

# Layer attributes (LAY007): renamed reads, and reads on receivers of unknown kind (a
# function's parameter, a loop over a ModuleList), chosen when the code runs.
case("Module.groups", """
    import torch.nn as nn
    conv = nn.Conv2d(4, 6, 3, groups=2)
    up = nn.ConvTranspose2d(4, 6, 3, groups=2)
    groups = (conv.groups, up.groups)
""")
case("Module.eps", """
    import torch.nn as nn
    ln = nn.LayerNorm(6, eps=1e-6)
    bn = nn.BatchNorm3d(5, eps=1e-3)
    eps = (ln.eps, bn.eps)
""")
case("Module.num_features", """
    import torch.nn as nn
    bn = nn.BatchNorm3d(5)
    n = bn.num_features
""")
case("Module.in1_features", """
    import torch.nn as nn
    bil = nn.Bilinear(2, 3, 4)
    sizes = (bil.in1_features, bil.in2_features, bil.out_features)
""")
case("Module.in2_features", """
    import torch.nn as nn
    bil = nn.Bilinear(5, 3, 2)
    n = bil.in2_features
""")
case("Module.negative_slope", """
    import torch.nn as nn
    act = nn.LeakyReLU(0.2)
    slope = act.negative_slope
""")
case("Module.dim", """
    import torch.nn as nn
    dims = (nn.Softmin(dim=1).dim, nn.Unflatten(2, (2, 3)).dim)
""")
case("object.in_features", """
    import torch.nn as nn
    class Plain:
        in_features = 9
    def fan_in(layer):
        return layer.in_features
    layers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
    sizes = [fan_in(layer) for layer in layers] + [fan_in(Plain())]
""")
case("object.out_features", """
    import torch.nn as nn
    layers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2), nn.Bilinear(2, 3, 5)])
    sizes = [each.out_features for each in layers]
""")
case("object.num_embeddings", """
    import torch.nn as nn
    def rows(model):
        return model.embedding.num_embeddings
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(7, 3)
    n = rows(Net())
""")
case("object.embedding_dim", """
    import torch.nn as nn
    def width(emb):
        return emb.embedding_dim
    n = width(nn.Embedding(7, 3))
""")

# Tensor constructors and in-place fills (TNS007-TNS009)
case("Tensor.new", """
    import torch
    w = torch.ones(3, 2, dtype=torch.float64)
    h = w.new(2, 4, 5).zero_()
    n = w.new(3).zero_()
    d = w.new([1, 2, 3])
    e = w.new().shape
""")
case("Tensor.new_empty", """
    import torch
    w = torch.ones(3, 2, dtype=torch.float64)
    shape = w.new_empty(2, 3).shape
    kind = w.new_empty((4,), dtype=torch.int64).dtype
""")
case("Tensor.new_zeros", """
    import torch
    w = torch.ones(3, 2, dtype=torch.float64)
    z = w.new_zeros(2, 3)
    i = w.new_zeros((2, 3), dtype=torch.int64, device="cpu")
""")
case("Tensor.new_ones", """
    import torch
    w = torch.ones(3, 2)
    o = w.new_ones(4, 1, dtype=torch.float64)
""")
case("Tensor.new_full", """
    import torch
    w = torch.ones(3, 2, dtype=torch.float64)
    f = w.new_full((2, 2), 7)
    g = w.new_full([3], 1.5, dtype=torch.float32)
""")
case("Tensor.fill_", """
    import torch
    import torch.nn as nn
    layer = nn.Linear(3, 2)
    layer.bias.data.fill_(0.5)
    ints = torch.zeros(2, 3, dtype=torch.int64)
    ints.fill_(2.7)
    fresh = torch.zeros(2).fill_(3)
    y = layer(torch.ones(1, 3))
""")
case("Tensor.normal_", """
    import torch
    import torch.nn as nn
    layer = nn.Linear(64, 64)
    layer.weight.data.normal_(std=0.01)
    x = torch.zeros(100, 100, dtype=torch.float64)
    x.normal_(2.0, 0.5)
    stats = (float(layer.weight.std()) < 0.02, abs(float(x.mean()) - 2.0) < 0.05, abs(float(x.std()) - 0.5) < 0.05)
""")
case("Tensor.uniform_", """
    import torch
    x = torch.zeros(100, 100)
    x.uniform_(-0.5, 1.5)
    stats = (float(x.min()) >= -0.5, float(x.max()) <= 1.5, abs(float(x.mean()) - 0.5) < 0.05)
""")
case("Tensor.resize_", """
    import torch
    images = torch.arange(24.0).reshape(4, 1, 2, 3)
    images.resize_(4, 1, 6)
    flat = images.resize_(images.shape[0], 6)
""")

# Tensor methods with the keyword spellings real code uses (udacity: ps.topk(1, dim=1);
# uvadlc: qkv.chunk(3, dim=-1)), and the named tuples of max/topk/sort read by field on
# receivers of unknown kind (bentrevett: [conv.max(dim=-1).values for conv in conved])
case("Tensor.topk", """
    import torch
    ps = torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]])
    top_p, top_class = ps.topk(1, dim=1)
    low = ps.topk(2, dim=0, largest=False, sorted=True)
""")
case("Tensor.chunk", """
    import torch
    qkv = torch.arange(24.0).reshape(2, 12)
    q, k, v = qkv.chunk(3, dim=-1)
""")
case("object.values", """
    import torch
    def pooled(conved):
        return [conv.max(dim=-1).values for conv in conved]
    out = pooled([torch.tensor([[1., 5., 3.], [4., 2., 6.]]), torch.tensor([[0., -1.]])])
    top = torch.tensor([[0.1, 0.7, 0.2]]).topk(2, dim=1).values
""")
case("object.indices", """
    import torch
    def best(x):
        return x.max(dim=1, keepdim=True).indices, x.sort(descending=True).indices
    i, order = best(torch.tensor([[1., 5., 3.], [4., 2., 6.]]))
""")
case("Tensor.type", """
    import torch
    def mean_of(equals):
        return torch.mean(equals.type(torch.FloatTensor))
    accuracy = mean_of(torch.tensor([1, 2, 3]) == torch.tensor([1, 0, 3]))
""")
case("Tensor.transpose", """
    import torch
    def logits(q, k):
        return torch.matmul(q, k.transpose(-2, -1))
    x = torch.arange(24.0).reshape(2, 3, 4)
    out = logits(x, x)
""")
case("torch.dot", """
    import torch
    a = torch.tensor([1.0, 2.0, 3.0])
    b = torch.tensor([4.0, -5.0, 6.0])
    d = torch.dot(a, b)
    e = a.dot(b)
    i = torch.dot(torch.tensor([1, 2]), torch.tensor([3, 4]))
""")
case("torch.mm", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    w = torch.arange(12.0).reshape(3, 4) / 10
    y = torch.mm(x, w)
    z = x.mm(w)
""")
