from msmagic.apis.cases import case

# Verification cases for torch.nn layers and torch.nn.functional APIs that PyTorch's
# op_db / module_db do not sample (or that the harness cannot build from them). Each case
# binds the values to compare; one case per argument pattern real code uses.

case("torch.nn.functional.fold", """
    import torch
    import torch.nn.functional as F
    cols = torch.randn(2, 3 * 2 * 2, 12)
    y = F.fold(cols, output_size=(4, 5), kernel_size=2)
""")
case("torch.nn.functional.fold", """
    import torch
    import torch.nn.functional as F
    cols = torch.randn(1, 2 * 3 * 3, 9)
    y = F.fold(cols, (5, 5), (3, 3), dilation=1, padding=1, stride=2)
""")
case("torch.nn.Fold", """
    import torch
    import torch.nn as nn
    fold = nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
    y = fold(torch.randn(2, 12, 12))
""")
case("torch.nn.Unfold", """
    import torch
    import torch.nn as nn
    unfold = nn.Unfold(kernel_size=2, stride=1)
    y = unfold(torch.randn(2, 3, 4, 5))
""")
case("torch.nn.functional.affine_grid", """
    import torch
    import torch.nn.functional as F
    theta = torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]]]).repeat(2, 1, 1)
    grid = F.affine_grid(theta, [2, 3, 4, 5], align_corners=False)
""")
case("torch.nn.functional.affine_grid", """
    import torch
    import torch.nn.functional as F
    theta = torch.tensor([[[1.0, 0.5, 0.0], [-0.5, 1.0, 0.25]]])
    grid = F.affine_grid(theta, size=(1, 1, 3, 6), align_corners=True)
""")
case("torch.nn.functional.gumbel_softmax", """
    import torch
    import torch.nn.functional as F
    logits = torch.randn(4, 6)
    y = F.gumbel_softmax(logits, tau=0.5)
""")
case("torch.nn.functional.gumbel_softmax", """
    import torch
    import torch.nn.functional as F
    logits = torch.randn(3, 5)
    y = F.gumbel_softmax(logits, tau=1.0, hard=True, dim=-1)
    rows = y.sum(dim=-1)
""")
case("torch.nn.functional.lp_pool1d", """
    import torch
    import torch.nn.functional as F
    x = torch.rand(2, 3, 8)
    y = F.lp_pool1d(x, 2, 3, stride=2)
""")
case("torch.nn.functional.lp_pool2d", """
    import torch
    import torch.nn.functional as F
    x = torch.rand(2, 3, 6, 6)
    y = F.lp_pool2d(x, norm_type=2, kernel_size=2)
""")
case("torch.nn.functional.embedding", """
    import torch
    import torch.nn.functional as F
    weight = torch.randn(10, 4)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    y = F.embedding(idx, weight)
""")
case("torch.nn.functional.embedding", """
    import torch
    import torch.nn.functional as F
    weight = torch.randn(6, 3)
    idx = torch.tensor([0, 2, 5, 0])
    y = F.embedding(idx, weight, padding_idx=0)
""")
for _d in (1, 2, 3):
    _shape = {1: "(2, 3, 8)", 2: "(2, 3, 4, 6)", 3: "(1, 2, 4, 4, 6)"}[_d]
    case(f"torch.nn.MaxUnpool{_d}d", f"""
    import torch
    import torch.nn as nn
    pool = nn.MaxPool{_d}d(2, stride=2, return_indices=True)
    unpool = nn.MaxUnpool{_d}d(2, stride=2)
    x = torch.randn{_shape}
    out, idx = pool(x)
    y = unpool(out, idx)
""")
case("torch.nn.TripletMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.TripletMarginLoss(margin=1.0, p=2)
    a, p, n = torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 8)
    out = loss(a, p, n)
""")
case("torch.nn.TripletMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.TripletMarginLoss(margin=0.5, swap=True, reduction="sum")
    a, p, n = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
    out = loss(a, p, n)
""")

