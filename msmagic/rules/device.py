"""Devices: PyTorch moves every tensor and module to a device by hand; MindSpore runs a
whole process on one device target, so the moves disappear and ``torch.device`` becomes
the choice of that target."""

import re

import libcst as cst

from msmagic.engine.build import code as _code
from msmagic.engine.build import descendants
from msmagic.engine.spec import api, member, method, statement_hook
from msmagic.rules.registry import register

GROUP = "Devices"
SEED = "seeds/002 Other APIs › torch.device"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

#: The rule other groups name when they drop a ``device=`` argument.
DEVICE_ARG_RULE = "DEV003"

register(
    "DEV001",
    "torch.device becomes a device target name set with mindspore.set_device",
    group=GROUP,
    why="""
        PyTorch names a device per tensor (``torch.device("cuda:0")``) and the code then moves
        data and models to it. MindSpore has no device objects: one device target ("CPU",
        "GPU", "Ascend") holds for the whole process and every tensor and Cell lives there.
        So ``"cuda"`` becomes ``"GPU"`` and ``"cpu"`` becomes ``"CPU"`` (a conditional choice
        between the two is kept as a conditional), and a statement binding the device is
        followed by a ``mindspore.set_device`` call. That call is guarded: MindSpore refuses
        ``set_device`` once the first kernel has run unless it names the device already in
        use, which is the usual case in a notebook, so it is only made when the requested
        target differs from ``mindspore.get_current_device()``. Asking for a different device
        after computations ran cannot be honoured in the same process: restart the kernel.
        The variable now holds a target name, so code reading ``device.type`` or
        ``device.index`` needs a hand edit, and ``torch.device`` as a type (an annotation,
        ``isinstance``) becomes ``str``. A device computed at run time (``torch.device(dev)``
        with ``dev`` a variable) is mapped by its name when the code runs (an index in it,
        ``"cuda:1"``, is not passed on; a name that is already a target passes through).
        ``"mps"`` becomes ``"CPU"``: MindSpore has no Metal target.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        The r2.4.10 docs set the device with ``mindspore.set_context(device_target=...)``.
        In 2.10 that parameter is deprecated in favour of ``mindspore.set_device``, which
        raises RuntimeError when called after kernels ran (even for the same target) unless
        it was called before with the same target and id; hence the guard.
    """,
    example="""
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        use_gpu = device == torch.device("cuda")
    """,
)

register(
    "DEV002",
    "torch.cuda.is_available() becomes mindspore.device_context.gpu.is_available()",
    group=GROUP,
    why="""
        Both calls answer whether a GPU can be used by this installation, without
        initialising it. PyTorch asks the CUDA driver; MindSpore reports whether its GPU
        plugin loaded (it needs the CUDA libraries and a GPU-enabled MindSpore build), so on
        a CPU-only MindSpore it is False even on a machine with a GPU. Code that picks
        ``"cuda"`` or ``"cpu"`` with it therefore picks the target MindSpore can actually
        run on.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        has_gpu = torch.cuda.is_available()
    """,
)

register(
    DEVICE_ARG_RULE,
    "device= arguments are dropped",
    group=GROUP,
    why="""
        PyTorch factory functions and layers take ``device=`` (and ``pin_memory=``) to create
        their data on a given device. In MindSpore every tensor is created on the process's
        device target, chosen once with ``mindspore.set_device``, and results can be read
        from the host (``asnumpy()``) without copying them back. The argument has nothing to
        say there, so it is removed; the computed values are the same.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0], device="cpu")
    """,
)

