"""Notebook idioms: cell magics above a ported cell, IPython lines among ported statements,
annotations, version and device queries, pathlib checkpoints and the PyTorch ecosystem
libraries (torchvision, torchmetrics, torchinfo). Pure text: no framework is imported."""

from __future__ import annotations

import ast

import msmagic
from msmagic.engine.ipython import cell_magic, mask
from msmagic.engine.session import PortSession
from tests.fast.codemod import assert_ports, dedent, edit_ids, finding_ids


def assert_ports_ipython(before, after, *, edits=None, findings=None):
    """Like assert_ports for cells holding IPython syntax: the output is checked to be
    Python once the IPython lines are set aside, and porting it again changes nothing."""
    before, after = dedent(before), dedent(after)
    result = msmagic.port(before)
    assert result.code == after, result.code
    ast.parse(mask(result.code).text)
    if edits is not None:
        assert set(edit_ids(result)) == set(edits), edit_ids(result)
    assert finding_ids(result) == set(findings or ()), result.unsupported
    assert msmagic.port(after).code == after
    n_out = len(result.code.splitlines())
    for e in result.edits:
        assert 1 <= e.after[0] <= e.after[1] <= n_out, e
    for f in result.unsupported:
        assert f.rule_id in result.code.splitlines()[f.out_line - 1], f
    return result


# ----------------------------------------------------------------------------- cell magics


def test_time_cell_magic_is_kept_above_the_ported_body():
    r = assert_ports_ipython(
        """
            %%time
            import torch
            x = torch.ones(2, 3)
        """,
        """
            %%time
            import mindspore
            x = mindspore.ops.ones((2, 3))
        """,
        edits={"IMP001", "FUN009"},
    )
    assert [e.before for e in r.edits if e.rule_id == "FUN009"] == [(3, 3)]
    assert [e.after for e in r.edits if e.rule_id == "FUN009"] == [(3, 3)]


def test_cell_magic_stays_first_when_an_import_is_added_above_the_body():
    session = PortSession()
    session.learn("import torch.nn as nn")
    r = msmagic.port("%%capture out --no-stderr\ny = nn.functional.relu(x)\n", session=session)
    assert r.code == "%%capture out --no-stderr\nfrom mindspore import ops\ny = ops.relu(x)\n"
    assert [(e.rule_id, e.after) for e in r.edits] == [("IMP001", (2, 2)), ("FUN001", (3, 3))]


def test_timeit_options_and_setup_statement_are_ported():
    assert_ports_ipython(
        """
            %%timeit -n 3 -r2 w = torch.zeros(2)
            import torch
            y = w + torch.ones(2)
        """,
        """
            %%timeit -n 3 -r2 w = mindspore.ops.zeros(2)
            import mindspore
            y = w + mindspore.ops.ones(2)
        """,
        edits={"IMP001", "FUN009"},
    )


def test_line_timing_magic_with_option_values_is_ported():
    assert_ports_ipython(
        """
            import torch
            %timeit -n 3 -r 2 y = torch.ones(2)
            %time -x
        """,
        """
            import mindspore
            %timeit -n 3 -r 2 y = mindspore.ops.ones(2)
            %time -x
        """,
        edits={"IMP001", "FUN009"},
    )


def test_a_cell_whose_magic_body_is_not_python_is_left_as_it_is():
    for cell in ("%%bash\nls -la\necho torch.ones\n", "%%writefile notes.txt\ntorch is here\n",
                 "%%sql\nSELECT torch FROM t\n", "\n%%html\n<b>torch</b>\n"):
        r = msmagic.port(cell)
        assert r.code == cell and not r.edits and not r.unsupported


def test_writefile_of_a_python_file_ports_the_file():
    assert_ports_ipython(
        """
            %%writefile train.py
            import torch
            x = torch.zeros(3)
        """,
        """
            %%writefile train.py
            import mindspore
            x = mindspore.ops.zeros(3)
        """,
    )