# --- NNF001: functions the port defines with mindspore.ops
case("torch.nn.functional.layer_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 4)
    w, b = torch.randn(3, 4), torch.randn(3, 4)
    y = F.layer_norm(x, (3, 4), w, b)
""")
case("torch.nn.functional.layer_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 6)
    y = F.layer_norm(x, normalized_shape=[6], weight=torch.ones(6), bias=torch.zeros(6), eps=1e-6)
""")
case("torch.nn.functional.layer_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 5, 8)
    y = F.layer_norm(x, x.shape[-1:])
""")
case("torch.nn.functional.instance_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 4, 5)
    y = F.instance_norm(x)
""")
case("torch.nn.functional.instance_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 7)
    y = F.instance_norm(x, weight=torch.randn(3), bias=torch.randn(3), eps=1e-3)
""")
case("torch.nn.functional.kl_div", """
    import torch
    import torch.nn.functional as F
    logp = F.log_softmax(torch.randn(4, 5), dim=1)
    q = F.softmax(torch.randn(4, 5), dim=1)
    a = F.kl_div(logp, q, reduction="batchmean")
    b = F.kl_div(logp, q, reduction="sum")
    c = F.kl_div(logp, q)
""")
case("torch.nn.functional.kl_div", """
    import torch
    import torch.nn.functional as F
    logp = F.log_softmax(torch.randn(3, 4), dim=-1)
    logq = F.log_softmax(torch.randn(3, 4), dim=-1)
    a = F.kl_div(logp, logq, reduction="none", log_target=True)
""")
case("torch.nn.functional.kl_div", """
    import torch
    import torch.nn.functional as F
    logp = F.log_softmax(torch.randn(3, 4), dim=-1)
    q = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0]])
    a = F.kl_div(logp, q, None, None, "batchmean")
""")
case("torch.nn.functional.soft_margin_loss", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    t = torch.sign(torch.randn(4, 5))
    a = F.soft_margin_loss(x, t)
    b = F.soft_margin_loss(x, t, reduction="none")
""")
case("torch.nn.functional.pairwise_distance", """
    import torch
    import torch.nn.functional as F
    a, b = torch.randn(5, 8), torch.randn(5, 8)
    d = F.pairwise_distance(a, b)
    d1 = F.pairwise_distance(a, b, p=1.0, keepdim=True)
""")
case("torch.nn.functional.pairwise_distance", """
    import torch
    import torch.nn.functional as F
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    d = F.pairwise_distance(a, b, 3.0, 1e-4)
""")
case("torch.nn.functional.poisson_nll_loss", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 3)
    t = torch.poisson(torch.rand(4, 3) * 4)
    a = F.poisson_nll_loss(x, t)
    b = F.poisson_nll_loss(x, t, reduction="sum")
""")
case("torch.nn.functional.poisson_nll_loss", """
    import torch
    import torch.nn.functional as F
    x = torch.rand(4, 3) + 0.1
    t = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 0.0], [5.0, 1.0, 2.0], [7.0, 0.0, 1.0]])
    a = F.poisson_nll_loss(x, t, log_input=False, full=True)
""")
case("torch.nn.functional.local_response_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 6, 4, 4)
    y = F.local_response_norm(x, 3)
""")
case("torch.nn.functional.local_response_norm", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 5, 7)
    y = F.local_response_norm(x, size=4, alpha=1e-2, beta=0.5, k=2.0)
""")
case("torch.nn.functional.bilinear", """
    import torch
    import torch.nn.functional as F
    x1, x2 = torch.randn(4, 3), torch.randn(4, 5)
    w, b = torch.randn(2, 3, 5), torch.randn(2)
    y = F.bilinear(x1, x2, w, b)
""")
case("torch.nn.functional.bilinear", """
    import torch
    import torch.nn.functional as F
    x1, x2 = torch.randn(2, 3, 3), torch.randn(2, 3, 4)
    y = F.bilinear(x1, x2, torch.randn(6, 3, 4))
""")
case("torch.nn.functional.scaled_dot_product_attention", """
    import torch
    import torch.nn.functional as F
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
    out = F.scaled_dot_product_attention(q, k, v)
""")
case("torch.nn.functional.scaled_dot_product_attention", """
    import torch
    import torch.nn.functional as F
    q, k, v = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
""")
case("torch.nn.functional.scaled_dot_product_attention", """
    import torch
    import torch.nn.functional as F
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    mask = torch.tensor([[True, True, False, True, True]] * 4)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0)
""")
case("torch.nn.functional.scaled_dot_product_attention", """
    import torch
    import torch.nn.functional as F
    q, k, v = torch.randn(3, 4, 8), torch.randn(3, 6, 8), torch.randn(3, 6, 8)
    bias = torch.randn(4, 6)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
