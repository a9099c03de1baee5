"""The PyTorch ecosystem: ``torchvision``, ``torchmetrics`` and ``torchinfo``.

``torchvision.transforms`` pipelines of images become ``mindspore.dataset.vision``
pipelines where the two compute the same values (checked on the same images):
``Compose``, ``ToTensor``, ``Normalize``, ``Resize`` and ``CenterCrop``. Everything else
these libraries provide (datasets, model zoos, image files, metrics, model summaries)
has no counterpart that behaves the same; each use is flagged with what to write
instead, and is kept as it is (its import too), so nothing passes through silently.
The port does not need these libraries installed: it reads the code only.
"""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import child_nodes, keyword_arg
from msmagic.engine.spec import api, module, statement_hook
from msmagic.rules.registry import register

GROUP = "Ecosystem libraries"
SEED = "seeds/002 API Comparison › Dataset/DataLoader"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
TV = "torchvision.transforms"
VISION = "mindspore.dataset.vision"
COMPOSE = f"{TV}.Compose"
TO_TENSOR = f"{TV}.ToTensor"
PIL_NOTE = """
    Verified on MindSpore 2.10 against torchvision 0.28's transforms (run on the same PIL
    images and arrays): ``Resize`` (nearest, bilinear, bicubic; int and (h, w) sizes, up
    and down) and ``CenterCrop`` (smaller and larger than the image) give identical PIL
    images; ``ToTensor`` of a PIL image or uint8 array gives the same float32 CHW values
    in [0, 1]; ``Normalize(mean, std, is_hwc=False)`` and ``Compose`` agree to 1e-6. On
    NumPy arrays ``Resize`` (OpenCV, no antialiasing) and ``CenterCrop`` (offset rounding)
    differ, and ``ToTensor`` divides float arrays by 255 where torchvision does not.
"""

register(
    "ECO001",
    "torchvision transforms become mindspore.dataset.vision transforms",
    group=GROUP,
    why="""
        A torchvision transform pipeline prepares images: ``Compose([Resize(32),
        CenterCrop(28), ToTensor(), Normalize(mean, std)])``. MindSpore's
        ``mindspore.dataset.vision`` has the same operations, applied in a dataset pipeline
        (``dataset.map(operations=...)``) or called on one image, and
        ``mindspore.dataset.transforms.Compose`` chains them. They agree where the input is
        the same kind of image: ``Resize`` and ``CenterCrop`` on PIL images (before
        ``ToTensor`` in a ``Compose``, the input can only be a PIL image: ``ToTensor``
        accepts no tensor, ``Resize`` no array), ``ToTensor`` on PIL images and uint8 arrays,
        and ``Normalize`` on the CHW image ``ToTensor`` produced, which MindSpore's needs
        spelled out as ``is_hwc=False``. One difference remains: MindSpore's transforms
        return NumPy arrays, not tensors; a dataset pipeline turns them into Tensors when it
        batches them, but a transform called on its own needs ``mindspore.Tensor(...)``
        around its result. A transform whose input kind the port cannot see (outside a
        ``Compose``, or ``ToTensor`` first in one) is ported and flagged with the condition
        under which it agrees; ``max_size=`` and interpolation modes other than
        nearest/bilinear/bicubic are flagged and left as torchvision. Random augmentations
        and the other transforms are flagged with the ``mindspore.dataset.vision`` class to
        use: their random draws or options differ.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torchvision.transforms)",
    installed_note=PIL_NOTE,
    example="""
        import numpy as np
        from PIL import Image
        import torchvision.transforms as T

        image = Image.fromarray((np.arange(300) % 256).astype(np.uint8).reshape(10, 10, 3))
        transform = T.Compose([T.Resize(8), T.CenterCrop(6), T.ToTensor(),
                               T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
        x = image
        for step in transform.transforms:  # what a dataset pipeline does with each image
            x = step(x)
    """,
)

register(
    "ECO002",
    "torchvision datasets are flagged with the mindspore.dataset reader to use",
    group=GROUP,
    finding_only=True,
    why="""
        A torchvision dataset (``MNIST(root, train=True, transform=..., download=True)``) is
        an indexable object that yields one (PIL image, int label) pair at a time, and
        DataLoader batches it. MindSpore's readers (``mindspore.dataset.MnistDataset``,
        ``Cifar10Dataset``, ``ImageFolderDataset``...) are pipelines instead: they yield
        columns of NumPy data (an HWC uint8 image, a uint32 label), take transforms with
        ``.map(operations=..., input_columns="image")`` and batch with ``.batch(n)``; they
        cannot be indexed and cannot be given to a DataLoader. They also read other folder
        layouts (MNIST's raw files directly in the folder, CIFAR's binary version rather
        than the pickled one torchvision downloads) and cannot download. No line-for-line
        port keeps all of that, so each dataset is flagged with the reader and folder to
        use, and kept as it is.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torchvision.datasets)",
    example="""
        import torchvision
        import torchvision.transforms as transforms
        train = torchvision.datasets.MNIST(root="data", train=True,
                                           transform=transforms.ToTensor(), download=False)
    """,
)