register(
    "DEV004",
    "Device moves (.to(device), .cuda(), .cpu()) are removed",
    group=GROUP,
    why="""
        In PyTorch a model and its inputs must be moved to the same device before use, and
        results moved back before NumPy can read them. MindSpore places tensors and Cells on
        the process's device target by itself and copies results back on demand, so
        ``x.to(device)``, ``model.cuda()`` and ``y.cpu()`` become just ``x``, ``model`` and
        ``y``. ``.to(...)`` is decided by its argument: a device (a ``torch.device`` value,
        a device string, ``t.device``, a variable named like ``device``) is removed, a dtype
        or a tensor is kept because MindSpore 2.10's ``Tensor.to`` and ``Cell.to`` accept
        them with PyTorch's meaning. An argument msmagic cannot classify is flagged and the
        call left as it is.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        MindSpore 2.10 has ``Tensor.to`` and ``Cell.to``, but they only know MindSpore
        device names ("CPU", "Ascend"); ``"cuda"`` raises ValueError, so device arguments
        are still removed.
    """,
    example="""
        import torch
        device = torch.device("cpu")
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).to(device)
        y = x.cuda() if torch.cuda.is_available() else x.cpu()
        z = x.to(device, torch.float16)
    """,
)

register(
    "DEV005",
    "x.numpy() and its .detach().cpu() chain become x.asnumpy()",
    group=GROUP,
    why="""
        PyTorch only converts a tensor to NumPy when it is on the CPU and outside autograd,
        hence the familiar ``y.detach().cpu().numpy()``. A MindSpore tensor can always be
        read from the host, and MindSpore tensors carry no autograd history to detach, so
        the whole chain becomes ``y.asnumpy()``. MindSpore 2.10 also has ``Tensor.numpy()``,
        but ``asnumpy()`` is its documented spelling and MindSpore tensors have no
        ``detach()`` or ``cpu()`` to keep the chain.
    """,
    seed="seeds/002 Other APIs › torch.device",
    reference=REF,
    example="""
        import torch
        t = torch.tensor([1.5, -2.0])
        a = t.detach().cpu().numpy()
        b = t.numpy()
    """,
)


#: PyTorch device types -> MindSpore device targets ("mps": MindSpore has no Metal
#: target, so on a Mac it runs on the CPU; DEV006 makes ``mps.is_available()`` False)
_TARGETS = {"cuda": "GPU", "cpu": "CPU", "mps": "CPU"}


def _device_string(site, node):
    """``"cuda:1"`` -> (``"GPU"`` node, {1}); a conditional of such strings maps each
    branch. None for anything else."""
    if isinstance(node, cst.SimpleString):
        text = site.literal(node)
        kind, _, index = text.partition(":") if isinstance(text, str) else ("", "", "")
        if kind not in _TARGETS or (index and not index.isdigit()):
            return None
        return node.with_changes(value=f"{node.quote}{_TARGETS[kind]}{node.quote}"), (
            {int(index)} if index else set()
        )
    if isinstance(node, cst.IfExp):
        body, orelse = _device_string(site, node.body), _device_string(site, node.orelse)
        if body is None or orelse is None:
            return None
        return node.with_changes(body=body[0], orelse=orelse[0]), body[1] | orelse[1]
    return None


def _by_name(site, node) -> bool:
    """Can a device expression be mapped by its name when the code runs: computed (not a
    literal), with no index written in it (``f"cuda:{rank}"``, ``"cuda:1"``) that the
    mapping would lose?"""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.FormattedString):
            return False
        if isinstance(n, cst.SimpleString) and ":" in str(site.literal(n, "")):
            return False
        stack.extend(n.children)
    return True