""")

# --- NNF002: Cells the port defines
case("torch.nn.KLDivLoss", """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
    out = loss(F.log_softmax(torch.randn(3, 4), dim=1), F.log_softmax(torch.randn(3, 4), dim=1))
""")
case("torch.nn.SoftMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.SoftMarginLoss()
    out = loss(torch.randn(4, 5), torch.sign(torch.randn(4, 5)))
""")
case("torch.nn.SoftMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.SoftMarginLoss(reduction="sum")
    out = loss(torch.randn(6), torch.sign(torch.randn(6)))
""")
case("torch.nn.PairwiseDistance", """
    import torch
    import torch.nn as nn
    dist = nn.PairwiseDistance()
    d = dist(torch.randn(4, 6), torch.randn(4, 6))
""")
case("torch.nn.PairwiseDistance", """
    import torch
    import torch.nn as nn
    dist = nn.PairwiseDistance(p=1.0, keepdim=True)
    d = dist(torch.randn(4, 6), torch.randn(4, 6))
""")
case("torch.nn.CosineSimilarity", """
    import torch
    import torch.nn as nn
    cos = nn.CosineSimilarity(dim=1, eps=1e-6)
    s = cos(torch.randn(4, 6), torch.randn(4, 6))
""")
case("torch.nn.CosineSimilarity", """
    import torch
    import torch.nn as nn
    cos = nn.CosineSimilarity()
    s = cos(torch.randn(2, 3, 5), torch.randn(2, 3, 5))
""")
for _d, _shape in ((1, "(2, 3, 7)"), (2, "(2, 3, 4, 5)"), (3, "(2, 3, 3, 4, 2)")):
    case(f"torch.nn.InstanceNorm{_d}d", f"""
    import torch
    import torch.nn as nn
    norm = nn.InstanceNorm{_d}d(3)
    y = norm(torch.randn{_shape})
""")
    case(f"torch.nn.InstanceNorm{_d}d", f"""
    import torch
    import torch.nn as nn
    norm = nn.InstanceNorm{_d}d(3, eps=1e-3, affine=True)
    y = norm(torch.randn{_shape})
""")

# --- NNF003: in-place functional activations
case("torch.nn.functional.relu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    F.relu_(x)
""")
case("torch.nn.functional.elu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    F.elu_(x, alpha=1.0)
""")
case("torch.nn.functional.elu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    y = F.elu_(x)
""")
case("torch.nn.functional.leaky_relu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    F.leaky_relu_(x)
""")
case("torch.nn.functional.leaky_relu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    F.leaky_relu_(x, negative_slope=0.2)
""")
case("torch.nn.functional.hardtanh_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4) * 2
    F.hardtanh_(x, min_val=-0.5, max_val=1.5)
""")
case("torch.nn.functional.hardtanh_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4) * 2
    F.hardtanh_(x)
""")
case("torch.nn.functional.threshold_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(3, 4)
    F.threshold_(x, 0.1, 20.0)
""")

# --- more NNF001/NNF002 formulas
case("torch.nn.functional.fold", """
    import torch
    import torch.nn.functional as F
    cols = torch.randn(12, 12)
    y = F.fold(cols, 4, kernel_size=(2, 2), padding=(1, 0))
""")
case("torch.nn.functional.unfold", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 5, 6)
    y = F.unfold(x, kernel_size=(2, 3), stride=(1, 2), padding=1)
""")
case("torch.nn.functional.unfold", """
    import torch
    import torch.nn.functional as F
    y = F.unfold(torch.randn(3, 4, 4), 2)
""")
case("torch.nn.Unfold", """
    import torch
    import torch.nn as nn
    unfold = nn.Unfold((3, 3), dilation=1, padding=1, stride=2)
    y = unfold(torch.randn(1, 2, 5, 5))
""")
case("torch.nn.Fold", """
    import torch
    import torch.nn as nn
    fold = nn.Fold((5, 5), (3, 3), padding=1, stride=2)
    y = fold(torch.randn(1, 18, 9))
""")
case("torch.nn.functional.triplet_margin_with_distance_loss", """
    import torch
    import torch.nn.functional as F
    a, p, n = torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 8)
    out = F.triplet_margin_with_distance_loss(a, p, n)
    out2 = F.triplet_margin_with_distance_loss(a, p, n, margin=0.5, swap=True, reduction="none")
""")
case("torch.nn.functional.triplet_margin_with_distance_loss", """
    import torch
    import torch.nn.functional as F
    a, p, n = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
    out = F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y))
""")
case("torch.nn.TripletMarginWithDistanceLoss", """
    import torch
    import torch.nn as nn
    loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(), margin=2.0)
    a, p, n = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
    out = loss(a, p, n)
""")
case("torch.nn.TripletMarginWithDistanceLoss", """
    import torch
    import torch.nn as nn
    loss = nn.TripletMarginWithDistanceLoss()
    a, p, n = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
    out = loss(a, p, n)
""")
case("torch.nn.functional.multi_margin_loss", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    t = torch.tensor([0, 4, 2, 1])
    a = F.multi_margin_loss(x, t)
    b = F.multi_margin_loss(x, t, p=2, margin=0.5, weight=torch.rand(5), reduction="none")
""")
case("torch.nn.MultiLabelMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.MultiLabelMarginLoss()
    x = torch.randn(2, 4)
    t = torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0]])
    out = loss(x, t)
""")
case("torch.nn.MultiLabelMarginLoss", """
    import torch
    import torch.nn as nn
    loss = nn.MultiLabelMarginLoss(reduction="none")
    out = loss(torch.randn(3, 5), torch.tensor([[4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 0, 0, 0]]))
""")
case("torch.nn.functional.multilabel_margin_loss", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 4)
    t = torch.tensor([[3, 0, -1, 1], [1, 2, -1, 0]])
    out = F.multilabel_margin_loss(x, t)
    out2 = F.multilabel_margin_loss(x, t, reduction="sum")
