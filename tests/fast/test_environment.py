"""Environment idioms of notebooks (DEV006, DEV008, UTL005-UTL008): seeding cells' cuDNN
flags, the device pick of recent PyTorch, module constants, print options, process
settings and ONNX export. None of them keeps ``import torch``."""

from tests.fast.codemod import assert_ports


def test_seeding_cell_with_cudnn_flags():
    """uvadlc's and bentrevett's seeding cells: deterministic=True is MindSpore's
    set_deterministic (guarded: it may be set once per process); benchmark=False and the
    other cuDNN flags are removed, their comments kept."""
    assert_ports(
        """
            import torch
            seed = 42
            torch.manual_seed(seed)
            torch.cuda.manual_seed(seed)
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False  # speed over reproducibility
            torch.backends.cudnn.enabled = True
            x = torch.rand(2)
        """,
        """
            import mindspore
            seed = 42
            mindspore.set_seed(seed)
            mindspore.set_seed(seed)
            if mindspore.get_context("deterministic") != "ON":
                mindspore.set_deterministic(True)
            # speed over reproducibility
            x = mindspore.ops.rand(2)
        """,
        edits={"IMP001", "RNG001", "RNG002", "DEV008", "FUN011"},
    )


def test_cudnn_flags_in_a_function_and_through_an_alias():
    assert_ports(
        """
            import torch
            import torch.backends.cudnn as cudnn

            def set_seed(seed):
                torch.manual_seed(seed)
                if torch.cuda.is_available():
                    torch.backends.cudnn.benchmark = False
                cudnn.deterministic = False
                torch.use_deterministic_algorithms(True)
        """,
        """
            import mindspore

            def set_seed(seed):
                mindspore.set_seed(seed)
                if mindspore.device_context.gpu.is_available():
                    pass
                if mindspore.get_context("deterministic") != "ON":
                    mindspore.set_deterministic(True)
        """,
        edits={"IMP001", "RNG001", "DEV002", "DEV008"},
    )


def test_reading_a_cudnn_flag_is_flagged():
    assert_ports(
        """
            import torch
            print(torch.backends.cudnn.benchmark, torch.backends.cudnn.is_available())
        """,
        """
            import mindspore
            print(False, mindspore.device_context.gpu.is_available())  # msmagic: DEV008 benchmark read as PyTorch's default False
        """,
        edits={"IMP001", "DEV008"},
        findings={"DEV008"},
    )


def test_accelerator_device_pick():
    """PyTorch 2.6+ tutorials: torch.accelerator and its .type."""
    assert_ports(
        """
            import torch
            device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
            print(f"Using {device} device")
            dev = torch.device(device)
            x = torch.ones(2).to(device)
        """,
        """
            import mindspore
            device = ("GPU" if mindspore.device_context.gpu.is_available() else "Ascend" if mindspore.device_context.ascend.is_available() else None) if (mindspore.device_context.gpu.is_available() or mindspore.device_context.ascend.is_available()) else "cpu"
            print(f"Using {device} device")
            dev = (lambda d: {"cuda": "GPU", "cpu": "CPU", "mps": "CPU"}.get(d.partition(":")[0], d))(str(device))
            if mindspore.get_current_device() != (dev, 0):
                mindspore.set_device(dev)
            x = mindspore.ops.ones(2)
        """,
        edits={"IMP001", "DEV001", "DEV004", "DEV006", "FUN009"},
    )


def test_cuda_mps_cpu_chain_and_device_queries():
    assert_ports(
        """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
            if torch.cuda.is_available():
                print(torch.cuda.get_device_name(0), torch.cuda.current_device())
        """,
        """
            import mindspore
            device = "GPU" if mindspore.device_context.gpu.is_available() else "CPU" if False else "CPU"
            if mindspore.get_current_device() != (device, 0):
                mindspore.set_device(device)
            if mindspore.device_context.gpu.is_available():
                print(mindspore.get_current_device().device_target, mindspore.get_current_device().device_id)  # msmagic: DEV006 device target, not the card's name
        """,
        edits={"IMP001", "DEV001", "DEV002", "DEV006"},
        findings={"DEV006"},
    )


def test_module_constants():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, -2.0])
            y = x.clamp(min=-torch.inf, max=torch.pi) * torch.e
            bad = torch.tensor([torch.nan])
        """,
        """
            import mindspore
            import math
            x = mindspore.Tensor([1.0, -2.0])
            y = x.clamp(min=-math.inf, max=math.pi) * math.e
            bad = mindspore.Tensor([math.nan])
        """,
        edits={"IMP001", "DAT001", "UTL005"},
    )


def test_print_options():
    assert_ports(
        """
            import torch
            import numpy as np
            torch.set_printoptions(precision=2, sci_mode=False)
            torch.set_printoptions(profile="full")
            torch.set_printoptions(3, linewidth=120)
        """,
        """
            import mindspore
            import numpy as np
            import numpy
            import sys
            numpy.set_printoptions(precision=2, suppress=True)
            numpy.set_printoptions(precision=4, threshold=sys.maxsize, edgeitems=3, linewidth=80)
            numpy.set_printoptions(precision=3, linewidth=120)
        """,
        edits={"IMP001", "UTL006"},
        idempotent=True,
    )


def test_process_settings():
    assert_ports(
        """
            import torch
            torch.set_num_threads(4)  # fewer threads
            torch.set_default_dtype(torch.float32)
            torch.set_default_dtype(torch.float64)
            x = torch.zeros(2, dtype=torch.get_default_dtype())
        """,
        """
            import mindspore
            # fewer threads
            pass  # msmagic: UTL007 default dtype stays float32 in MindSpore
            x = mindspore.ops.zeros(2, dtype=mindspore.float32)
        """,
        edits={"IMP001", "UTL007", "FUN009", "DAT005"},
        findings={"UTL007"},
    )


def test_onnx_export_is_ported_and_flagged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            dummy = torch.ones(1, 3)
            torch.onnx.export(model, dummy, "model.onnx", input_names=["x"], opset_version=17)
            torch.onnx.export(model, (dummy,), "model2.onnx")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            dummy = mindspore.ops.ones((1, 3))
            mindspore.export(model, dummy, file_name="model.onnx", file_format="ONNX")  # msmagic: UTL008 ONNX export by MindSpore; check the file
            mindspore.export(model, dummy, file_name="model2.onnx", file_format="ONNX")  # msmagic: UTL008 ONNX export by MindSpore; check the file
        """,
        edits={"IMP001", "LAY001", "FUN009", "UTL008"},
        findings={"UTL008"},
    )