register(
    "ECO003",
    "torchvision models and image utilities are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        ``torchvision.models`` builds networks (and downloads pretrained weights) as PyTorch
        Modules; MindSpore's core package has no model zoo, so the network must be defined as
        a Cell (porting torchvision's source of the model with msmagic works for the common
        ones) and PyTorch weights converted to a checkpoint. ``torchvision.utils.save_image``
        and ``make_grid`` tile, scale and write tensors as image files; MindSpore has no such
        helpers: convert with ``x.asnumpy()``, scale to uint8 and write it with PIL
        (``Image.fromarray(...).save(path)``). ``torchvision.io`` and ``torchvision.ops``
        are PyTorch kernels. Each use is flagged and kept as it is.
    """,
    seed="seeds/004 Network Basic Unit: Cell",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torchvision)",
    example="""
        import torch
        import torchvision
        model = torchvision.models.resnet18(weights=None)
        torchvision.utils.save_image(torch.rand(4, 3, 8, 8), "grid.png", nrow=2)
    """,
)

register(
    "ECO004",
    "torchmetrics metrics and torchinfo summaries are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        ``torchmetrics`` metrics are Modules that accumulate with ``metric(preds, target)``
        or ``update`` and report with ``compute()``; MindSpore's metrics
        (``mindspore.train.Accuracy``, ``Precision``, ``Recall``, ``F1``, ``MAE``, ``MSE``...)
        accumulate with ``update(preds, target)`` and report with ``eval()`` after
        ``clear()``, and take other arguments (no ``task=``; top-k and averaging are spelled
        differently), so they are flagged with the class to use rather than rewritten.
        ``torchinfo.summary(model, input_size)`` prints a table of layers, shapes and
        parameter counts by running the model; MindSpore has no such function:
        ``print(model)`` lists the layers and ``sum(p.size for p in
        model.trainable_params())`` counts the parameters.
    """,
    seed="seeds/002 API Comparison › Metrics",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md",
    example="""
        import torch
        import torchmetrics
        from torchinfo import summary
        accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=3)
        summary(torch.nn.Linear(4, 3), input_size=(2, 4))
    """,
)


# The packages and modules: an import with no single MindSpore counterpart is removed,
# and each name used from it is ported or flagged (and then its import kept).
for _mod in ("torchvision", "torchvision.datasets", "torchvision.models", "torchvision.utils",
             "torchvision.io", "torchvision.ops", "torchvision.transforms.functional",
             "torchmetrics", "torchmetrics.functional", "torchinfo"):
    module(_mod, None)
module(TV, VISION)


# ----------------------------------------------------------------------------- transforms


def _compose_neighbours(site):
    """(qualified names before, after) this transform in the list of the ``Compose`` it
    is an element of; None outside one."""
    calls = site.enclosing_calls
    if not calls or site.resolve(calls[-1].func) != COMPOSE or not calls[-1].args:
        return None
    seq = calls[-1].args[0].value
    if not isinstance(seq, (cst.List, cst.Tuple)):
        return None
    names = [site.resolve(e.value.func if isinstance(e.value, cst.Call) else e.value) or ""
             for e in seq.elements]
    for i, e in enumerate(seq.elements):
        if e.value is site.original:
            return names[:i], names[i + 1:]
    return None