""")

# --- transposed convolutions and pooling the port defines
case("torch.nn.functional.conv_transpose2d", """
    import torch
    import torch.nn.functional as F
    x, w, b = torch.randn(2, 4, 5, 6), torch.randn(4, 3, 3, 2), torch.randn(3)
    y = F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)
""")
case("torch.nn.functional.conv_transpose1d", """
    import torch
    import torch.nn.functional as F
    x, w = torch.randn(2, 4, 7), torch.randn(4, 3, 3)
    y = F.conv_transpose1d(x, w, stride=2, padding=1)
""")
case("torch.nn.functional.conv_transpose3d", """
    import torch
    import torch.nn.functional as F
    x, w = torch.randn(1, 4, 3, 4, 5), torch.randn(4, 2, 2, 3, 2)
    y = F.conv_transpose3d(x, w, torch.randn(2), stride=2, padding=1)
""")
case("torch.nn.functional.adaptive_avg_pool1d", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 12)
    y = F.adaptive_avg_pool1d(x, 5)
""")
case("torch.nn.functional.adaptive_max_pool1d", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 10)
    y = F.adaptive_max_pool1d(x, 4)
    v, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
""")
case("torch.nn.AdaptiveAvgPool1d", """
    import torch
    import torch.nn as nn
    pool = nn.AdaptiveAvgPool1d(output_size=5)
    y = pool(torch.randn(3, 12))
""")
case("torch.nn.AdaptiveMaxPool1d", """
    import torch
    import torch.nn as nn
    pool = nn.AdaptiveMaxPool1d(4, return_indices=True)
    v, i = pool(torch.randn(2, 3, 9))
""")
case("torch.nn.functional.avg_pool3d", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 4, 4, 6)
    y = F.avg_pool3d(x, 2)
    z = F.avg_pool3d(x, kernel_size=(2, 2, 3), stride=1, padding=1)
""")
case("torch.nn.functional.max_pool1d", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 9)
    y = F.max_pool1d(x, 3)
    z = F.max_pool1d(x, kernel_size=2, stride=1, padding=1)
""")
case("torch.nn.functional.max_pool1d", """
    import torch
    import torch.nn.functional as F
    v, i = F.max_pool1d(torch.randn(2, 3, 8), 2, return_indices=True)
""")

# --- dropout variants, rrelu, prelu (random ones: eval mode, or kind only)
case("torch.nn.functional.alpha_dropout", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    y = F.alpha_dropout(x, 0.2)
    z = F.alpha_dropout(x, p=0.3, training=True)
""")
case("torch.nn.functional.feature_alpha_dropout", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 4, 4)
    y = F.feature_alpha_dropout(x, 0.5, training=False)
    z = F.feature_alpha_dropout(x, p=0.3, training=True)
