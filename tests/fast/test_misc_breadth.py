"""Fast (text-only) checks of the misc-breadth rules: per-batch schedulers (SCH013),
torch.cuda housekeeping, grad-mode switches under torch.autograd spellings, signal
windows (MSC001), torch.testing.assert_close (MSC002), cpu_count (MSC003) and the
no-op context managers (MSC004)."""

from tests.fast.codemod import dedent, edit_ids, finding_ids, port


def _ported(src):
    res = port(dedent(src))
    compile(res.code, "<port>", "exec")
    return res


def test_one_cycle_without_momentum_cycling_is_ported():
    res = _ported("""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=8, cycle_momentum=False)
        scheduler.step()
    """)
    assert "SCH013" in edit_ids(res) and "SCH001" in edit_ids(res)
    assert "lr_scheduler.OneCycleLR" not in res.code and "import torch" not in res.code
    assert "mindspore.ops.assign(optimizer.learning_rate, next(scheduler))" in res.code


def test_momentum_cycling_ported_for_sgd_flagged_otherwise():
    res = _ported("""
        import torch
        from torch.optim import lr_scheduler
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)
        scheduler = lr_scheduler.OneCycleLR(optimizer, 0.1, 10)
    """)
    assert "mindspore.ops.assign(optimizer.momentum," in res.code and "SCH013" in edit_ids(res)
    for line in ("scheduler = lr_scheduler.CyclicLR(adam, 0.01, 0.1)",
                 "scheduler = lr_scheduler.OneCycleLR(adam, 0.1, 10, cycle_momentum=True)",
                 "scheduler = lr_scheduler.OneCycleLR(optimizer, 0.1, 10, cycle_momentum=flag)",
                 "scheduler = lr_scheduler.CyclicLR(optimizer, [0.01, 0.02], 0.1, cycle_momentum=False)",
                 "scheduler = lr_scheduler.OneCycleLR(optimizer, 0.1, 10, anneal_strategy=s, cycle_momentum=False)"):
        res = _ported(f"""
            import torch
            from torch.optim import lr_scheduler
            optimizer = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
            adam = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))], lr=0.1)
            {line}
        """)
        assert finding_ids(res) & {"SCH011", "SCH013"}, line


def test_cuda_memory_calls_and_empty_cache():
    res = _ported("""
        import torch
        torch.cuda.empty_cache()
        used = torch.cuda.memory_allocated(0) / 1024 ** 2
        peak = torch.cuda.max_memory_allocated(device=0)
        torch.cuda.reset_peak_memory_stats()
    """)
    assert "torch" not in res.code
    assert "mindspore.runtime.empty_cache()" in res.code
    assert "mindspore.runtime.memory_allocated()" in res.code
    assert "mindspore.runtime.max_memory_allocated()" in res.code


def test_cuda_streams_and_tensor_types_are_flagged():
    res = _ported("""
        import torch
        s = torch.cuda.Stream()
        t = torch.cuda.FloatTensor([1.0])
        info = torch.cuda.mem_get_info()
    """)
    assert "API007" in finding_ids(res) or "GEN001" in finding_ids(res)
    assert "torch.cuda.Stream()" in res.code and "torch.cuda.mem_get_info()" in res.code


def test_autograd_spellings_of_grad_switches():
    res = _ported("""
        import torch
        from torch.autograd import grad_mode
        x = torch.ones(2)
        with torch.autograd.grad_mode.set_grad_enabled(False):
            y = x * 2
        with torch.autograd.enable_grad():
            z = x * 3
        torch.autograd.set_grad_enabled(True)
        w = x + 1
    """)
    assert "set_grad_enabled" not in res.code and "enable_grad" not in res.code
    assert {"NGR001", "NGR003"} <= set(edit_ids(res))


def test_signal_windows_aliases_and_keywords():
    res = _ported("""
        import torch
        from torch.signal import windows as W
        a = W.hann(8, sym=False, dtype=torch.float64)
        b = torch.signal.windows.general_cosine(5, a=[0.5, 0.5])
        c = W.exponential(6, center=1.0)
    """)
    assert "mindspore.float64" in res.code and "MSC001" in edit_ids(res)
    assert "MSC001" in finding_ids(res)  # center= with sym=True raises in PyTorch
    assert "torch.signal.windows.exponential(6, center=1.0)" in res.code


def test_assert_close_and_cpu_count():
    res = _ported("""
        import torch
        import torch.testing

        def check(out, ref):
            torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)

        torch.testing.assert_close(torch.ones(2), torch.ones(2))
        n = torch.multiprocessing.cpu_count()
    """)
    assert "def assert_close(" in res.code and res.code.count("def assert_close(") == 1
    assert "assert_close(out, ref, rtol=1e-4, atol=1e-4)" in res.code
    assert "os.cpu_count()" in res.code and "torch" not in res.code.replace("torch.testing.assert_close:", "")
    res = _ported("""
        import torch
        torch.testing.assert_close(torch.ones(2), torch.ones(2), rtol=1e-3)
    """)
    assert "MSC002" in finding_ids(res)


def test_sdpa_kernel_and_autocast_unwrapped():
    res = _ported("""
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        x = torch.ones(2)
        with sdpa_kernel(SDPBackend.MATH):
            y = x * 2
        with torch.cuda.amp.autocast():
            z = y + 1
        b = SDPBackend.MATH
    """)
    assert "sdpa_kernel" not in res.code and "autocast(" not in res.code
    assert "MSC004" in finding_ids(res)  # autocast's float16 on GPU, and SDPBackend outside sdpa_kernel
    assert "y = x * 2" in res.code and "z = y + 1" in res.code