def _device(site):
    if not isinstance(site.original, cst.Call):
        # the type (``dev: torch.device``, ``isinstance(d, torch.device)``): the port's
        # devices are target names
        new = cst.Name("str")
        site.edit("DEV001", new, detail="torch.device (the type) -> str (a MindSpore device target name)")
        return new
    kind, index = site.arg("type"), site.arg("index")
    mapped = _device_string(site, kind.value) if kind is not None else None
    if mapped is None and kind is not None and index is None and _by_name(site, kind.value):
        # a device computed at run time (``torch.device(device)``): mapped by its name
        table = ", ".join(f'"{k}": "{v}"' for k, v in _TARGETS.items())
        mapped = (site.parse(f"(lambda d: {{{table}}}.get(d.partition(\":\")[0], d))(str({site.code(kind.value)}))"),
                  set())
    if mapped is not None and index is not None:
        n = site.literal(index.value)
        mapped = (mapped[0], mapped[1] | {n}) if isinstance(n, int) else None
    if mapped is None:
        site.finding(
            "DEV001",
            "only literal 'cuda[:N]'/'cpu' devices (or a conditional choice of them) can be "
            "turned into a MindSpore device target",
            comment="device not ported; set mindspore.set_device by hand",
        )
        return None
    expr, ids = mapped
    if len(ids) > 1 or (ids and not isinstance(expr, cst.SimpleString) and ids != {0}):
        site.finding(
            "DEV001",
            f"device index {sorted(ids)} only ports for a single literal device; "
            "pass it to mindspore.set_device by hand",
            comment="device index not ported",
        )
        return None
    dev_id = next(iter(ids), 0)
    site.edit("DEV001", expr, detail=f"{site.code(kind.value)} -> {site.code(expr)}")

    def set_device(line):
        small = line.body[0] if len(line.body) == 1 else None
        if not (
            isinstance(small, cst.Assign)
            and small.value is expr
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
        ):
            return line
        name = small.targets[0].target.value
        current = site.code(site.ref("mindspore.get_current_device"))
        call = f"{site.code(site.ref('mindspore.set_device'))}({name}{f', {dev_id}' if dev_id else ''})"
        guard = cst.parse_statement(f"if {current}() != ({name}, {dev_id}):\n    {call}\n")
        site.edit("DEV001", guard, detail=f"added guarded {call}")
        return cst.FlattenSentinel([line, guard])

    site.replace_line(set_device)
    return expr


api("torch.device", rule="DEV001", sig=("type", "index"), handler=_device, returns="device", attr=True)
api("torch.cuda.is_available", "mindspore.device_context.gpu.is_available", rule="DEV002")


# -- moves

_DEVICE_NAME = re.compile(r"(^|_)dev(ice)?($|_)")
#: dtype attribute names of either framework (so ported code classifies the same way).
DTYPE_NAMES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 long "
    "short uint8 bool bool_ complex64 complex128 cfloat cdouble".split()
)


def _role(site, arg) -> str:
    """What an argument of ``.to(...)`` is: device, dtype, tensor, option or unknown."""
    if arg.keyword is not None:
        return {"device": "device", "dtype": "dtype", "non_blocking": "option",
                "copy": "option"}.get(arg.keyword.value, "unknown")
    node = arg.value
    kind = site.kind_of(node)
    if kind in ("device", "dtype", "tensor"):
        return kind
    if isinstance(node, cst.SimpleString):
        return "device"
    if isinstance(node, cst.Attribute):
        if node.attr.value == "device":
            return "device"
        if node.attr.value == "dtype" or node.attr.value in DTYPE_NAMES:
            return "dtype"
    if isinstance(node, cst.Name) and _DEVICE_NAME.search(node.value):
        return "device"
    return "unknown"


def _to(site):
    call = site.updated
    if any(a.star for a in call.args):
        return None
    roles = [_role(site, orig) for orig in site.original.args]
    if "unknown" in roles:
        odd = next(a for a, r in zip(site.original.args, roles) if r == "unknown")
        site.finding(
            "DEV004",
            f"cannot tell whether {site.code(odd).strip().rstrip(',')} is a device, a dtype or "
            "a tensor; .to(...) was left unchanged",
            comment=".to() argument not recognised",
        )
        return None
    if "device" not in roles:
        return None  # a dtype or tensor conversion: Tensor.to / Cell.to take it as is
    if not {"dtype", "tensor"} & set(roles):
        site.edit("DEV004", site.receiver, detail=".to(device) removed")
        return site.receiver
    kept = [a for a, r in zip(call.args, roles) if r != "device"]
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    new = call.with_changes(args=kept)
    site.edit("DEV004", new, detail="device argument of .to() removed")
    return new


def _strip(site):
    site.edit("DEV004", site.receiver, detail=f".{site.original.func.attr.value}() removed")
    return site.receiver