def test_cell_magic_helper():
    header = cell_magic("\n%%timeit -n 3 x = 1\nbody\n")
    assert (header.index, header.name, header.rest) == (1, "timeit", " -n 3 x = 1")
    assert header.line[header.statement_at:] == "x = 1"
    assert cell_magic("x = 1\n%%time\n") is None
    assert cell_magic("%%capture out").python_body is True
    assert cell_magic("%%bash").python_body is False


# ----------------------------------------------------------------------------- IPython lines


def test_shell_and_magic_lines_keep_their_block_when_a_rule_unwraps_it():
    assert_ports_ipython(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 2)
            x = torch.ones(1, 2)
            with torch.no_grad():
                !nvidia-smi
                %time y = model(x)
                z = y + 1
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 2)
            x = mindspore.ops.ones((1, 2))
            !nvidia-smi
            %time y = model(x)
            z = y + 1
        """,
    )


def test_timing_prefix_of_a_removed_statement_goes_nowhere_else():
    r = msmagic.port(dedent("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 2)
        x = torch.ones(1, 2)
        with torch.no_grad():
            %time y = model(x)
    """))
    assert r.code.splitlines()[-1] == "%time y = model(x)"
    assert "%time \n" not in r.code + "\n"


def test_ipython_lines_inside_blocks_are_kept():
    assert_ports_ipython(
        """
            import torch
            for i in range(2):
                !echo {i}
                files = !ls
                %matplotlib inline
                x = torch.zeros(2)
                x?
        """,
        """
            import mindspore
            for i in range(2):
                !echo {i}
                files = !ls
                %matplotlib inline
                x = mindspore.ops.zeros(2)
                x?
        """,
    )


# ----------------------------------------------------------------------------- annotations


def test_type_annotations_name_mindspore_types():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            x: torch.Tensor = torch.ones(2)
            def f(x: torch.Tensor, m: nn.Module) -> torch.Tensor:
                return x * 2
        """,
        """
            import mindspore
            import mindspore.nn as nn
            x: mindspore.Tensor = mindspore.ops.ones(2)
            def f(x: mindspore.Tensor, m: nn.Cell) -> mindspore.Tensor:
                return x * 2
        """,
    )


# ----------------------------------------------------------------------------- versions, devices


def test_version_shown_is_mindspores_and_a_version_check_is_flagged():
    assert_ports(
        """
            import torch
            print(torch.__version__)
            print(f"torch {torch.__version__}")
            torch.__version__
            if torch.__version__ >= "2.0":
                pass
        """,
        """
            import mindspore
            print(mindspore.__version__)
            print(f"torch {mindspore.__version__}")
            mindspore.__version__
            if mindspore.__version__ >= "2.0":  # msmagic: UTL004 this is MindSpore's version now; review the version check
                pass
        """,
        edits={"IMP001", "UTL004"},
        findings={"UTL004"},
    )


def test_device_count_and_mps_queries():
    assert_ports(
        """
            import torch
            n = torch.cuda.device_count()
            mps = torch.backends.mps.is_available() and torch.backends.mps.is_built()
        """,
        """
            import mindspore
            n = (mindspore.device_context.gpu.device_count() if mindspore.device_context.gpu.is_available() else 0)
            mps = False and False
        """,
        edits={"IMP001", "DEV006"},
    )


def test_set_default_device_becomes_a_guarded_set_device():
    assert_ports(
        """
            import torch
            # pick the device
            torch.set_default_device("cuda:1")  # the second GPU
            device = torch.device("cpu")
            torch.set_default_device(device)
        """,
        """
            import mindspore
            # pick the device
            if mindspore.get_current_device() != ("GPU", 1):  # the second GPU
                mindspore.set_device("GPU", 1)
            device = "CPU"
            if mindspore.get_current_device() != (device, 0):
                mindspore.set_device(device)
            if mindspore.get_current_device().device_target != device:
                mindspore.set_device(device)
        """,
        edits={"IMP001", "DEV001", "DEV007"},
    )


def test_set_default_device_that_cannot_be_mapped_is_flagged():
    r = msmagic.port("import torch\ntorch.set_default_device(None)\nok = torch.set_default_device('cpu'); y = 1\n")
    assert finding_ids(r) == {"DEV007"} and len(r.unsupported) == 2
    assert "torch.set_default_device(None)  # msmagic: DEV007" in r.code


# ----------------------------------------------------------------------------- checkpoints


def test_pathlib_checkpoint_names_become_str():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            from pathlib import Path
            model = nn.Linear(2, 2)
            folder = Path("runs")
            path = folder / "model.pt"
            torch.save(model.state_dict(), path)
            state = torch.load(path)
            state = torch.load(folder / "model.pt", map_location="cpu")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            from pathlib import Path
            model = nn.Dense(2, 2)
            folder = Path("runs")
            path = folder / "model.pt"
            mindspore.save_checkpoint(model, str(path))
            state = mindspore.load_checkpoint(str(path).removesuffix('.ckpt') + '.ckpt')
            state = mindspore.load_checkpoint(str(folder / "model.pt").removesuffix('.ckpt') + '.ckpt')
        """,
        edits={"IMP001", "LAY001", "CKP001", "CKP002"},
    )


