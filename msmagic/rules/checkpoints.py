"""Checkpoints: ``torch.save(model.state_dict(), p)`` / ``model.load_state_dict(torch.load(p))``
and the optimizer's state -> ``mindspore.save_checkpoint`` / ``load_checkpoint`` +
``load_param_into_net``.

``model.load_state_dict(...)`` itself is ported by rule CEL006 (cells.py); this module
ports the file side (``torch.save``/``torch.load``) and the optimizer's state."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic.engine.build import code as _code
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
        passed as ``str(path)``; an open file or a buffer (``open(...)``, ``io.BytesIO()``)
        is written with pickle (rule CKP004).
        Keys differ from PyTorch's for BatchNorm
        (``gamma``/``beta``/``moving_mean``/``moving_variance`` instead of
        ``weight``/``bias``/``running_mean``/``running_var``, and no ``num_batches_tracked``),
        so a file written by PyTorch cannot be read this way: convert it once with
        ``torch.load``, rename those keys and save the result with ``save_checkpoint``.
        A name bound to ``model.state_dict()`` saves the module it came from (PyTorch's
        state dict holds the module's own tensors, so both save the values of the moment
        of saving). Other objects (a dict holding a state dict and settings, a list) are
        saved with pickle (rule CKP004).
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
    "CKP004",
    "torch.save/torch.load of other objects (a dict checkpoint) use pickle",
    group=GROUP,
    why="""
        ``torch.save`` pickles any object: notebooks save a dict with the model's state
        dict next to its settings (``{"n_hidden": 256, "tokens": chars, "state_dict":
        net.state_dict()}``) or pass an open file, and ``torch.load`` gives the object
        back. MindSpore's ``save_checkpoint`` writes only a Cell or a list of named tensors
        (plus scalars and strings in ``append_dict``), and ``load_checkpoint`` returns one
        flat dict of Parameters, so the dict's shape, its lists and tuples would be lost.
        MindSpore tensors and Parameters pickle with their values (verified on 2.10), so
        such a save becomes ``pickle``: ``pathlib.Path(p).write_bytes(pickle.dumps(obj))``
        (``pickle.dump(obj, f)`` for an open file), with ``net.state_dict()`` inside it
        ported to ``net.parameters_dict()`` (rule CEL006) and the file keeping its name.
        ``torch.load`` of an open file becomes ``pickle.load(f)``; of a name, once the
        session has saved something with pickle, it reads the pickle file when there is
        one under that name and the MindSpore checkpoint (``name.ckpt``, rule CKP002)
        otherwise, so a notebook that saves both kinds under one name loads what it saved.
        ``load_param_into_net`` then takes the Parameters dict as it came back.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.save -> mindspore.save_checkpoint)",
    installed_note="""
        Verified on 2.10: ``pickle.dumps`` of a ``mindspore.Tensor``, a ``Parameter`` and
        of ``Cell.parameters_dict()`` round-trips their values, and the unpickled dict
        loads with ``load_param_into_net``.
    """,
    example="""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        path = os.path.join(tempfile.mkdtemp(), "checkpoint.pth")
        model = nn.Linear(3, 2)
        torch.save({"input_size": 3, "sizes": [3, 2], "state_dict": model.state_dict()}, path)
        checkpoint = torch.load(path)
        restored = nn.Linear(checkpoint["input_size"], checkpoint["sizes"][1])
        restored.load_state_dict(checkpoint["state_dict"])
        y = restored(torch.ones(1, 3))
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


register(
    "CKP005",
    "os.path.isfile/exists of a checkpoint's name also finds its .ckpt file",
    group=GROUP,
    why="""
        Notebooks train only when no checkpoint is there: ``if os.path.isfile(path):
        model.load_state_dict(torch.load(path)) else: train(); torch.save(...,
        path)``, or assert the file exists before loading it. The port's
        ``save_checkpoint`` writes ``path + '.ckpt'`` (CKP001), so on MindSpore the test
        of ``path`` itself would never see what the port saved: the notebook would train
        again each time and the assert would fail. A test of a name that
        ``torch.save``/``torch.load`` use (the same variable in the same function or
        cell, or the result of a function whose result they get, such as
        ``_get_model_file(path, name)``, in this cell or an earlier one) therefore
        becomes ``checkpoint_exists(path, os.path.isfile)``: true when the file itself is
        there (the port saved it with pickle, CKP004, or it is some other file) or the
        MindSpore checkpoint under it with ``.ckpt`` appended. A PyTorch file that is
        there without a MindSpore checkpoint still counts, so the load that follows
        raises instead of the notebook quietly training again.
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
        model = nn.Linear(3, 2)
        before = os.path.isfile(path)
        torch.save(model.state_dict(), path)
        after = os.path.isfile(path)
        if os.path.exists(path):
            model.load_state_dict(torch.load(path))
        y = model(torch.ones(1, 3))
    """,
)

register(
    "CKP006",
    "A whole module saved and loaded back into its name: its parameters",
    group=GROUP,
    why="""
        PyTorch's example scripts save the model object itself, ``with open(args.save,
        'wb') as f: torch.save(model, f)``, and later restore the best one with ``model =
        torch.load(f, weights_only=False)``: pickle writes the module and reads a new one
        back. MindSpore cannot pickle a Cell (its operators are native objects; checked on
        2.10: "cannot pickle 'Reshape' object") and its checkpoints hold parameters only.
        Where the file is read back into the very name the module was saved from, and that
        name still holds a module, PyTorch's result is that module with the saved
        values: so the save writes the Cell's parameters (``save_checkpoint``, into the
        open file's name plus ``.ckpt``) and the load puts them into the Cell the name holds
        (``load_into(model, path)``: ``load_checkpoint(path, net=model)``, then the Cell).
        One difference remains: PyTorch's load makes a new object, so another name still
        holding the old module keeps the old values, while MindSpore's Cell is updated in
        place. A whole module loaded into another name (morvan's ``net2 =
        torch.load('net.pkl')`` in another function) gets a Cell built again by the saved
        module's own constructor, when that constructor reads nothing but PyTorch and
        literals (``net1 = torch.nn.Sequential(torch.nn.Linear(1, 10), ...)``) and the file
        name is the same literal; otherwise there is no Cell to load into and the load is
        flagged (CKP001).
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.save -> mindspore.save_checkpoint)",
    installed_note=_NOTE,
    example="""
        import os
        import tempfile
        import torch
        import torch.nn as nn

        path = os.path.join(tempfile.mkdtemp(), "model.pt")
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        with open(path, "wb") as f:
            torch.save(model, f)
        saved = model(torch.ones(1, 3))
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))  # other weights
        with open(path, "rb") as f:
            model = torch.load(f, weights_only=False)
        restored = model(torch.ones(1, 3))
    """,
)


