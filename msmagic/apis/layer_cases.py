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