method("to", "DEV004", receiver="any", unambiguous=True, handler=_to, returns="same")
for _name in ("cuda", "cpu"):
    method(_name, "DEV004", receiver="any", unambiguous=True, handler=_strip, returns="same")


def _asnumpy(site):
    chain = []
    node = site.receiver_original
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("detach", "cpu")
        and not node.args
    ):
        chain.append(node)
        node = node.func.value
    site.forget(*chain)
    new = cst.Call(func=cst.Attribute(value=site.updated_of(node), attr=cst.Name("asnumpy")))
    steps = "".join(f".{c.func.attr.value}()" for c in reversed(chain))
    site.edit("DEV005", new, detail=f"{steps}.numpy() -> .asnumpy()")
    return new


method("numpy", "DEV005", unambiguous=True, handler=_asnumpy, returns=None)


# -- device queries and the default device

register(
    "DEV006",
    "torch.cuda.device_count() and mps.is_available() answer for MindSpore's devices",
    group=GROUP,
    why="""
        Like ``torch.cuda.is_available()`` (DEV002), these calls decide which device the
        code uses, so the port asks the framework that runs it. ``torch.cuda.device_count()``
        becomes the number of GPUs MindSpore can use:
        ``mindspore.device_context.gpu.device_count()`` when its GPU plugin is loaded, else
        ``0`` (MindSpore 2.10 raises RuntimeError instead of answering 0 when it has no GPU
        backend, hence the guard). On a CPU-only MindSpore that is 0 even on a machine with
        GPUs, which is the count the ported code can actually use.
        ``torch.backends.mps.is_available()`` and ``is_built()`` (Apple's Metal backend)
        become ``False``: MindSpore has no MPS target, so a branch choosing ``"mps"`` can
        never be taken by the port. PyTorch's examples first probe for the backend module,
        ``hasattr(torch.backends, "mps")``: that asks PyTorch itself (whether it has such a
        module, which PyTorch 2.13 answers True for its backends: ``mps``, ``cuda``,
        ``cudnn``...), so the probe becomes that answer and no ``import torch`` is kept for
        it; ``torch.backends`` used any other way is flagged. Recent PyTorch asks ``torch.accelerator`` instead:
        ``is_available()`` becomes whether MindSpore can use a GPU or an Ascend NPU, and
        ``current_accelerator()`` the target name of that device (``"GPU"``, ``"Ascend"``)
        or ``None``; its ``.type`` is that name, the way a ported ``torch.device`` is a
        target name (DEV001). ``torch.cuda.get_device_name()`` has no MindSpore
        counterpart: MindSpore reports its target (``"GPU"``, ``"CPU"``), not the card, so
        the port shows the target name and is flagged. ``torch.cuda.current_device()`` is
        the device id MindSpore runs on. ``torch.cuda.synchronize()`` (waiting for the GPU
        before reading a timer) is ``mindspore.runtime.synchronize()``, which waits for the
        streams of MindSpore's device (on CPU it logs that the CPU has none and returns).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        n_gpus = torch.cuda.device_count()
        use_mps = torch.backends.mps.is_available()
        probed = hasattr(torch.backends, "mps") and torch.backends.mps.is_available()
        device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
        if torch.cuda.is_available():
            print(torch.cuda.get_device_name(0), torch.cuda.current_device())
    """,
)

register(
    "DEV007",
    "torch.set_default_device(...) becomes a guarded mindspore.set_device",
    group=GROUP,
    why="""
        ``torch.set_default_device("cuda")`` makes PyTorch create new tensors on that device.
        MindSpore creates every tensor on the process's one device target, so the call
        becomes the choice of that target, guarded as in DEV001: ``mindspore.set_device``
        is only called when the target differs from ``mindspore.get_current_device()``,
        because MindSpore refuses it once kernels ran. A literal ``"cpu"``/``"cuda[:N]"``
        is mapped to ``"CPU"``/``"GPU"``; a variable bound by ``torch.device(...)`` already
        holds the target name (DEV001). Any other argument (``None``, a computed string,
        ``"mps"``) is flagged and left as PyTorch: choose the target with
        ``mindspore.set_device`` by hand.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        ``mindspore.set_device`` raises RuntimeError when called after kernels ran, even for
        the device in use, unless it was called before with the same target and id; hence
        the guard.
    """,
    example="""
        import torch
        torch.set_default_device("cpu")
        x = torch.ones(2, 3)
    """,
)