# ----------------------------------------------------------------------------- paths


def _ckpt_path(site, arg: cst.Arg, original, *, loading: bool):
    """The file name MindSpore uses: a literal gets ``.ckpt``; a variable is kept on save
    (save_checkpoint appends it) and suffixed conditionally on load. MindSpore takes only
    str names: a ``pathlib.Path`` (``Path(...)``, ``d / "m.pt"``, a name bound to one in
    this cell or at the top of an earlier one) is passed as ``str(p)``. (An open file is
    pickled instead: rule CKP004.)"""
    value = arg.value
    text = site.literal(value, None)
    if isinstance(text, str):
        return value if text.endswith(EXT) else site.parse(repr(text + EXT))
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
    _checkpoint_names(site)  # the functions building checkpoint names, for later cells
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
    original_path = _original_arg(site, bound, "f")
    saved, rule = _saved_object(site, original)
    if saved is None or _is_file_object(site, original_path):
        kind = site.kind_of(original)
        if kind is not None and kind.base == "module" and isinstance(original, cst.Name):
            return _save_whole_module(site, obj.value, original, path, original_path)
        if kind is not None and kind.base in ("module", "optimizer", "class"):
            site.finding(
                "CKP001",
                f"torch.save of the {kind.base} {site.code(original).strip()} itself: MindSpore saves "
                "a Cell's parameters (save_checkpoint), not the object; save its state_dict() and "
                "build the model again before loading",
                comment="the object itself is saved; save its state_dict() instead",
            )
            return None
        return _pickle_save(site, obj.value, path.value, original_path)
    new_path = _ckpt_path(site, path, original_path, loading=False)
    new = cst.Call(func=site.ref("mindspore.save_checkpoint"), args=[
        cst.Arg(saved, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(new_path),
    ])
    site.edit(rule, new, detail=f"torch.save -> mindspore.save_checkpoint({site.code(saved)}, "
              f"{site.code(new_path)})")
    return new


#: the session memory of whole modules saved (``torch.save(model, f)``): the name saved ->
#: (the file name when it is a literal, else None; the ported constructor of the module when
#: it reads nothing but PyTorch and literals, else None); loading the file back into that name is ported (:func:`_load_whole_module`)
_WHOLE = "CKP006 whole modules"
_LOAD_INTO = '''def {name}(net, path):
    """What torch.load of a whole module gives: the module saved, here a Cell of its
    architecture with the saved parameters loaded (MindSpore cannot pickle a Cell)."""
    mindspore.load_checkpoint(path, net=net)
    return net
'''


def _rebuildable(site, ctor: cst.Call) -> bool:
    """Does the module's constructor read nothing but PyTorch and literals
    (``torch.nn.Sequential(torch.nn.Linear(1, 10), ...)``), so that it builds the same
    architecture wherever it is evaluated?"""
    import ast

    try:
        tree = ast.parse(site.code(ctor).strip(), mode="eval")
    except SyntaxError:  # pragma: no cover - the code came from a parsed cell
        return False
    if any(isinstance(n, (ast.Starred, ast.Lambda, ast.NamedExpr)) for n in ast.walk(tree)):
        return False
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return all((site.resolve(cst.Name(n)) or "").split(".")[0] == "torch" for n in names)


def _file_literal(site, original_path) -> Optional[str]:
    """The file name a save or load uses when it is a literal (of ``open(...)`` for an
    open file), else None."""
    node = original_path
    if _is_file_object(site, node):
        for _ in range(3):  # as deep as _is_file_object looks (``f = f`` ends it)
            if not isinstance(node, cst.Name):
                break
            node = _binding(site, node.value)
        node = node.args[0].value if isinstance(node, cst.Call) and node.args else None
    text = site.literal(node, None) if node is not None else None
    return text if isinstance(text, str) else None


def _file_path(site, path, original_path, *, loading: bool):
    """The file name of ``torch.save``'s / ``torch.load``'s ``f``: an open file's own name
    (``f.name``), else what :func:`_ckpt_path` makes of it."""
    if _is_file_object(site, original_path):
        p = f"{site.code(path.value).strip()}.name"
        return site.parse(f"{p}.removesuffix({EXT!r}) + {EXT!r}" if loading else p)
    return _ckpt_path(site, path, original_path, loading=loading)


def _save_whole_module(site, obj, original, path, original_path):
    """``torch.save(model, f)`` of a module bound to a name: its parameters are saved
    (MindSpore cannot pickle a Cell); loading the file back into the same name is ported."""
    new = cst.Call(func=site.ref("mindspore.save_checkpoint"), args=[
        cst.Arg(obj, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(_file_path(site, path, original_path, loading=False)),
    ])
    ctor = _binding(site, original.value)
    built = (site.code(site.updated_of(ctor)).strip()
             if isinstance(ctor, cst.Call) and _rebuildable(site, ctor) else None)
    site.session_memory(_WHOLE)[original.value] = (_file_literal(site, original_path), built)
    site.edit("CKP006", new, detail=f"torch.save({original.value}) of the whole module -> its parameters "
              "(save_checkpoint); torch.load back into that name loads them into its Cell")
    return new


#: the fact CKP004 keeps in the session once something was saved with pickle (no name a
#: cell can bind, so no later cell's assignment drops it)
_PICKLED = "<saved with pickle>"


def _pickle_save(site, obj, path, original_path):
    """``torch.save(obj, f)`` of any other object: pickled (rule CKP004)."""
    pickle = site.require_import("pickle")
    if _is_file_object(site, original_path):
        new = site.parse(f"{pickle}.dump({site.code(obj).strip()}, {site.code(path).strip()})")
    else:
        pathlib = site.require_import("pathlib")
        new = site.parse(f"{pathlib}.Path({site.code(path).strip()}).write_bytes("
                         f"{pickle}.dumps({site.code(obj).strip()}))")
    site.session_memory("CKP004")[_PICKLED] = True
    site.edit("CKP004", new, detail="torch.save -> pickle (the object is no state dict)")
    return new


def _state_dict_call(site, original, depth: int = 0):
    """``X.state_dict()`` itself, or the one a name was bound to (``sd = model.state_dict()``)."""
    if isinstance(original, cst.Name) and depth < 2:
        bound = _binding(site, original.value)
        return _state_dict_call(site, bound, depth + 1) if bound is not None else None
    if (isinstance(original, cst.Call) and isinstance(original.func, cst.Attribute)
            and original.func.attr.value == "state_dict" and not original.args):
        return original
    return None


def _saved_object(site, original):
    """(what save_checkpoint gets, rule) for ``X.state_dict()`` of a module/optimizer (or
    a name bound to one) or a dict literal of tensors; (None, None) otherwise."""
    call = _state_dict_call(site, original)
    if call is not None and call is not original:
        kind = site.kind_of(call.func.value)
        if kind is not None and kind.base == "module":
            return site.parse(site.code(call.func.value).strip()), "CKP001"
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
    _checkpoint_names(site)
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
    whole = next((a for n, a, _ in bound if n == "weights_only"), None)
    back = _loaded_back(site)
    if back is not None:
        return _load_whole_module(site, back, path, _original_arg(site, bound, "f"))
    here = _file_literal(site, _original_arg(site, bound, "f"))
    saved_whole = sorted(n for n, (there, _) in site.session_memory(_WHOLE).items()
                         if here is None or there is None or here == there)
    rebuilt = [built for n, (there, built) in site.session_memory(_WHOLE).items()
               if here is not None and here == there and built is not None]
    if len(rebuilt) == 1 and _assigned_name(site) and not any(
            _callee(c) == "load_state_dict" for c in site.enclosing_calls):
        return _load_whole_module(site, rebuilt[0], path, _original_arg(site, bound, "f"), rebuilt=True)
    if saved_whole and not any(_callee(c) == "load_state_dict" for c in site.enclosing_calls):
        site.finding("CKP001", f"a whole module ({', '.join(saved_whole)}) was saved with torch.save in this "
                     "session and its port wrote only its parameters (CKP006): if this file holds it, PyTorch "
                     "reads a new module object, MindSpore a dict of parameters; build the model and "
                     "load_checkpoint(path, net=model), or load it back into the name it was saved from",
                     comment="a whole module may be loaded here; MindSpore reads its parameters only")
    elif whole is not None and site.code(whole.value).strip() == "False":
        site.finding("CKP001", "weights_only=False: the file may hold a pickled object (a whole module saved "
                     "with torch.save(model)); MindSpore cannot pickle a Cell and its checkpoints hold "
                     "parameters only: save the state_dict(), build the model, then load_state_dict",
                     comment="weights_only=False: a whole module cannot be loaded in MindSpore")
    original_path = _original_arg(site, bound, "f")
    if _is_file_object(site, original_path):
        new = site.parse(f"{site.require_import('pickle')}.load({site.code(path.value).strip()})")
        site.edit("CKP004", new, detail="torch.load(file) -> pickle.load(file)")
        return new
    new_path = _ckpt_path(site, path, original_path, loading=True)
    new = cst.Call(func=site.ref("mindspore.load_checkpoint"), args=[cst.Arg(new_path)])
    if site.session_memory("CKP004").get(_PICKLED):
        p = site.code(path.value).strip()
        if not is_pure(path.value):
            site.finding("CKP004", "the file name is an expression with effects: evaluated twice here "
                         "(once to look for a pickle file, once to read)", comment="file name evaluated twice")
        pickle, pathlib, os = (site.require_import(m) for m in ("pickle", "pathlib", "os"))
        if _is_path(site, original_path):
            p = f"str({p})"
        new = site.parse(f"({pickle}.loads({pathlib}.Path({p}).read_bytes()) if {os}.path.isfile({p}) "
                         f"else {site.code(new)})")
        site.edit("CKP004", new, detail="torch.load -> the pickle file under that name, else its checkpoint")
        return new
    dropped = [n for n, _, _ in bound if n in _LOAD_DROPPED]
    site.edit("CKP002", new, detail="torch.load -> mindspore.load_checkpoint"
              + (f"; dropped {', '.join(dropped)}=" if dropped else ""))
    return new


def _assigned_name(site) -> Optional[str]:
    """The name the statement ``name = torch.load(...)`` binds the loaded object to."""
    st = site.statement
    if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign)
            and st.body[0].value is site.original and len(st.body[0].targets) == 1
            and isinstance(st.body[0].targets[0].target, cst.Name)):
        return None
    return st.body[0].targets[0].target.value