""")
case("torch.nn.AlphaDropout", """
    import torch
    import torch.nn as nn
    drop = nn.AlphaDropout(0.2)
    drop.eval()
    y = drop(torch.randn(4, 5))
""")
case("torch.nn.FeatureAlphaDropout", """
    import torch
    import torch.nn as nn
    drop = nn.FeatureAlphaDropout(p=0.3)
    drop.eval()
    y = drop(torch.randn(2, 3, 4))
""")
case("torch.nn.RReLU", """
    import torch
    import torch.nn as nn
    act = nn.RReLU(0.1, 0.3)
    act.eval()
    y = act(torch.randn(4, 5))
""")
case("torch.nn.RReLU", """
    import torch
    import torch.nn as nn
    act = nn.RReLU()
    act.eval()
    y = act(torch.randn(3, 4))
""")
case("torch.nn.functional.rrelu", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    y = F.rrelu(x)
    z = F.rrelu(x, 0.1, 0.4, training=True)
""")
case("torch.nn.functional.rrelu_", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    F.rrelu_(x, 0.2, 0.3)
""")
case("torch.nn.functional.prelu", """
    import torch
    import torch.nn.functional as F
    x = torch.randn(2, 3, 4, 4)
    y = F.prelu(x, torch.tensor([0.1, 0.2, 0.3]))
    z = F.prelu(x, torch.tensor([0.25]))
""")
case("torch.nn.init.dirac_", """
    import torch
    import torch.nn as nn
    conv = nn.Conv2d(3, 3, 3, padding=1)
    nn.init.dirac_(conv.weight)
    w = conv.weight
    x = torch.randn(1, 3, 5, 5)
    y = conv(x) - conv.bias.reshape(1, 3, 1, 1)
""")
case("torch.nn.init.dirac_", """
    import torch
    import torch.nn as nn
    conv = nn.Conv3d(4, 4, 3)
    nn.init.dirac_(conv.weight, groups=2)
    w = conv.weight
""")
case("torch.nn.init._calculate_fan_in_and_fan_out", """
    import torch
    import torch.nn as nn
    conv = nn.Conv2d(3, 8, (3, 5))
    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(conv.weight)
    lin = nn.Linear(6, 2)
    fans = nn.init._calculate_fan_in_and_fan_out(lin.weight)
""")
case("torch.nn.utils.vector_to_parameters", """
    import torch
    import torch.nn as nn
    layer = nn.Linear(3, 2)
    nn.utils.vector_to_parameters(torch.arange(8, dtype=torch.float32) / 8, layer.parameters())
    w = layer.weight
    y = layer(torch.ones(1, 3))
""")
case("torch.nn.utils.vector_to_parameters", """
    import torch
    import torch.nn as nn
    from torch.nn.utils import parameters_to_vector, vector_to_parameters
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    vec = parameters_to_vector(model.parameters())
    vector_to_parameters(vec * 2, model.parameters())
    y = model(torch.ones(4, 2))
""")
case("torch.nn.utils.rnn.unpad_sequence", """
    import torch
    from torch.nn.utils.rnn import unpad_sequence
    padded = torch.randn(4, 3, 2)
    back = unpad_sequence(padded, torch.tensor([4, 2, 3]))
    first = back[0]
    second = back[1]
""")
case("torch.nn.utils.rnn.unpad_sequence", """
    import torch
    import torch.nn as nn
    padded = torch.randn(3, 5, 2)
    back = nn.utils.rnn.unpad_sequence(padded, torch.tensor([5, 1, 3]), batch_first=True)
    last = back[2]
""")
case("torch.nn.modules.utils._pair", """
    from torch.nn.modules.utils import _pair
    a = _pair(3)
    b = _pair((1, 2))
    c = list(_pair([4, 5]))
""")
case("torch.nn.modules.utils._single", """
    from torch.nn.modules.utils import _single
    a = _single(3)
""")
case("torch.nn.modules.utils._triple", """
    from torch.nn.modules.utils import _triple
    a = _triple(2)
    b = _triple((1, 2, 3))
""")
case("torch.nn.modules.utils._ntuple", """
    from torch.nn.modules.utils import _ntuple
    _quadruple = _ntuple(4, "_quadruple")
    a = _quadruple(1)
    b = _quadruple([1, 2, 3, 4])
""")