def _device_count(site):
    gpu = site.code(site.ref("mindspore.device_context.gpu")).strip()
    new = site.parse(f"({gpu}.device_count() if {gpu}.is_available() else 0)")
    site.edit("DEV006", new, detail="torch.cuda.device_count() -> GPUs MindSpore can use (0 without)")
    return new


def _no_mps(site):
    new = cst.Name("False")
    site.edit("DEV006", new, detail=f"{site.api}() -> False (MindSpore has no MPS target)")
    return new


def _gpu_or_ascend(site, what: str) -> str:
    gpu = site.code(site.ref("mindspore.device_context.gpu")).strip()
    ascend = site.code(site.ref("mindspore.device_context.ascend")).strip()
    return what.format(gpu=gpu, ascend=ascend)


def _accelerator_available(site):
    new = site.parse(_gpu_or_ascend(site, "({gpu}.is_available() or {ascend}.is_available())"))
    site.edit("DEV006", new, detail=f"{site.api}() -> whether MindSpore can use a GPU or an Ascend NPU")
    return new


def _current_accelerator(site):
    new = site.parse(_gpu_or_ascend(
        site, "(\"GPU\" if {gpu}.is_available() else \"Ascend\" if {ascend}.is_available() else None)"))
    site.edit("DEV006", new, detail=f"{site.api}() -> the MindSpore target name of the accelerator, or None")
    return new


def _device_type(site):
    """``device.type`` of a ported device: the device is its target name already."""
    recv = site.receiver_original
    from_accelerator = isinstance(recv, cst.Call) and site.resolve(recv.func) == "torch.accelerator.current_accelerator"
    if not from_accelerator:
        site.finding("DEV006", "device.type: the ported device is a MindSpore target name (\"GPU\", \"CPU\"); "
                     "compare it with those, not with \"cuda\"/\"cpu\"", api="Device.type",
                     comment=".type is the target name here")
    new = site.receiver
    site.edit("DEV006", new, api="Device.type", detail=".type of a device -> the target name itself")
    return new


def _device_name(site):
    new = site.parse(f"{site.code(site.ref('mindspore.get_current_device')).strip()}().device_target")
    site.edit("DEV006", new, detail=f"{site.api}() -> the MindSpore device target")
    site.finding("DEV006", f"{site.api}(): MindSpore reports no device name; the port gives its device target "
                 "(\"GPU\", \"Ascend\", \"CPU\")", comment="device target, not the card's name")
    return new


def _current_device(site):
    new = site.parse(f"{site.code(site.ref('mindspore.get_current_device')).strip()}().device_id")
    site.edit("DEV006", new, detail=f"{site.api}() -> the device id MindSpore runs on")
    return new


api("torch.cuda.device_count", rule="DEV006", sig=(), handler=_device_count, returns=None)
api("torch.accelerator.is_available", rule="DEV006", sig=(), handler=_accelerator_available, returns=None)
api("torch.accelerator.current_accelerator", rule="DEV006", sig=("check_available",),
    handler=_current_accelerator, returns="device")
api("torch.cuda.get_device_name", rule="DEV006", sig=("device",), handler=_device_name, returns=None)
api("torch.cuda.current_device", rule="DEV006", sig=(), handler=_current_device, returns=None)
member("type", "DEV006", receiver="device", handler=_device_type)
#: the submodules of ``torch.backends`` (PyTorch 2.13): ``hasattr(torch.backends, "mps")``
#: probes for one before asking whether its device is there
TORCH_BACKENDS = frozenset({
    "cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps", "nnpack", "openmp",
    "opt_einsum", "python_native", "quantized", "xeon", "xnnpack",
})