def _loaded_back(site):
    """``model = torch.load(f)`` where ``model`` is the name of a module saved whole in
    this session (``torch.save(model, f)``) and holds a module now: that name, else None."""
    name = _assigned_name(site)
    if name is None:
        return None
    if name not in site.session_memory(_WHOLE):
        return None
    kind = site.kind_of(cst.Name(name))
    return name if kind is not None and kind.base == "module" else None


def _load_whole_module(site, into: str, path, original_path, rebuilt: bool = False):
    """``load_into(<the Cell>, path)``: ``into`` is the name loaded back into, or (``rebuilt``)
    the ported constructor of the module saved."""
    helper = site.define("load_into", lambda n: _LOAD_INTO.format(name=n))
    file = site.code(_file_path(site, path, original_path, loading=True)).strip()
    new = site.parse(f"{helper}({into}, {file})")
    what = (f"its constructor built again ({into}) and its parameters loaded into it" if rebuilt
            else f"its parameters loaded into the Cell {into} holds")
    site.edit("CKP006", new, detail=f"torch.load of a whole module -> {what}")
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


# ----------------------------------------------------------------------------- existence tests

_FILE_ARG = {"torch.save": ("f", 1), "torch.load": ("f", 0)}


def _file_arg(call, qual):
    keyword, position = _FILE_ARG[qual]
    for i, a in enumerate(call.args):
        if a.star:
            return None
        if (a.keyword is not None and a.keyword.value == keyword) or (a.keyword is None and i == position):
            return a.value
    return None