def test_checkpoint_name_expression_is_evaluated_once():
    r = msmagic.port("import torch, os\nsd = torch.load(os.path.join('a', 'm.pt'))\n")
    assert "mindspore.load_checkpoint(os.path.join('a', 'm.pt').removesuffix('.ckpt') + '.ckpt')" in r.code
    assert not r.unsupported


def test_checkpoint_to_a_file_object_is_pickled():
    r = msmagic.port(dedent("""
        import io
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 2)
        buffer = io.BytesIO()
        torch.save(model.state_dict(), buffer)
        with open("m.pt", "rb") as f:
            state = torch.load(f)
    """))
    assert not r.unsupported, r.unsupported
    assert "pickle.dump(model.parameters_dict(), buffer)" in r.code
    assert "state = pickle.load(f)" in r.code


# ----------------------------------------------------------------------------- ecosystem


def test_transform_pipeline_becomes_mindspore_vision():
    assert_ports(
        """
            import torch
            import torchvision
            import torchvision.transforms as transforms
            from torchvision.transforms import InterpolationMode
            transform = transforms.Compose([
                transforms.Resize(32, interpolation=InterpolationMode.BICUBIC),
                transforms.CenterCrop(28),
                transforms.ToTensor(),
                transforms.Normalize(mean=(0.1307,), std=(0.3081,)),
            ])
        """,
        """
            import mindspore
            import mindspore.dataset.vision as transforms
            from mindspore.dataset.vision import Inter as InterpolationMode
            transform = mindspore.dataset.transforms.Compose([
                transforms.Resize(32, InterpolationMode.BICUBIC),
                transforms.CenterCrop(28),
                transforms.ToTensor(),
                transforms.Normalize((0.1307,), (0.3081,), is_hwc=False),
            ])
        """,
        edits={"IMP001", "ECO001"},
    )


def test_from_torchvision_import_transforms_without_torch():
    assert_ports(
        """
            from torchvision import transforms
            t = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
        """,
        """
            from mindspore.dataset import vision as transforms
            import mindspore
            t = mindspore.dataset.transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,), is_hwc=False)])  # msmagic: ECO001 ToTensor: PIL or uint8 input only; returns a NumPy array
        """,
        edits={"IMP001", "ECO001"},
        findings={"ECO001"},
    )