def _pil_stage(site) -> bool:
    """Before ToTensor, with a ToTensor after it, in a Compose: the input is a PIL image."""
    around = _compose_neighbours(site)
    return around is not None and TO_TENSOR not in around[0] and TO_TENSOR in around[1]


def _call(site, target: str, args) -> cst.Call:
    new = cst.Call(func=site.ref(f"{VISION}.{target}"), args=args)
    return site.updated.with_changes(func=new.func, args=args)


def _kw(name, value, comma=cst.MaybeSentinel.DEFAULT) -> cst.Arg:
    return keyword_arg(name, value).with_changes(comma=comma)


def _sep() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _positional(args: list) -> list:
    """Arguments as written, separated by ", " (the last without a comma)."""
    out = []
    for i, a in enumerate(args):
        out.append(a.with_changes(comma=_sep() if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT))
    return out


def _compose(site):
    bound = site.bound()
    if bound is None or [n for n, _, _ in bound] != ["transforms"]:
        return _flag(site, "Compose takes the list of transforms only",
                     "mindspore.dataset.transforms.Compose(list)")
    new = site.updated.with_changes(func=site.ref("mindspore.dataset.transforms.Compose"))
    site.edit("ECO001", new, detail=f"{COMPOSE} -> mindspore.dataset.transforms.Compose")
    return new


def _to_tensor(site):
    if site.updated.args:
        return _flag(site, "ToTensor takes no arguments", "vision.ToTensor()")
    new = _call(site, "ToTensor", [])
    around = _compose_neighbours(site)
    site.edit("ECO001", new, detail=f"{TO_TENSOR} -> {VISION}.ToTensor")
    if around is None or not around[0]:
        site.finding(
            "ECO001",
            "vision.ToTensor agrees with PyTorch for PIL images and uint8 arrays; it also "
            "divides float arrays by 255 (PyTorch keeps their values) and returns a NumPy "
            "array, not a tensor: wrap the result in mindspore.Tensor(...) where it is used "
            "as one",
            comment="ToTensor: PIL or uint8 input only; returns a NumPy array",
        )
    return new


def _normalize(site):
    bound = site.bound()
    names = [n for n, _, _ in bound or []]
    if bound is None or "mean" not in names or "std" not in names or set(names) - {"mean", "std", "inplace"}:
        return _flag(site, "Normalize is ported with its mean and std", "vision.Normalize(mean, std, is_hwc=False)")
    args = {n: a for n, a, _ in bound}
    after_to_tensor = (around := _compose_neighbours(site)) is not None and TO_TENSOR in around[0]
    new = _call(site, "Normalize", [
        args["mean"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=_sep()),
        args["std"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=_sep()),
        _kw("is_hwc", cst.Name("False")),
    ])
    site.edit("ECO001", new, detail=f"{TV}.Normalize -> {VISION}.Normalize(..., is_hwc=False)"
              + ("; inplace= dropped (the CHW image is a fresh array)" if "inplace" in args else ""))
    if not after_to_tensor:
        site.finding(
            "ECO001",
            "vision.Normalize(is_hwc=False) normalises one CHW NumPy image, as it gets it after "
            "ToTensor in a Compose; PyTorch's also takes tensors and batches: for a tensor write "
            "(x - mean) / std with ops",
            comment="Normalize: one CHW NumPy image only",
        )
    return new


_INTER = {"NEAREST": "NEAREST", "BILINEAR": "BILINEAR", "BICUBIC": "BICUBIC"}