class _BackendProbes(cst.CSTTransformer):
    """``hasattr(torch.backends, "mps")`` -> ``True`` (the texts of the probes to replace)."""

    def __init__(self, probes: dict):
        super().__init__()
        self.probes = probes

    def leave_Call(self, original, updated):
        value = self.probes.get(_code(updated).strip())
        return cst.Name(value) if value is not None else updated


@statement_hook("DEV006", cst.SimpleStatementLine, cst.If, cst.While)
def _backend_probe(ctx, original, updated):
    """``if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():``
    (PyTorch's examples): whether PyTorch has that backend module, which the installed
    PyTorch answers; the availability check after it becomes False (DEV006)."""
    parts = [original]
    if isinstance(original, (cst.If, cst.While)):
        parts, node = [], original
        while isinstance(node, (cst.If, cst.While)):  # the tests of an if/elif chain
            parts.append(node.test)
            node = node.orelse if isinstance(node, cst.If) else None
    if not any("backends" in _code(part) for part in parts):
        return updated
    probes = {}
    for n in (n for part in parts for n in descendants(part)):
        if not (type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "hasattr" and len(n.args) == 2
                and isinstance(n.args[1].value, cst.SimpleString) and ctx.resolve(n.args[0].value) == "torch.backends"):
            continue
        name = n.args[1].value.evaluated_value
        probes[_code(n).strip()] = "True" if name in TORCH_BACKENDS else "False"
    if not probes:
        return updated
    transformer = _BackendProbes(probes)

    def tests(node):
        if isinstance(node, cst.If):
            orelse = tests(node.orelse) if isinstance(node.orelse, cst.If) else node.orelse
            return node.with_changes(test=node.test.visit(transformer), orelse=orelse)
        return node.with_changes(test=node.test.visit(transformer))

    new = tests(updated) if isinstance(updated, (cst.If, cst.While)) else updated.visit(transformer)
    ctx.edit("DEV006", new, node=original, api="torch.backends",
             detail="hasattr(torch.backends, name) -> whether PyTorch 2.13 has that backend module")
    return new


def _backends_value(site):
    """``torch.backends`` as a value: the first argument of ``hasattr`` with a name is a
    probe :func:`_backend_probe` answers; anywhere else it has no MindSpore counterpart."""
    calls = site.enclosing_calls
    probe = calls and type(calls[-1].func) is cst.Name and calls[-1].func.value == "hasattr" \
        and len(calls[-1].args) == 2 and calls[-1].args[0].value is site.original \
        and isinstance(calls[-1].args[1].value, cst.SimpleString) \
        and isinstance(site.statement, (cst.SimpleStatementLine, cst.If, cst.While))
    if probe:
        return None
    site.finding("DEV006", "torch.backends used as a value (not a probe hasattr(torch.backends, name)): "
                 "MindSpore has no counterpart; left as PyTorch", comment="torch.backends left as PyTorch")
    return site.torch_ref("torch.backends")


api("torch.backends", rule="DEV006", attr=True, handler=_backends_value, returns=None)
api("torch.backends.mps.is_available", rule="DEV006", sig=(), handler=_no_mps, returns=None)
api("torch.backends.mps.is_built", rule="DEV006", sig=(), handler=_no_mps, returns=None)
api("torch.cuda.synchronize", "mindspore.runtime.synchronize", rule="DEV006", sig=(), returns=None)