def test_transforms_whose_input_is_unknown_are_flagged():
    r = msmagic.port(dedent("""
        import torchvision.transforms as T
        resize = T.Resize(32)
        norm = T.Normalize((0.5,), (0.5,))
        late = T.Compose([T.ToTensor(), T.CenterCrop(8)])
        x = resize(image)
    """))
    lines = r.code.splitlines()
    assert "# msmagic: ECO001 Resize: PIL images only" in lines[2]
    assert "# msmagic: ECO001 Normalize: one CHW NumPy image only" in lines[3]
    assert "CenterCrop: PIL images only" in lines[4]
    assert "the transform returns NumPy data" in lines[5]
    assert "torchvision" not in r.code.replace("# msmagic", "")


def test_random_augmentation_and_datasets_are_flagged_and_kept():
    r = msmagic.port(dedent("""
        import torch
        import torchvision
        import torchvision.transforms as T
        flip = T.RandomHorizontalFlip(p=0.5)
        train = torchvision.datasets.MNIST(root="data", train=True, download=True)
        folder = torchvision.datasets.ImageFolder("images")
    """))
    assert "import torchvision  # msmagic: kept for the calls flagged below" in r.code
    assert "torchvision.transforms.RandomHorizontalFlip(p=0.5)  # msmagic: ECO001" in r.code
    assert "use mindspore.dataset.MnistDataset" in r.code
    assert "use mindspore.dataset.ImageFolderDataset" in r.code
    assert finding_ids(r) == {"ECO001", "ECO002"}


def test_models_utils_metrics_and_summary_are_flagged():
    r = msmagic.port(dedent("""
        import torch
        import torchvision
        import torchmetrics
        from torchinfo import summary
        from torchvision.utils import save_image
        model = torchvision.models.resnet18(weights=None)
        save_image(torch.rand(2, 3, 4, 4), "out.png")
        acc = torchmetrics.Accuracy(task="multiclass", num_classes=10)
        summary(model, input_size=(1, 3, 32, 32))
        nms = torchvision.ops.nms
    """))
    assert finding_ids(r) == {"ECO003", "ECO004", "GEN001"}
    for name in ("torchvision", "torchmetrics", "torchinfo"):
        assert f"import {name}  # msmagic: kept for the calls flagged below" in r.code
    assert "torchvision.utils.save_image(mindspore.ops.rand(2, 3, 4, 4), \"out.png\")  # msmagic: ECO003" in r.code
    assert "torchinfo.summary(model, input_size=(1, 3, 32, 32))  # msmagic: ECO004" in r.code
    assert "nms = torchvision.ops.nms  # msmagic: GEN001" in r.code


def test_a_later_cell_knows_the_ecosystem_imports_of_an_earlier_one():
    session = PortSession()
    session.learn("import torchvision.transforms as T\nfrom torchinfo import summary\n")
    r = msmagic.port("t = T.ToTensor()\nsummary(net)\n", session=session)
    assert r.code.startswith("import mindspore.dataset.vision as T\n") or "T.ToTensor()" in r.code
    assert finding_ids(r) == {"ECO001", "ECO004"}


def test_device_and_dtype_as_types_become_str_and_mindspore_type():
    assert_ports(
        """
            import torch
            def f(x: torch.Tensor, dev: torch.device, dt: torch.dtype = torch.float32) -> torch.Tensor:
                return isinstance(dev, torch.device) and isinstance(dt, torch.dtype)
        """,
        """
            import mindspore
            def f(x: mindspore.Tensor, dev: str, dt: mindspore.Type = mindspore.float32) -> mindspore.Tensor:
                return isinstance(dev, str) and isinstance(dt, mindspore.Type)
        """,
    )


def test_a_layer_attribute_named_like_a_tensor_method_is_a_layer_call():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inner = nn.Linear(2, 2)
                    self.outer = nn.Linear(2, 2)
                def forward(self, x):
                    return self.outer(self.inner(x))
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.inner = nn.Dense(2, 2)
                    self.outer = nn.Dense(2, 2)
                    self.set_train()
                def construct(self, x):
                    return self.outer(self.inner(x))
        """,
    )
