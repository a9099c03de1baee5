"""Ecosystem libraries (ECO001-ECO004).

torchvision cannot be installed beside this project's CPU build of torch (the only
torchvision wheel for torch 2.13 is built for CUDA torch; importing it fails with
"operator torchvision::nms does not exist"). So the ported transform pipelines are run
on the MindSpore side and compared with NumPy/PIL reference values that spell out what
torchvision 0.28's transforms compute (``Resize``/``CenterCrop`` of a PIL image are PIL's
own ``resize``/``crop`` with torchvision's size and offset rules, ``ToTensor`` scales a
uint8 HWC image to float32 CHW in [0, 1], ``Normalize`` is ``(x - mean) / std`` per
channel). The same comparison against torchvision itself runs when torchvision can be
imported (``test_against_torchvision``). The port never needs these libraries.
"""

import importlib.util
import math

import numpy as np
import pytest
from PIL import Image

import msmagic
from tests.rules.support import src


def _image(h=17, w=23, channels=3):
    data = (np.arange(h * w * channels) * 37 % 256).astype(np.uint8)
    return Image.fromarray(data.reshape(h, w, channels) if channels > 1 else data.reshape(h, w))


def _run_ms(code: str, **ns) -> dict:
    """Run ported code (MindSpore only: torchvision must not be needed)."""
    assert "torchvision" not in code.replace("# msmagic", "")
    namespace = dict(ns)
    exec(compile(code, "<port>", "exec"), namespace)
    return namespace


def _resize_size(img, size):
    """torchvision's Resize size rule: an int is the smaller edge, aspect kept."""
    w, h = img.size
    if isinstance(size, int):
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = size, int(size * long / short)
        return (new_short, new_long) if w <= h else (new_long, new_short)
    return size[1], size[0]


def _center_crop(img, size):
    th, tw = (size, size) if isinstance(size, int) else size
    w, h = img.size
    top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
    return img.crop((left, top, left + tw, top + th))


def _to_tensor(img):
    a = np.asarray(img)
    a = a[:, :, None] if a.ndim == 2 else a
    return (a.transpose(2, 0, 1).astype(np.float32) / 255).astype(np.float32)


def _normalize(x, mean, std):
    mean = np.asarray(mean, np.float32)[:, None, None]
    std = np.asarray(std, np.float32)[:, None, None]
    return (x - mean) / std


PIPELINE = src("""
    import torchvision.transforms as T
    from torchvision.transforms import InterpolationMode
    transform = T.Compose([
        T.Resize(11, interpolation=InterpolationMode.BICUBIC),
        T.CenterCrop((9, 10)),
        T.ToTensor(),
        T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    x = image
    for step in transform.transforms:
        x = step(x)
""")


def _reference(img):
    size = _resize_size(img, 11)
    out = img.resize(size, Image.BICUBIC)
    out = _center_crop(out, (9, 10))
    return _normalize(_to_tensor(out), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def test_transform_pipeline_computes_torchvisions_values():
    port = msmagic.port(PIPELINE)
    assert {e.rule_id for e in port.edits} >= {"ECO001"} and not port.unsupported
    img = _image()
    ns = _run_ms(port.code, image=img)
    want = _reference(img)
    assert ns["x"].shape == want.shape == (3, 9, 10) and ns["x"].dtype == np.float32
    np.testing.assert_allclose(ns["x"], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("size", [5, (6, 8), 30, (20, 31)])
@pytest.mark.parametrize("mode,pil", [("NEAREST", Image.NEAREST), ("BILINEAR", Image.BILINEAR),
                                      ("BICUBIC", Image.BICUBIC)])
def test_resize_and_to_tensor_of_pil_images(size, mode, pil):
    code = msmagic.port(src(f"""
        import torchvision.transforms as T
        t = T.Compose([T.Resize({size!r}, interpolation=T.InterpolationMode.{mode}), T.ToTensor()])
        x = image
        for step in t.transforms:
            x = step(x)
    """)).code
    for img in (_image(), _image(channels=1)):
        ns = _run_ms(code, image=img)
        want = _to_tensor(img.resize(_resize_size(img, size), pil))
        assert ns["x"].shape == want.shape
        np.testing.assert_array_equal(ns["x"], want)


def test_center_crop_larger_and_smaller_than_the_image():
    code = msmagic.port(src("""
        import torchvision.transforms as T
        t = T.Compose([T.CenterCrop(size), T.ToTensor()])
        x = image
        for step in t.transforms:
            x = step(x)
    """)).code
    img = _image(11, 13)
    for size in [(4, 5), 6, (3, 13)]:
        ns = _run_ms(code, image=img, size=size)
        np.testing.assert_array_equal(ns["x"], _to_tensor(_center_crop(img, size)))
    ns = _run_ms(code, image=img, size=(15, 17))  # larger: torchvision pads with zeros
    padded = np.zeros((15, 17, 3), np.uint8)
    padded[2:13, 2:15] = np.asarray(img)
    np.testing.assert_array_equal(ns["x"], _to_tensor(padded))


def test_to_tensor_of_uint8_arrays_and_the_float_difference_is_flagged():
    port = msmagic.port(src("""
        import torchvision.transforms as T
        x = T.ToTensor()(array)
    """))
    assert "ECO001" in {f.rule_id for f in port.unsupported}  # input kind unknown: flagged
    a = np.asarray(_image())
    ns = _run_ms(port.code, array=a)
    np.testing.assert_allclose(ns["x"], _to_tensor(a), rtol=0, atol=1e-7)
    ns = _run_ms(port.code, array=np.ones((2, 2, 3), np.float32))
    assert math.isclose(float(ns["x"].max()), 1 / 255, rel_tol=1e-6)  # PyTorch keeps 1.0: flagged


def test_unported_uses_are_flagged_and_kept():
    port = msmagic.port(src("""
        import torch
        import torchvision
        import torchvision.transforms as T
        flip = T.RandomHorizontalFlip(p=0.5)
        data = torchvision.datasets.MNIST(root="data", train=True, download=False)
        model = torchvision.models.resnet18(weights=None)
    """))
    assert {f.rule_id for f in port.unsupported} == {"ECO001", "ECO002", "ECO003"}
    assert "import torchvision  # msmagic: kept" in port.code
    import ast

    ast.parse(port.code)


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                    reason="torchvision is not installed (its CUDA wheel cannot be used with CPU torch)")
def test_against_torchvision():
    from msmagic.parity_check import run_pair

    run = run_pair("from PIL import Image\nimport numpy as np\n"
                   "image = Image.fromarray((np.arange(17 * 23 * 3) * 37 % 256).astype(np.uint8)"
                   ".reshape(17, 23, 3))\n" + PIPELINE, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("x"), run.explain()
