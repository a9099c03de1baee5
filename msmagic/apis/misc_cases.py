"""Verification cases for the APIs notebooks use around the model code: per-batch
schedulers, torch.cuda housekeeping, autograd switches, signal windows, torch.testing
(imported by ``msmagic.apis.cases``)."""

from __future__ import annotations

from msmagic.apis.cases import case, flagged

_P = "torch.optim.lr_scheduler."


# --- per-batch schedulers: the rates after every step AND the parameters they trained


def _cycle_case(key: str, optimizer: str, make: str, steps: int) -> None:
    case(key, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 0.5 + 0.25
        model = nn.Linear(2, 1)
        loss_fn = nn.MSELoss()
        optimizer = {optimizer}
        scheduler = {make}
        first = optimizer.param_groups[0]["lr"]

        def train(steps):
            losses, rates = [], []
            for step in range(steps):
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                scheduler.step()
                losses.append(loss.item())
                rates.append(optimizer.param_groups[0]["lr"])
            return losses, rates

        losses, rates = train({steps})
        weight = model.weight
        bias = model.bias
    """)


_SGD = "torch.optim.SGD(model.parameters(), lr=0.1)"
_cycle_case(_P + "OneCycleLR", _SGD,
            "lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=10, cycle_momentum=False)", 10)
_cycle_case(_P + "OneCycleLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.OneCycleLR(optimizer, 0.3, epochs=3, steps_per_epoch=4, pct_start=0.25, "
            "anneal_strategy='linear', cycle_momentum=False, div_factor=10.0, final_div_factor=100.0)", 12)
_cycle_case(_P + "OneCycleLR", "torch.optim.AdamW(model.parameters(), lr=0.01)",
            "lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=12, cycle_momentum=False, "
            "three_phase=True)", 12)
_cycle_case(_P + "CyclicLR", _SGD,
            "lr_scheduler.CyclicLR(optimizer, base_lr=0.01, max_lr=0.2, step_size_up=3, cycle_momentum=False)", 14)
_cycle_case(_P + "CyclicLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, 2, 4, mode='triangular2', cycle_momentum=False)", 14)
_cycle_case(_P + "CyclicLR", "torch.optim.AdamW(model.parameters(), lr=0.01)",
            "lr_scheduler.CyclicLR(optimizer, 0.001, 0.05, step_size_up=3, mode='exp_range', gamma=0.9, "
            "cycle_momentum=False)", 10)
_cycle_case(_P + "CyclicLR", _SGD,
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x, "
            "scale_mode='iterations', cycle_momentum=False)", 9)

# the default cycle_momentum=True also cycles SGD's momentum (mindspore.nn.SGD reads its
# momentum Parameter every step), even from momentum=0
_cycle_case(_P + "OneCycleLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.OneCycleLR(optimizer, max_lr=0.3, total_steps=12)", 12)
_cycle_case(_P + "OneCycleLR", _SGD,
            "lr_scheduler.OneCycleLR(optimizer, 0.3, epochs=2, steps_per_epoch=5, base_momentum=0.8, "
            "max_momentum=0.9, three_phase=True, anneal_strategy='linear')", 10)
_cycle_case(_P + "CyclicLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, step_size_up=3)", 14)
_cycle_case(_P + "CyclicLR", _SGD,
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, 2, mode='exp_range', gamma=0.95, base_momentum=0.7, "
            "max_momentum=0.95, cycle_momentum=True)", 11)

# ReduceLROnPlateau reads a metric at run time; with Adam the cycled momentum is beta1: flagged
for _name, _args, _opt in (("ReduceLROnPlateau", "factor=0.5", "SGD"), ("CyclicLR", "base_lr=0.01, max_lr=0.1", "Adam"),
                           ("OneCycleLR", "max_lr=0.1, total_steps=10", "Adam")):
    flagged(_P + _name, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler
        model = nn.Linear(2, 1)
        optimizer = torch.optim.{_opt}(model.parameters(), lr=0.1)
        scheduler = lr_scheduler.{_name}(optimizer, {_args})
    """)


# --- torch.cuda housekeeping: constants or no-ops on a CPU run

for _name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
    case(f"torch.cuda.{_name}", f"""
        import torch
        x = torch.ones(4, 4) * 2
        used = torch.cuda.{_name}()
        mib = torch.cuda.{_name}() / 1024 ** 2
        y = x.sum()
    """)
    case(f"torch.cuda.{_name}", f"""
        import torch
        device = torch.device("cpu")
        x = torch.ones(3).to(device)
        used = torch.cuda.{_name}(device=0) if torch.cuda.is_available() else 0
    """)
    case(f"torch.cuda.{_name}", f"""
        import torch
        x = torch.ones(3)
        used = torch.cuda.{_name}(0) if torch.cuda.is_available() else 0
    """)
case("torch.cuda.empty_cache", """
    import torch
    x = torch.ones(4, 4) * 2
    del x
    torch.cuda.empty_cache()
    y = torch.zeros(2) + 1
""")
for _name in ("reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached"):
    case(f"torch.cuda.{_name}", f"""
        import torch
        x = torch.ones(3)
        if torch.cuda.is_available():
            torch.cuda.{_name}()
        y = x * 2
    """)


# --- grad-mode switches under their torch.autograd spellings

