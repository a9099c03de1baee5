"""Checkpoints: ``torch.save(model.state_dict(), p)`` / ``model.load_state_dict(torch.load(p))``
and the optimizer's state -> ``mindspore.save_checkpoint`` / ``load_checkpoint`` +
``load_param_into_net``.

``model.load_state_dict(...)`` itself is ported by rule CEL006 (cells.py); this module
ports the file side (``torch.save``/``torch.load``) and the optimizer's state."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api, method
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Checkpoints"
SEED = "seeds/004 Parameters Management › Parameter Saving and Loading"
EXT = ".ckpt"
_NOTE = """
    Verified on MindSpore 2.10: ``save_checkpoint(net, "m.pt")`` writes ``m.pt.ckpt`` (the
    ``.ckpt`` suffix is appended to any other name) and ``load_checkpoint`` raises a
    ValueError for a file name that does not end in ``.ckpt``. ``save_checkpoint`` of a
    plain dict of Tensors fails (UnboundLocalError); the list form
    ``[{"name": ..., "data": ...}]`` works and ``load_checkpoint`` returns a dict of
    Parameters.
"""

register(
    "CKP001",
    "torch.save(model.state_dict(), p) becomes save_checkpoint(model, p)",
    group=GROUP,
    why="""
        PyTorch pickles whatever it is given, usually the ``state_dict()`` mapping of names to
        tensors. MindSpore writes its own ``.ckpt`` format from a Cell (or a list of
        name/data entries) with ``mindspore.save_checkpoint``, which also appends ``.ckpt``
        to a file name that lacks it, while ``load_checkpoint`` only opens names ending in
        ``.ckpt``. The port therefore passes the Cell itself and makes the suffix explicit:
        a literal name gets ``.ckpt`` written into it, a variable keeps its value on save
        and is given the same suffix on load. MindSpore takes only ``str`` file names, so a
        ``pathlib.Path`` (``Path(...)``, ``folder / "m.pt"``, or a name bound to one) is
        passed as ``str(path)``; a file object (``open(...)``, ``io.BytesIO()``) is flagged.
        Keys differ from PyTorch's for BatchNorm
        (``gamma``/``beta``/``moving_mean``/``moving_variance`` instead of
        ``weight``/``bias``/``running_mean``/``running_var``, and no ``num_batches_tracked``),
        so a file written by PyTorch cannot be read this way: convert it once with
        ``torch.load``, rename those keys and save the result with ``save_checkpoint``.
        ``torch.save`` of other objects (models, dicts with numbers, lists) is flagged.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.save -> mindspore.save_checkpoint)",
    installed_note=_NOTE,
    example="""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        path = os.path.join(tempfile.mkdtemp(), "linear.pt")
        src = nn.Linear(3, 2)
        torch.save(src.state_dict(), path)
        dst = nn.Linear(3, 2)
        dst.load_state_dict(torch.load(path))
        y = dst(torch.ones(1, 3))
    """,
)