def _bound_in(body, name: str) -> list:
    """The values ``name = value`` / ``a, name = x, value`` bind in these statements."""
    out = []
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.Assign):
                continue
            for t in small.targets:
                target, value = t.target, small.value
                if isinstance(target, cst.Name) and target.value == name:
                    out.append(value)
                elif (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
                      and len(target.elements) == len(value.elements)):
                    out += [v.value for e, v in zip(target.elements, value.elements)
                            if isinstance(e.value, cst.Name) and e.value.value == name]
    return out


class _FileNames(cst.CSTVisitor):
    """The file names torch.save / torch.load get, with the function (or None: the
    cell) whose body holds the call."""

    def __init__(self, site):
        super().__init__()
        self.site, self.scopes, self.found = site, [None], []

    def visit_FunctionDef(self, node):
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node):
        self.scopes.pop()

    def visit_Call(self, node):
        qual = self.site.resolve(node.func)
        if qual in _FILE_ARG:
            path = _file_arg(node, qual)
            if path is not None:
                self.found.append((self.scopes[-1], path))


def _checkpoint_names(site) -> dict:
    """Once per cell: id of a function (0: the cell) -> the texts of the plain file names
    (names, attributes) torch.save / torch.load get in its body. The functions whose
    result is such a file name (``model_file = _get_model_file(...)``) go to the
    session, for the cells after this one."""
    memo = site.scratch("CKP005")
    if "names" in memo:
        return memo["names"]
    functions = site.session_memory("CKP005").setdefault("functions", set())
    visitor = _FileNames(site)
    cell = site.blocks[0][0] if site.blocks else ()
    for stmt in cell:
        stmt.visit(visitor)
    names: dict = {}
    for scope, path in visitor.found:
        values = [path]
        if is_pure(path):
            names.setdefault(id(scope) if scope is not None else 0, set()).add(_code(path).strip())
            if isinstance(path, cst.Name):
                body = scope.body.body if scope is not None and isinstance(scope.body, cst.IndentedBlock) else cell
                values += _bound_in(body, path.value)
        for v in values:
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Name):
                functions.add(v.func.value)
    memo["names"] = names
    return names