case("torch.autograd.enable_grad", """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.enable_grad():
        y = (x * x).sum()
    y.backward()
    g = x.grad
""")
case("torch.autograd.grad_mode.enable_grad", """
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.autograd.grad_mode.enable_grad():
        y = (x ** 3).sum()
    y.backward()
    g = x.grad
""")
case("torch.autograd.no_grad", """
    import torch
    import torch.nn as nn
    model = nn.Linear(2, 1)
    with torch.autograd.no_grad():
        out = model(torch.ones(3, 2))
""")
case("torch.autograd.grad_mode.no_grad", """
    import torch
    import torch.nn as nn
    model = nn.Linear(2, 1)
    with torch.autograd.grad_mode.no_grad():
        out = model(torch.ones(3, 2))
""")
for _key in ("torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"):
    case(_key, f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        x = torch.ones(3, 2)
        for phase in ["train", "val"]:
            with {_key}(phase == "train"):
                out = model(x)
        with {_key}(False):
            frozen = model(x) * 2
    """)
    case(_key, f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        {_key}(False)
        out = model(torch.ones(2, 2))
        {_key}(True)
    """)
for _key in ("torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode"):
    case(_key, f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        with {_key}():
            out = model(torch.ones(3, 2))
    """)


# --- torch.signal.windows (symmetric by default, unlike torch.hann_window)

_W = "torch.signal.windows."
for _call in ("hann(8)", "hann(7, sym=False)", "hann(1)", "hann(16, dtype=torch.float64)"):
    case(_W + "hann", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("hamming(9)", "hamming(8, sym=False)", "hamming(2)"):
    case(_W + "hamming", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("blackman(10)", "blackman(9, sym=False)", "blackman(3, dtype=torch.float64)"):
    case(_W + "blackman", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("cosine(8)", "cosine(7, sym=False)", "cosine(1)", "cosine(0)"):
    case(_W + "cosine", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("exponential(8)", "exponential(7, tau=3.0)", "exponential(6, center=1.0, tau=2.0, sym=False)",
              "exponential(5, sym=False)"):
    case(_W + "exponential", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("gaussian(8)", "gaussian(9, std=2.5)", "gaussian(6, std=0.7, sym=False)"):
    case(_W + "gaussian", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("general_cosine(8, a=[0.46, 0.23, 0.31])", "general_cosine(7, a=(0.5, 0.5), sym=False)",
              "general_cosine(1, a=[1.0])"):
    case(_W + "general_cosine", f"import torch\nw = torch.signal.windows.{_call}\n")
for _call in ("general_hamming(8)", "general_hamming(9, alpha=0.6)", "general_hamming(6, alpha=0.5, sym=False)"):
    case(_W + "general_hamming", f"import torch\nw = torch.signal.windows.{_call}\n")
case(_W + "hann", """
    import torch
    from torch.signal import windows

    def windowed(frames):
        return frames * windows.hann(frames.shape[-1])

    out = windowed(torch.ones(3, 8))
""")


# --- torch.testing.assert_close: a pass and a failure, alike in both frameworks

for _actual, _expected, _kw in (
        ("x * 2", "torch.tensor([2.0, 4.0, 6.0])", ""),
        ("x", "x + 1e-6", ""),               # within float32's atol=1e-5
        ("x", "x + 1e-4", ""),               # outside: raises
        ("x", "x + 1e-3", ", rtol=0.0, atol=1e-2"),
        ("x", "x + 1e-3", ", rtol=0.0, atol=1e-4"),
        ("x.double()", "x.double() + 1e-8", ""),   # float64: atol=rtol=1e-7
        ("x.double()", "x.double() + 1e-6", ""),
        ("x", "x.double()", ""),             # dtype differs: raises
        ("x", "x[:2]", ""),                  # shape differs: raises
        ("torch.tensor([1, 2])", "torch.tensor([1, 3])", ""),  # integers: exact
        ("torch.tensor([float('nan')])", "torch.tensor([float('nan')])", ""),
        ("torch.tensor([float('nan')])", "torch.tensor([float('nan')])", ", equal_nan=True"),
        ("1.0", "1.0 + 1e-9", ""),
):
    case("torch.testing.assert_close", f"""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0])
        try:
            torch.testing.assert_close({_actual}, {_expected}{_kw})
            failed = False
        except AssertionError:
            failed = True
    """)


# --- torch.multiprocessing.cpu_count

case("torch.multiprocessing.cpu_count", """
    import torch
    workers = min(2, torch.multiprocessing.cpu_count())
""")


# --- context managers with nothing to do on a MindSpore run

case("torch.nn.attention.sdpa_kernel", """
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.linspace(-1, 1, 24).reshape(1, 4, 6)
    with sdpa_kernel(SDPBackend.MATH):
        scores = torch.softmax(q @ q.transpose(-2, -1) / 6 ** 0.5, dim=-1)
        out = scores @ q
""")
case("torch.nn.attention.sdpa_kernel", """
    import torch
    import torch.nn.attention
    x = torch.ones(2, 3)
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION,
                                         torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION]):
        y = x * 2
""")
for _key in ("torch.nn.attention.SDPBackend.MATH", "torch.nn.attention.SDPBackend.FLASH_ATTENTION",
             "torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION", "torch.nn.attention.SDPBackend.CUDNN_ATTENTION"):
    case(_key, f"""
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        x = torch.ones(2, 3)
        with sdpa_kernel({_key.replace("torch.nn.attention.", "")}):
            y = x.sum(0)
    """)
case("torch.nn.attention.SDPBackend", """
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    x = torch.arange(6.0).reshape(2, 3)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
        y = torch.softmax(x, dim=-1)
""")
for _key in ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"):
    case(_key, f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 2)
        x = torch.linspace(-1, 1, 6).reshape(2, 3)
        with {_key}():
            out = model(x)
        loss = out.pow(2).mean()
    """)