def _set_default_device(site):
    bound = site.bound()
    arg = bound[0][1] if bound and len(bound) == 1 and bound[0][0] == "device" else None
    line = site.statement
    if not site.is_statement or arg is None or len(line.body) != 1:
        site.finding(
            "DEV007",
            "only a torch.set_default_device(device) statement is ported; choose the device "
            "target once with mindspore.set_device",
            comment="set the device with mindspore.set_device by hand",
        )
        return None
    original = site.original.args[0].value
    mapped = _device_string(site, arg.value)
    dev_id = 0
    if mapped is not None:
        expr, ids = mapped
        if len(ids) > 1 or not isinstance(expr, cst.SimpleString):
            mapped = None
        else:
            dev_id = next(iter(ids), 0)
    elif site.kind_of(original) == "device" and isinstance(original, cst.Name):
        expr = arg.value  # bound by torch.device(...): already a target name (DEV001)
        mapped = (expr, set())
    if mapped is None:
        site.finding(
            "DEV007",
            f"torch.set_default_device({site.code(original).strip()}): only a literal "
            "'cpu'/'cuda[:N]' or a torch.device variable maps to a MindSpore device target",
            comment="device not ported; set mindspore.set_device by hand",
        )
        return None
    target = site.code(expr).strip()
    current = site.code(site.ref("mindspore.get_current_device")).strip()
    set_device = site.code(site.ref("mindspore.set_device")).strip()
    if isinstance(expr, cst.SimpleString):
        test = f"{current}() != ({target}, {dev_id})"
        call = f"{set_device}({target}{f', {dev_id}' if dev_id else ''})"
    else:
        test = f"{current}().device_target != {target}"
        call = f"{set_device}({target})"
    guard = site.parse_statement(f"if {test}:\n    {call}\n")

    def replace(updated_line):
        out = guard.with_changes(leading_lines=updated_line.leading_lines)
        comment = updated_line.trailing_whitespace.comment
        if comment is not None:  # the line's comment stays on the line that replaces it
            out = out.with_changes(body=out.body.with_changes(
                header=out.body.header.with_changes(
                    whitespace=updated_line.trailing_whitespace.whitespace, comment=comment)))
        return out

    site.replace_line(replace)
    site.edit("DEV007", guard, detail=f"torch.set_default_device -> guarded {call}")
    return site.updated


api("torch.set_default_device", rule="DEV007", sig=("device",), handler=_set_default_device,
    returns=None)


# -- cuDNN flags and determinism

register(
    "DEV008",
    "cuDNN flags and use_deterministic_algorithms -> mindspore.set_deterministic",
    group=GROUP,
    why="""
        Seeding cells of training notebooks also set ``torch.backends.cudnn.deterministic =
        True`` and ``torch.backends.cudnn.benchmark = False``. They only tune cuDNN, NVIDIA's
        GPU kernels: on the CPU they change nothing in PyTorch either. The request for
        deterministic kernels has a MindSpore counterpart: ``mindspore.set_deterministic
        (True)`` (also the port of ``torch.use_deterministic_algorithms(True)``). MindSpore
        refuses to set it twice in one process, which re-running a notebook cell does, so
        the call is guarded by ``mindspore.get_context("deterministic")``. Asking for
        non-deterministic kernels (``= False``) is MindSpore's default, and the other flags
        (``benchmark``, ``enabled``, ``allow_tf32`` of cuDNN and of CUDA matmul) choose GPU
        algorithms MindSpore chooses itself (its GPU settings are in
        ``mindspore.device_context.gpu``: ``conv_fprop_algo``, ``conv_allow_tf32``,
        ``matmul_allow_tf32``), so those assignments are removed. Reading a flag gives
        PyTorch's default value (flagged), and ``cudnn.is_available()`` asks whether
        MindSpore can use a GPU (DEV002).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        MindSpore 2.10 raises RuntimeError ("can not be set repeatedly") on a second
        ``set_deterministic`` call in a process, even with the same value; the guard reads
        ``get_context("deterministic")`` ("OFF" until set). ``gpu.conv_allow_tf32`` and
        ``matmul_allow_tf32`` log an error on a CPU-only MindSpore, another reason they are
        not written.
    """,
    example="""
        import torch
        torch.manual_seed(42)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.enabled = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.use_deterministic_algorithms(True)
        has_cudnn = torch.backends.cudnn.is_available()
        x = torch.rand(3)
    """,
)

CUDNN = "torch.backends.cudnn"
#: flag -> PyTorch's default (what reading it gives in a fresh process)
_CUDNN_FLAGS = {f"{CUDNN}.deterministic": False, f"{CUDNN}.benchmark": False, f"{CUDNN}.enabled": True,
                f"{CUDNN}.allow_tf32": True, "torch.backends.cuda.matmul.allow_tf32": False}