register(
    "CKP002",
    "torch.load(path) becomes mindspore.load_checkpoint(path + '.ckpt')",
    group=GROUP,
    why="""
        ``mindspore.load_checkpoint`` reads a ``.ckpt`` file into a dict of Parameters, the
        value ``load_param_into_net`` (rule CEL006) copies into a Cell or an optimizer. It
        accepts only names ending in ``.ckpt``; since the port's ``save_checkpoint`` wrote
        that suffix, the same suffix is added to the name here (for a literal directly, for
        a variable as ``p if p.endswith('.ckpt') else p + '.ckpt'``, for any other
        expression, evaluated once, as ``expr.removesuffix('.ckpt') + '.ckpt'``). A
        ``pathlib.Path`` becomes ``str(path)`` first: MindSpore takes only ``str`` names.
        ``map_location`` has
        no counterpart (MindSpore places data on the context's device) and is dropped;
        ``weights_only`` is dropped because a ``.ckpt`` file holds data only. A file
        produced by PyTorch itself is not a MindSpore checkpoint (see CKP001).
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.load -> mindspore.load_checkpoint)",
    installed_note=_NOTE,
    example="""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        path = os.path.join(tempfile.mkdtemp(), "load.pt")
        model = nn.Linear(2, 2)
        torch.save(model.state_dict(), path)
        w = torch.load(path, map_location="cpu")["weight"]
    """,
)

register(
    "CKP003",
    "Optimizer state: state_dict()/load_state_dict() are saved and loaded as a Cell",
    group=GROUP,
    why="""
        A MindSpore optimizer is a Cell whose Parameters hold its state (step count,
        learning rate, moment estimates such as ``moment1.<name>``), so the seed saves and
        loads it like a network: ``save_checkpoint(optimizer, path)`` and
        ``load_param_into_net(optimizer, load_checkpoint(path))``.
        ``optimizer.state_dict()`` becomes ``optimizer.parameters_dict()``. One difference
        to keep in mind: the optimizer's checkpoint also contains the network weights it
        updates, so loading it sets the model's weights too, which PyTorch's
        ``optimizer.load_state_dict`` never does; save model and optimizer at the same
        time. Settings changed at run time through ``param_groups`` are not part of it,
        and the ``mindspore.experimental.optim`` optimizers (PyTorch's Adam, AdamW,
        RMSprop... port to them) keep their learning rates only in ``param_groups``: their
        moments and step count load, their rates stay as built, so loading one into an
        optimizer built with another rate is flagged.
    """,
    seed="seeds/002 Optimizer Comparison › Saving and Loading Optimizer State",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.optim.Optimizer.state_dict)",
    installed_note=_NOTE,
    example="""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        path = os.path.join(tempfile.mkdtemp(), "optimizer.pt")
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        torch.save(optimizer.state_dict(), path)
        restored = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        restored.load_state_dict(torch.load(path))
        lr = restored.param_groups[0]["lr"]
    """,
)


# ----------------------------------------------------------------------------- paths


def _ckpt_path(site, arg: cst.Arg, original, *, loading: bool):
    """The file name MindSpore uses: a literal gets ``.ckpt``; a variable is kept on save
    (save_checkpoint appends it) and suffixed conditionally on load. MindSpore takes only
    str names: a ``pathlib.Path`` (``Path(...)``, ``d / "m.pt"``, a name bound to one in
    this cell or at the top of an earlier one) is passed as ``str(p)``. A file object
    cannot be ported (None, flagged)."""
    value = arg.value
    text = site.literal(value, None)
    if isinstance(text, str):
        return value if text.endswith(EXT) else site.parse(repr(text + EXT))
    api = "torch.load" if loading else "torch.save"
    if _is_file_object(site, original):
        site.finding(
            "CKP002" if loading else "CKP001",
            f"{api} with a file object: MindSpore reads and writes checkpoints by file name "
            "only; pass the file's path instead of the open file or buffer",
            comment="pass a file name, not a file object",
        )
        return None
    p = site.code(value).strip()
    if _is_path(site, original):
        p = f"str({p})"
        if not loading:
            return site.parse(p)
    elif not loading:
        return value
    elif is_pure(value):
        return site.parse(f"{p} if {p}.endswith({EXT!r}) else {p} + {EXT!r}")
    elif not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString,
                                cst.FormattedString, cst.ConcatenatedString)):
        p = f"({p})"
    # evaluated once: a Path's str(), or an expression such as os.path.join(...)
    return site.parse(f"{p}.removesuffix({EXT!r}) + {EXT!r}")


_PATH_CLASSES = {"Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"}
_PATH_METHODS = {"with_suffix", "with_name", "with_stem", "joinpath", "resolve", "absolute",
                 "expanduser", "cwd", "home"}
_FILE_OBJECTS = {"open", "BytesIO", "TemporaryFile", "NamedTemporaryFile"}


def _binding(site, name: str):
    """The value last bound to ``name`` before this statement: an assignment or a
    ``with ... as name`` of the enclosing blocks, or a top-level call of an earlier cell."""
    for stmt in reversed(site.enclosing_statements):
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None and isinstance(item.asname.name, cst.Name) \
                        and item.asname.name.value == name:
                    return item.item
    for body, index in reversed(site.blocks):
        for stmt in reversed(body[:index]):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in reversed(stmt.body):
                    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                            else [small.target]
                        if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                            return small.value
    return site.earlier_definition(name)


def _callee(node) -> str:
    func = node.func if isinstance(node, cst.Call) else None
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


def _is_path(site, node, depth: int = 0) -> bool:
    """Is the (original) file-name expression a ``pathlib`` path?"""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return True  # a str cannot be divided: `folder / "model.pt"` builds a Path
    if isinstance(node, cst.Call):
        return _callee(node) in _PATH_CLASSES or (
            isinstance(node.func, cst.Attribute) and node.func.attr.value in _PATH_METHODS)
    if isinstance(node, cst.Name) and depth < 3:
        bound = _binding(site, node.value)
        return bound is not None and _is_path(site, bound, depth + 1)
    return False


def _is_file_object(site, node, depth: int = 0) -> bool:
    if isinstance(node, cst.Call):
        return _callee(node) in _FILE_OBJECTS
    if isinstance(node, cst.Name) and depth < 3:
        bound = _binding(site, node.value)
        return bound is not None and _is_file_object(site, bound, depth + 1)
    return False


# ----------------------------------------------------------------------------- torch.save


def _original_arg(site, bound, name: str):
    return next(a.value for a, (n, _, _) in zip(site.original.args, bound) if n == name)


def _save(site):
    bound = site.bound()
    if bound is None:
        site.finding("GEN003", "arguments passed with * or ** cannot be checked for torch.save",
                     comment="*args/**kwargs not checked")
        return None
    args = {name: arg for name, arg, _ in bound}
    obj, path = args.get("obj"), args.get("f")
    extra = set(args) - {"obj", "f"}
    if obj is None or path is None or extra:
        site.finding("CKP001", f"torch.save with {', '.join(sorted(map(str, extra))) or 'missing'} "
                     "arguments is not ported", comment="torch.save arguments not ported")
        return None
    original = next(a.value for a, (n, _, _) in zip(site.original.args, bound) if n == "obj")
    saved, rule = _saved_object(site, original)
    if saved is None:
        site.finding(
            "CKP001",
            f"torch.save of {site.code(original).strip()}: only a module's or optimizer's "
            "state_dict() or a dict literal of tensors maps to a MindSpore checkpoint; save "
            "other objects with pickle",
            comment="object is not a state_dict; save it with pickle or save_checkpoint by hand",
        )
        return None
    new_path = _ckpt_path(site, path, _original_arg(site, bound, "f"), loading=False)
    if new_path is None:
        return None
    new = cst.Call(func=site.ref("mindspore.save_checkpoint"), args=[
        cst.Arg(saved, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(new_path),
    ])
    site.edit(rule, new, detail=f"torch.save -> mindspore.save_checkpoint({site.code(saved)}, "
              f"{site.code(new_path)})")
    return new


def _saved_object(site, original):
    """(what save_checkpoint gets, rule) for ``X.state_dict()`` of a module/optimizer or a
    dict literal of tensors; (None, None) otherwise."""
    if (isinstance(original, cst.Call) and isinstance(original.func, cst.Attribute)
            and original.func.attr.value == "state_dict" and not original.args):
        kind = site.kind_of(original.func.value)
        if kind is not None and kind.base in ("module", "optimizer"):
            site.forget(original)  # parameters_dict() (CEL006/CKP003) is replaced
            return site.updated_of(original.func.value), "CKP003" if kind == "optimizer" else "CKP001"
    if isinstance(original, cst.Dict) and original.elements and all(
            isinstance(e, cst.DictElement) and isinstance(site.literal(e.key, None), str)
            and site.kind_of(e.value) == "tensor" for e in original.elements):
        items = ", ".join(
            f'{{"name": {site.code(e.key).strip()}, "data": {site.code(site.updated_of(e.value)).strip()}}}'
            for e in original.elements)
        return site.parse(f"[{items}]"), "CKP001"
    return None, None


api("torch.save", "mindspore.save_checkpoint", rule="CKP001",
    sig=("obj", "f", "pickle_module", "pickle_protocol", "_use_new_zipfile_serialization"),
    handler=_save, returns=None)


# ----------------------------------------------------------------------------- torch.load


_LOAD_DROPPED = {"map_location", "weights_only", "mmap"}


def _load(site):
    bound = site.bound()
    if bound is None:
        site.finding("GEN003", "arguments passed with * or ** cannot be checked for torch.load",
                     comment="*args/**kwargs not checked")
        return None
    path = None
    for name, arg, _ in bound:
        if name == "f":
            path = arg
        elif name not in _LOAD_DROPPED:
            site.finding("CKP002", f"{name}= has no counterpart in load_checkpoint",
                         comment=f"{name}= not ported")
            return None
    if path is None:
        return None
    new_path = _ckpt_path(site, path, _original_arg(site, bound, "f"), loading=True)
    if new_path is None:
        return None
    new = cst.Call(func=site.ref("mindspore.load_checkpoint"), args=[cst.Arg(new_path)])
    dropped = [n for n, _, _ in bound if n in _LOAD_DROPPED]
    site.edit("CKP002", new, detail="torch.load -> mindspore.load_checkpoint"
              + (f"; dropped {', '.join(dropped)}=" if dropped else ""))
    return new


api("torch.load", "mindspore.load_checkpoint", rule="CKP002",
    sig=("f", "map_location", "pickle_module", "weights_only", "mmap"),
    handler=_load, returns=None)


# ----------------------------------------------------------------------------- optimizer


def _load_optimizer_state(site):
    bound = site.bound()
    if not bound or len(bound) != 1 or bound[0][0] != "state_dict":
        site.finding("CKP003", "optimizer.load_state_dict takes exactly the state dict",
                     comment="load_state_dict arguments not ported")
        return None
    new = cst.Call(func=site.ref("mindspore.load_param_into_net"), args=[
        cst.Arg(site.receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(bound[0][1].value),
    ])
    site.edit("CKP003", new, detail=".load_state_dict(sd) -> mindspore.load_param_into_net(optimizer, sd)")
    from msmagic.rules.optim import optimizer_construction, ported_to_experimental

    call, qual = optimizer_construction(site, site.receiver_original)
    if ported_to_experimental(site, call, qual):
        recv = site.code(site.receiver_original).strip()
        site.finding(
            "CKP003", f"{recv} is a mindspore.experimental.optim optimizer: its moments and step "
            "count load, but its learning rates (param_groups[i][\"lr\"]) are not in the checkpoint "
            "and keep the values it was built with; set them after loading with "
            f"mindspore.ops.assign({recv}.param_groups[i][\"lr\"], rate)",
            comment="learning rates are not restored; see rule CKP003")
    return new


method("state_dict", "CKP003", receiver="optimizer", target="parameters_dict", returns=None,
       detail="optimizer.state_dict() -> optimizer.parameters_dict()")
method("load_state_dict", "CKP003", receiver="optimizer", handler=_load_optimizer_state,
       sig=("state_dict",), returns=None)