def _resize(site):
    bound = site.bound()
    if bound is None:
        return None
    args = {n: a for n, a, _ in bound}
    originals = {n: o.value for (n, _, _), o in zip(bound, site.original.args)}
    if "size" not in args or "max_size" in args and site.literal(args["max_size"].value, "") is not None:
        return _flag(site, "Resize with max_size= (or without a size) has no vision.Resize "
                     "counterpart", "vision.Resize(size, interpolation)")
    out = [args["size"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
    if "interpolation" in args:
        mode = (site.resolve(originals["interpolation"]) or "").rpartition(".")
        if mode[0] != f"{TV}.InterpolationMode" or mode[2] not in _INTER:
            return _flag(site, "only the nearest, bilinear and bicubic interpolation modes "
                         "(InterpolationMode.X) are verified to agree", "vision.Resize(size, vision.Inter.X)")
        out[0] = out[0].with_changes(comma=_sep())
        out.append(args["interpolation"].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                                      comma=cst.MaybeSentinel.DEFAULT))
    new = _call(site, "Resize", out)
    site.edit("ECO001", new, detail=f"{TV}.Resize -> {VISION}.Resize"
              + ("; antialias= dropped (PIL images are always antialiased)" if "antialias" in args else ""))
    _pil_only(site, "Resize", "resizes arrays with OpenCV, without antialiasing")
    return new


def _center_crop(site):
    bound = site.bound()
    if bound is None or [n for n, _, _ in bound] != ["size"]:
        return _flag(site, "CenterCrop takes the size only", "vision.CenterCrop(size)")
    new = _call(site, "CenterCrop", [bound[0][1]])
    site.edit("ECO001", new, detail=f"{TV}.CenterCrop -> {VISION}.CenterCrop")
    _pil_only(site, "CenterCrop", "rounds the crop offset of arrays differently")
    return new


def _pil_only(site, name: str, otherwise: str) -> None:
    if not _pil_stage(site):
        site.finding(
            "ECO001",
            f"vision.{name} agrees with PyTorch on PIL images (as before ToTensor in a Compose); "
            f"on other input it {otherwise}, and it does not take CHW tensors",
            comment=f"{name}: PIL images only",
        )


def _flag(site, reason: str, use: str):
    site.finding("ECO001", f"{site.api}: {reason}; write it with mindspore.dataset.{use} by hand",
                 comment=f"not ported; use mindspore.dataset.{use}")
    return None


api(COMPOSE, "mindspore.dataset.transforms.Compose", rule="ECO001", sig=("transforms",),
    handler=_compose, returns="transform")
api(TO_TENSOR, f"{VISION}.ToTensor", rule="ECO001", sig=(), handler=_to_tensor, returns="transform")
api(f"{TV}.Normalize", f"{VISION}.Normalize", rule="ECO001", sig=("mean", "std", "inplace"),
    handler=_normalize, returns="transform")
api(f"{TV}.Resize", f"{VISION}.Resize", rule="ECO001",
    sig=("size", "interpolation", "max_size", "antialias"), handler=_resize, returns="transform")
api(f"{TV}.CenterCrop", f"{VISION}.CenterCrop", rule="ECO001", sig=("size",), handler=_center_crop,
    returns="transform")
module(f"{TV}.InterpolationMode", f"{VISION}.Inter")
for _mode in _INTER:
    api(f"{TV}.InterpolationMode.{_mode}", f"{VISION}.Inter.{_INTER[_mode]}", rule="ECO001", attr=True)


@statement_hook("ECO001", cst.SimpleStatementLine)
def _eager_call(ctx, original, updated):
    """A transform called on one image (not given to a dataset's map): MindSpore's returns
    NumPy data, and a Compose called on a PIL image a 1-tuple of it."""
    for call in _calls(original):
        if isinstance(call.func, (cst.Name, cst.Attribute)) and ctx.kind_of(call.func) == "transform":
            ctx.finding(
                "ECO001",
                "a MindSpore transform called on one image returns NumPy data, not a tensor (a "
                "Compose called on a PIL image returns a 1-tuple of it): take [0] where it is a "
                "tuple and wrap it in mindspore.Tensor(...) before using it as a tensor",
                node=call, api=ctx.resolve(call.func) or "transform",
                comment="the transform returns NumPy data (a 1-tuple for a PIL image)",
            )
    return updated


def _calls(node):
    """The calls in a statement, outside lambdas (a transform given to ``map``)."""
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is cst.Lambda:
            continue
        if t is cst.Call:
            found.append(n)
        stack.extend(reversed(list(child_nodes(n))))
    return found

#: transforms with no port: the mindspore.dataset.vision class to use, and why not ported
_OTHER_TRANSFORMS = {
    "RandomHorizontalFlip": ("vision.RandomHorizontalFlip(prob=p)", "its random draws differ"),
    "RandomVerticalFlip": ("vision.RandomVerticalFlip(prob=p)", "its random draws differ"),
    "RandomCrop": ("vision.RandomCrop(size, padding=...)", "its random draws and padding options differ"),
    "RandomResizedCrop": ("vision.RandomResizedCrop(size, scale, ratio)", "its random draws differ"),
    "RandomRotation": ("vision.RandomRotation(degrees)", "its random draws differ"),
    "RandomAffine": ("vision.RandomAffine(degrees, ...)", "its random draws differ"),
    "ColorJitter": ("vision.RandomColorAdjust(brightness, contrast, saturation, hue)",
                    "its random draws differ"),
    "RandomErasing": ("vision.RandomErasing(prob=p, ...)", "its random draws differ"),
    "RandomApply": ("transforms.RandomApply(list, prob=p)", "its random draws differ"),
    "RandomChoice": ("transforms.RandomChoice(list)", "its random draws differ"),
    "Grayscale": ("vision.Grayscale(num_output_channels)", "its output is not verified to agree"),
    "Pad": ("vision.Pad(padding, fill_value, padding_mode)", "its options are spelled differently"),
    "ToPILImage": ("vision.ToPIL()", "its mode handling is not verified to agree"),
    "PILToTensor": ("vision.ToTensor(output_type=numpy.uint8)", "its output is not verified to agree"),
    "Lambda": ("transforms.PyFunc or the function itself", "a Lambda needs no wrapper there"),
    "FiveCrop": ("vision.FiveCrop(size)", "its output is not verified to agree"),
    "GaussianBlur": ("vision.GaussianBlur(kernel_size, sigma)", "its random sigma draws differ"),
}


def _other_transform(site):
    use, why = _OTHER_TRANSFORMS[site.api.rpartition(".")[2]]
    return _flag(site, f"not ported because {why}", use)


for _name in _OTHER_TRANSFORMS:
    api(f"{TV}.{_name}", rule="ECO001", handler=_other_transform, returns=None)


# ----------------------------------------------------------------------------- datasets


_DATASETS = {
    "MNIST": "MnistDataset(os.path.join(root, 'MNIST', 'raw'), usage='train' or 'test')",
    "FashionMNIST": "FashionMnistDataset(os.path.join(root, 'FashionMNIST', 'raw'), usage='train' or 'test')",
    "KMNIST": "KMnistDataset(os.path.join(root, 'KMNIST', 'raw'), usage=...)",
    "EMNIST": "EMnistDataset(dataset_dir, name=split, usage=...)",
    "CIFAR10": "Cifar10Dataset(folder of the binary version, cifar-10-batches-bin, usage=...)",
    "CIFAR100": "Cifar100Dataset(folder of the binary version, cifar-100-binary, usage=...)",
    "ImageFolder": "ImageFolderDataset(root, decode=True)",
    "DatasetFolder": "ImageFolderDataset(root) or GeneratorDataset over your loader",
    "SVHN": "SVHNDataset(root, usage=...)",
    "VOCDetection": "VOCDataset(root, task='Detection', usage=...)",
    "VOCSegmentation": "VOCDataset(root, task='Segmentation', usage=...)",
    "CocoDetection": "CocoDataset(images_dir, annotation_file, task='Detection')",
    "CelebA": "CelebADataset(root, usage=...)",
    "Flowers102": "Flowers102Dataset(root, usage=...)",
    "FakeData": "GeneratorDataset over random NumPy images",
}


def _dataset(site):
    name = site.api.rpartition(".")[2]
    site.finding(
        "ECO002",
        f"{site.api} has no line-for-line MindSpore counterpart: read the same files with "
        f"mindspore.dataset.{_DATASETS[name]}, apply transforms with .map(operations=..., "
        "input_columns='image') and batch with .batch(n) instead of a DataLoader (MindSpore "
        "readers cannot download, index or feed a DataLoader)",
        comment=f"use mindspore.dataset.{_DATASETS[name].partition('(')[0]} (see the finding)",
    )
    return None


for _name in _DATASETS:
    api(f"torchvision.datasets.{_name}", rule="ECO002", handler=_dataset, returns=None)


# ----------------------------------------------------------------------------- models, utils


_UTILS = {
    "torchvision.utils.save_image": "write x.asnumpy() scaled to uint8 with PIL: "
                                    "Image.fromarray(array).save(path)",
    "torchvision.utils.make_grid": "tile the images with numpy (np.concatenate) from x.asnumpy()",
    "torchvision.io.read_image": "read it with PIL (numpy.asarray(Image.open(path))) or "
                                 "mindspore.dataset.vision.read_image",
    "torchvision.io.decode_image": "decode it with mindspore.dataset.vision.Decode()",
}
_MODELS = ("resnet18 resnet34 resnet50 resnet101 resnet152 vgg11 vgg16 vgg19 alexnet "
           "mobilenet_v2 mobilenet_v3_small mobilenet_v3_large densenet121 efficientnet_b0 "
           "squeezenet1_0 googlenet inception_v3 vit_b_16 convnext_tiny regnet_y_400mf").split()


def _model(site):
    site.finding(
        "ECO003",
        f"{site.api} builds a PyTorch model (and may download weights); MindSpore's core package "
        "has no model zoo: define the network as a Cell (port torchvision's source of the model "
        "with msmagic) and convert PyTorch weights to a checkpoint",
        comment="no MindSpore model zoo; define the Cell (see the finding)",
    )
    return None


def _util(site):
    site.finding(
        "ECO003",
        f"{site.api} has no MindSpore counterpart: {_UTILS[site.api]}",
        comment=f"{site.api.rpartition('.')[2]} has no MindSpore counterpart (see the finding)",
    )
    return None


for _name in _MODELS:
    api(f"torchvision.models.{_name}", rule="ECO003", handler=_model, returns=None)
for _qual in _UTILS:
    api(_qual, rule="ECO003", handler=_util, returns=None)


# ----------------------------------------------------------------------------- metrics, summary


_METRICS = {
    "Accuracy": "mindspore.train.Accuracy('classification')",
    "Precision": "mindspore.train.Precision('classification')",
    "Recall": "mindspore.train.Recall('classification')",
    "F1Score": "mindspore.train.F1()",
    "MeanSquaredError": "mindspore.train.MSE()",
    "MeanAbsoluteError": "mindspore.train.MAE()",
    "ConfusionMatrix": "mindspore.train.ConfusionMatrix(num_classes)",
    "AUROC": "mindspore.train.ROC() and mindspore.train.auc",
    "MetricCollection": "a dict of mindspore.train metrics",
}


def _metric(site):
    name = site.api.rpartition(".")[2]
    site.finding(
        "ECO004",
        f"{site.api} has no line-for-line MindSpore counterpart: use {_METRICS[name]} with "
        "metric.clear(), metric.update(preds, target) and metric.eval() (its arguments differ: "
        "no task=)",
        comment=f"use {_METRICS[name].partition('(')[0]} (see the finding)",
    )
    return None


def _summary(site):
    site.finding(
        "ECO004",
        "torchinfo.summary has no MindSpore counterpart: print(model) lists the layers and "
        "sum(p.size for p in model.trainable_params()) counts the trainable parameters",
        comment="no summary in MindSpore; print(model) (see the finding)",
    )
    return None


for _name in _METRICS:
    api(f"torchmetrics.{_name}", rule="ECO004", handler=_metric, returns=None)
api("torchinfo.summary", rule="ECO004", handler=_summary, returns=None)