def _is_checkpoint_name(site, node) -> bool:
    names = _checkpoint_names(site)
    functions = site.session_memory("CKP005").get("functions", set())
    scope = site.functions[-1] if site.functions else None
    if is_pure(node) and _code(node).strip() in names.get(id(scope) if scope is not None else 0, ()):
        return True
    values = [node]
    if isinstance(node, cst.Name):
        value = site.assigned_value(node.value)
        if value is not None:
            values.append(value)
    return any(isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in functions
               for v in values)


def _is_os_path(site) -> bool:
    return site.code(site.receiver_original).strip() == "os.path"


_EXISTS_SOURCE = '''def {name}(path, check):
    """A checkpoint's file name as PyTorch wrote it: the file itself (one the port saved
    with pickle, or any other), or the MindSpore checkpoint saved under it with .ckpt
    appended (mindspore.save_checkpoint appends it)."""
    path = str(path)
    return check(path) or check(path if path.endswith(".ckpt") else path + ".ckpt")
'''


def _exists(site):
    args = site.original.args
    if not _is_os_path(site) or len(args) != 1 or args[0].keyword is not None or args[0].star:
        return None
    if not _is_checkpoint_name(site, args[0].value):
        return None
    name = site.define("checkpoint_exists", lambda n: _EXISTS_SOURCE.format(name=n))
    check = site.code(site.updated.func).strip()
    new = site.parse(f"{name}({site.code(site.updated.args[0].value).strip()}, {check})")
    site.edit("CKP005", new, detail=f"{check}(path) -> {name}(path, {check}): path or path + '.ckpt'")
    return new


for _name in ("isfile", "exists"):
    method(_name, "CKP005", receiver="any", unambiguous=_is_os_path, handler=_exists, returns=None)