def _assigned_line(site):
    """The statement line ``<this attribute> = value`` (one assignment), or None."""
    line = site.statement
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and small.targets[0].target is site.original:
        return small
    return None


def _deterministic_guard(site, value: str):
    get_context = site.code(site.ref("mindspore.get_context")).strip()
    set_det = site.code(site.ref("mindspore.set_deterministic")).strip()
    return site.parse_statement(f"if {get_context}(\"deterministic\") != \"ON\":\n    {set_det}({value})\n")


def _replace_statement(site, new, detail: str):
    """Replace the statement holding this node by ``new`` (None: remove it), keeping its
    comments: those above it, and the one at its end (on ``new``'s first line)."""
    before, after = site.siblings()

    def replace(line):
        comment = line.trailing_whitespace.comment
        if new is None:
            if not (before or after):
                return line.with_changes(body=[cst.Pass()])  # the only statement of its block
            lines = list(line.leading_lines)
            if comment is not None:  # the line's comment stays, on a line of its own
                lines.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=comment))
            site.carry_lines(lines)
            return cst.RemovalSentinel.REMOVE
        out = new.with_changes(leading_lines=line.leading_lines)
        if comment is not None:
            out = out.with_changes(body=out.body.with_changes(header=out.body.header.with_changes(
                whitespace=line.trailing_whitespace.whitespace, comment=comment)))
        return out

    site.replace_line(replace)
    site.edit("DEV008", new, detail=detail)


def _cudnn_flag(site):
    small = _assigned_line(site)
    qual = site.api
    if small is None:  # read, not assigned
        default = _CUDNN_FLAGS[qual]
        new = cst.Name(str(default))
        site.edit("DEV008", new, detail=f"{qual} read: PyTorch's default {default}")
        site.finding("DEV008", f"{qual} is a cuDNN setting MindSpore does not have; read here as PyTorch's "
                     f"default ({default}), whatever an earlier assignment set",
                     comment=f"{qual.rsplit('.', 1)[-1]} read as PyTorch's default {default}")
        return new
    value = small.value
    truth = site.literal(value, None)
    text = site.code(value).strip()
    if qual.endswith(".deterministic") and truth is not False:
        if truth is not True:
            site.finding("DEV008", f"{qual} = {text}: only a literal True asks for deterministic kernels; ported as "
                         f"mindspore.set_deterministic({text})", comment="set_deterministic of a computed value")
        _replace_statement(site, _deterministic_guard(site, text),
                           f"{qual} = {text} -> guarded mindspore.set_deterministic({text})")
        return None
    why = ("MindSpore's default" if qual.endswith(".deterministic")
           else "a cuDNN/CUDA algorithm choice MindSpore makes itself (no effect on the CPU in PyTorch either)")
    _replace_statement(site, None, f"{qual} = {text} removed: {why}")
    return None


for _qual in _CUDNN_FLAGS:
    api(_qual, rule="DEV008", attr=True, handler=_cudnn_flag, returns=None)


def _use_deterministic(site):
    mode = site.arg("mode")
    if mode is None or not site.is_statement or len(site.statement.body) != 1:
        site.finding("DEV008", "only a torch.use_deterministic_algorithms(mode) statement is ported",
                     comment="call mindspore.set_deterministic by hand")
        return None
    truth = site.literal(mode.value, None)
    text = site.code(mode.value).strip()
    if truth is False:
        _replace_statement(site, None, f"{site.api}({text}) removed: MindSpore's default")
    else:
        _replace_statement(site, _deterministic_guard(site, text),
                           f"{site.api}({text}) -> guarded mindspore.set_deterministic({text})")
    return site.updated


api("torch.use_deterministic_algorithms", rule="DEV008", sig=("mode", "warn_only"),
    handler=_use_deterministic, returns=None)
api(f"{CUDNN}.is_available", "mindspore.device_context.gpu.is_available", rule="DEV008", sig=(), returns=None)
