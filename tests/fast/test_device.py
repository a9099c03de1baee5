"""Device, seeds and distributed (DEV, RNG, DDP): device targets, moves, seeds and process groups."""

from tests.fast.codemod import assert_ports, dedent, port


def test_device_expression_becomes_target_name():
    assert_ports(
        """
            import torch
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            use_gpu = device == torch.device('cuda')
        """,
        """
            import mindspore
            device = 'GPU' if mindspore.device_context.gpu.is_available() else 'CPU'
            if mindspore.get_current_device() != (device, 0):
                mindspore.set_device(device)
            use_gpu = device == 'GPU'
        """,
        edits={"DEV001", "DEV002", "IMP001"},
    )


def test_device_cpu_literal():
    assert_ports(
        """
            import torch
            device = torch.device('cpu')
        """,
        """
            import mindspore
            device = 'CPU'
            if mindspore.get_current_device() != (device, 0):
                mindspore.set_device(device)
        """,
        edits={"DEV001", "IMP001"},
    )


def test_device_with_index():
    assert_ports(
        """
            import torch
            device = torch.device('cuda:1')
        """,
        """
            import mindspore
            device = 'GPU'
            if mindspore.get_current_device() != (device, 1):
                mindspore.set_device(device, 1)
        """,
        edits={"DEV001", "IMP001"},
    )


def test_cuda_is_available():
    assert_ports(
        """
            import torch
            has_gpu = torch.cuda.is_available()
        """,
        """
            import mindspore
            has_gpu = mindspore.device_context.gpu.is_available()
        """,
        edits={"DEV002", "IMP001"},
    )


def test_device_keyword_dropped():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0], device='cpu')
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0])
        """,
        edits={"DAT001", "DEV003", "IMP001"},
    )


def test_device_moves_removed():
    assert_ports(
        """
            import torch
            device = torch.device('cpu')
            x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).to(device)
            y = x.cuda() if torch.cuda.is_available() else x.cpu()
        """,
        """
            import mindspore
            device = 'CPU'
            if mindspore.get_current_device() != (device, 0):
                mindspore.set_device(device)
            x = mindspore.Tensor([[1.0, 2.0], [3.0, 4.0]])
            y = x if mindspore.device_context.gpu.is_available() else x
        """,
        edits={"DAT001", "DEV001", "DEV002", "DEV004", "IMP001"},
    )


def test_to_with_dtype_keeps_the_cast():
    assert_ports(
        """
            import torch
            x = torch.ones(2)
            a = x.to(torch.float16)
            b = x.to(dtype=torch.float64)
            c = x.to('cpu', torch.int32)
        """,
        """
            import mindspore
            x = mindspore.ops.ones(2)
            a = x.to(mindspore.float16)
            b = x.to(dtype=mindspore.float64)
            c = x.to(mindspore.int32)
        """,
        edits={"DAT005", "DEV004", "FUN009", "IMP001"},
    )


def test_model_to_device_removed():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            device = 'cuda'
            model = nn.Linear(2, 2).to(device)
            model.to(device)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            device = 'cuda'
            model = nn.Dense(2, 2)
            model
        """,
        edits={"DEV004", "IMP001", "LAY001"},
    )


def test_numpy_chain_becomes_asnumpy():
    assert_ports(
        """
            import torch
            t = torch.tensor([1.5, -2.0])
            a = t.detach().cpu().numpy()
        """,
        """
            import mindspore
            t = mindspore.Tensor([1.5, -2.0])
            a = t.asnumpy()
        """,
        edits={"DAT001", "DEV005", "IMP001"},
    )


def test_manual_seed_becomes_set_seed():
    assert_ports(
        """
            import torch
            torch.manual_seed(42)
        """,
        """
            import mindspore
            mindspore.set_seed(42)
        """,
        edits={"IMP001", "RNG001"},
    )


def test_cuda_manual_seed_all():
    assert_ports(
        """
            import torch
            torch.cuda.manual_seed_all(0)
            torch.cuda.manual_seed(1)
        """,
        """
            import mindspore
            mindspore.set_seed(0)
            mindspore.set_seed(1)
        """,
        edits={"IMP001", "RNG002"},
    )


def test_generator_becomes_mindspore_generator():
    assert_ports(
        """
            import torch
            g = torch.Generator()
            g.manual_seed(7)
        """,
        """
            import mindspore
            g = mindspore.Generator()
            g.manual_seed(7)
        """,
        edits={"IMP001", "RNG003"},
    )


def test_inplace_random_fill_flagged():
    assert_ports(
        """
            import torch
            x = torch.zeros(3)
            x.bernoulli_(0.5)
        """,
        """
            import mindspore
            x = mindspore.ops.zeros(3)
            x.bernoulli_(0.5)  # msmagic: RNG004 .bernoulli_() is Ascend-only in MindSpore; fill the tensor another way
        """,
        edits={"FUN009", "IMP001"},
        findings={"RNG004"},
    )


def test_init_process_group_guarded_for_msrun():
    assert_ports(
        """
            import torch.distributed as dist
            dist.init_process_group('nccl')
            rank = dist.get_rank()
            world = dist.get_world_size()
            dist.destroy_process_group()
        """,
        """
            import mindspore
            import os
            if os.getenv('MS_ROLE'):  # started by msrun: one process per device
                mindspore.communication.init()
                mindspore.set_auto_parallel_context(parallel_mode=mindspore.ParallelMode.DATA_PARALLEL, gradients_mean=True)
            rank = mindspore.communication.get_rank()
            world = mindspore.communication.get_group_size()
            if os.getenv('MS_ROLE'):  # started by msrun: one process per device
                mindspore.communication.release()
        """,
        edits={"DDP001", "DDP003", "IMP001"},
    )


def test_ddp_wrapper_becomes_the_model():
    assert_ports(
        """
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP
            net = nn.Linear(3, 2)
            model = DDP(net)
        """,
        """
            import mindspore.nn as nn
            net = nn.Dense(3, 2)
            model = net  # msmagic: DDP002 average grads with nn.DistributedGradReducer under msrun
        """,
        edits={"DDP002", "IMP001", "LAY001"},
        findings={"DDP002"},
    )


def test_mp_spawn_becomes_a_rank_zero_call():
    assert_ports(
        """
            import torch.multiprocessing as mp
            mp.spawn(train, args=(4,), nprocs=4)
        """,
        """
            train(0, 4)  # msmagic: DDP004 runs as rank 0 only; launch N processes with msrun
        """,
        edits={"DDP004", "IMP001"},
        findings={"DDP004"},
    )


def test_a_probe_for_a_backend_module_is_answered_and_needs_no_torch():
    """PyTorch's word-language-model example: ``if hasattr(torch.backends, "mps") and
    torch.backends.mps.is_available():``; an ``elif`` probe too. ``torch.backends`` used
    as a value otherwise is flagged and keeps ``import torch``."""
    source = dedent("""
        import torch
        if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
            device = "mps"
        elif hasattr(torch.backends, "no_such_backend"):
            device = "other"
        else:
            device = "cpu"
        probed = hasattr(torch.backends, "cudnn")
    """)
    result = port(source)
    assert "import torch" not in result.code and not result.unsupported, result.code
    assert "if True and False:" in result.code and "elif False:" in result.code
    assert "probed = True" in result.code
    assert port(result.code).code == result.code
    kept = port("import torch\nbackends = torch.backends\n")
    assert "import torch" in kept.code and {f.rule_id for f in kept.unsupported} == {"DEV006"}
