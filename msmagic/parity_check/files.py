"""Stage: sync. Files: each side runs the cell once, so each side writes what it writes.

The PyTorch side writes where the cell says: the notebook's files are the plain cell's.
While the MindSpore side runs, what it writes goes to a shadow folder instead (one per
shadow namespace, so it persists across ``%%ms_parity`` cells like the names do), at the
absolute path the file has (``/work/model.pt.ckpt`` is kept as
``<shadow folder>/work/model.pt.ckpt``). So the MindSpore side never overwrites a file
the PyTorch side wrote (a later ``torch.load(..., weights_only=True)`` would fail on it),
and a file the MindSpore side wrote in an earlier cell (``save_checkpoint(model,
'nbow.pt.ckpt')``) is what a later cell's MindSpore side reads. Other reads come from the
real place (data sets, files written by plain cells or by the PyTorch side), except a
file ``torch.save`` created on the PyTorch side: it is in PyTorch's own format, which the
port never reads (it saves and loads its own checkpoint), so the MindSpore side does not
see it, as in a plain MindSpore run (``if os.path.isfile(ckpt): load else: train`` takes
the same branch on both sides).

While the MindSpore side runs, Python's file functions take that view:
``open``/``io.open`` (and MindSpore's checkpoint file system, which holds ``open``),
``torch.save`` (a PyTorch call the port kept writes from native code), ``os.open``, ``os.stat``/``os.lstat`` (hence ``os.path.exists``, ``isfile``, ``getsize``,
``pathlib``), ``os.listdir`` (both folders' entries), ``os.remove``/``os.unlink`` (a
file the MindSpore side did not write is hidden from it, not removed),
``os.rename``/``os.replace`` and ``os.chmod``. A folder is created for real (creating
one that exists succeeds once: the PyTorch side created it when it ran the statement),
so code that checks for it or writes into it finds it. Appending to a file the PyTorch
side wrote starts from what the file held before the PyTorch side first wrote it.
Files written by native code (MindSpore's C++ writers) are not redirected.

After the cell, a file both sides wrote (the same path, or the port's checkpoint name:
``model.pt`` and ``model.pt.ckpt``) is compared: the tensors of checkpoints (through the
parameter-name maps when a module of the cell has those keys), NumPy arrays, or text
(numbers in it within the tolerance).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import pickle
import re
import shutil
import tempfile
import weakref
from typing import Optional

from msmagic.parity_check.compare import DIFFERS, MATCH, NOT_COMPARABLE, Row, compare_values

__all__ = ["ShadowFiles", "compare_files", "files_note"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

#: never redirected: the operating system's pseudo files
_SYSTEM = ("/dev/", "/proc/", "/sys/")

#: text files larger than this are not compared (bytes)
MAX_TEXT = 1 << 22


def _abspath(path) -> Optional[str]:
    """The absolute path of a path argument (None for a file descriptor)."""
    if isinstance(path, int) or not isinstance(path, (str, bytes, os.PathLike)):
        return None
    return os.path.abspath(os.fsdecode(path))


def _writes(mode) -> bool:
    return any(c in str(mode) for c in "wax+")


class ShadowFiles:
    """The MindSpore side's files: real path -> its copy in the shadow folder.

    ``files``: the real paths the MindSpore side wrote (kept in the shadow folder);
    ``hidden``: real paths it removed (the real file is left alone); ``torch_sizes``:
    the size each file the PyTorch side wrote had before it first did (-1: there was
    none), so an append on the MindSpore side starts from the same content.
    """

    def __init__(self) -> None:
        self.root: Optional[str] = None
        self.files: set[str] = set()
        self.hidden: set[str] = set()
        self.torch_sizes: dict[str, int] = {}
        #: the statement (of its cell) that last wrote each file on the PyTorch side
        self.torch_statement: dict[str, int] = {}
        self._made: set[str] = set()  # folders the MindSpore side created in this run

    # ------------------------------------------------------------------ paths

    def _folder(self) -> str:
        if self.root is None:
            self.root = tempfile.mkdtemp(prefix="msmagic-shadow-files-")
            weakref.finalize(self, shutil.rmtree, self.root, True)
        return self.root

    def shadow_path(self, real: str) -> str:
        return os.path.join(self._folder(), real.lstrip(os.sep))

    def _redirected(self, real: Optional[str]) -> bool:
        if real is None or real.startswith(_SYSTEM):
            return False
        return not (self.root is not None and (real == self.root or real.startswith(self.root + os.sep)))

    def read_path(self, path, real: Optional[str] = None):
        """Where the MindSpore side reads ``path``: its own copy, or the real file."""
        real = real or _abspath(path)
        if not self._redirected(real):
            return path
        if real in self.files or real in self.hidden:
            return self.shadow_path(real)  # a hidden file has no copy: not found
        return path

    def write_path(self, path, keep: bool, real_ops) -> str:
        """Where the MindSpore side writes ``path`` (its copy's parent exists). ``keep``:
        the mode keeps the content (append, ``r+``): a file it has no copy of yet starts
        from the real file's content before the PyTorch side wrote it."""
        real = _abspath(path)
        target = self.shadow_path(real)
        real_ops["makedirs"](os.path.dirname(target), exist_ok=True)
        if keep and real not in self.files and real not in self.hidden:
            self._copy_before_torch(real, target, real_ops)
        self.files.add(real)
        self.hidden.discard(real)
        return target

    def _copy_before_torch(self, real: str, target: str, real_ops) -> None:
        size = self.torch_sizes.get(real)
        if size == -1:
            return
        try:
            with real_ops["open"](real, "rb") as src, real_ops["open"](target, "wb") as dst:
                dst.write(src.read() if size is None else src.read(size))
        except OSError:
            pass

    # ------------------------------------------------------------------ the sides

    @contextlib.contextmanager
    def torch_side(self, written: dict, statement: int = -1, ns: Optional[dict] = None):
        """While the PyTorch side runs: record the files it writes (``open`` in a write
        mode, ``torch.save`` to a path) as absolute path -> modes, and the size each had
        before its first write in this session. ``ns``: the side's namespace, whose own
        ``open`` (IPython puts one in the notebook's) is watched too."""
        real_open = builtins.open
        own_open = ns.get("open") if ns is not None else None
        if own_open is real_open or not callable(own_open):
            own_open = None
        torch = __import__("sys").modules.get("torch")
        real_save = getattr(torch, "save", None)
        sizes = self.torch_sizes
        files = self

        def record(file, mode) -> None:
            real = _abspath(file)
            if real is None:
                return
            if real not in sizes:
                try:
                    sizes[real] = os.stat(real).st_size
                except OSError:
                    sizes[real] = -1
            written.setdefault(real, set()).add(str(mode))
            self.torch_statement[real] = statement

        def watching(file, mode="r", *args, **kwargs):
            if _writes(mode):
                record(file, mode)
            return real_open(file, mode, *args, **kwargs)

        def watching_own(file, mode="r", *args, **kwargs):
            if _writes(mode):
                record(file, mode)
            return own_open(file, mode, *args, **kwargs)

        def saving(obj, f, *args, **kwargs):
            record(f, "wb")
            out = real_save(obj, f, *args, **kwargs)
            real = _abspath(f)
            if real is not None and sizes.get(real) == -1 and real not in files.files:
                # a file in PyTorch's own format the PyTorch side created: the port saves
                # (and reads) its own checkpoint, so on the MindSpore side it is not there,
                # as in a plain MindSpore run (`if os.path.isfile(ckpt): load... else: train`
                # takes the same branch on both sides)
                files.hidden.add(real)
            return out

        builtins.open = io.open = _watcher(watching, real_open)
        if own_open is not None:
            ns["open"] = _watcher(watching_own, own_open)
        if real_save is not None:
            torch.save = saving
        try:
            yield
        finally:
            builtins.open = io.open = real_open
            if own_open is not None and ns.get("open") is watching_own:
                ns["open"] = own_open
            if real_save is not None:
                torch.save = real_save

    @contextlib.contextmanager
    def recorded(self, written: dict):
        """While a side runs where its code says: record the files it opens for writing."""
        real_open = builtins.open

        def watching(file, mode="r", *args, **kwargs):
            path = _abspath(file)
            if path is not None and _writes(mode):
                written.setdefault(path, set()).add(str(mode))
            return real_open(file, mode, *args, **kwargs)

        builtins.open = io.open = _watcher(watching, real_open)
        try:
            yield
        finally:
            builtins.open = io.open = real_open

    @contextlib.contextmanager
    def ms_side(self, written: dict):
        """While the MindSpore side runs: its writes go to the shadow folder, its reads of
        files it wrote come from there; ``written`` records the real paths it wrote."""
        real = {
            "open": builtins.open, "os.open": os.open, "stat": os.stat, "lstat": os.lstat,
            "listdir": os.listdir, "remove": os.remove, "unlink": os.unlink, "rename": os.rename,
            "replace": os.replace, "chmod": os.chmod, "mkdir": os.mkdir, "makedirs": os.makedirs,
        }
        files = self
        self._made = set()

        def opening(file, mode="r", *args, **kwargs):
            if isinstance(file, int) or not isinstance(file, (str, bytes, os.PathLike)):
                return real["open"](file, mode, *args, **kwargs)
            path = _abspath(file)
            if not files._redirected(path):
                return real["open"](file, mode, *args, **kwargs)
            if _writes(mode):
                written.setdefault(path, set()).add(str(mode))
                keep = "a" in str(mode) or ("+" in str(mode) and "w" not in str(mode))
                return real["open"](files.write_path(file, keep, real), mode, *args, **kwargs)
            return real["open"](files.read_path(file, path), mode, *args, **kwargs)

        def os_opening(path, flags, mode=0o777, *, dir_fd=None):
            real_path = _abspath(path)
            if dir_fd is not None or not files._redirected(real_path):
                return real["os.open"](path, flags, mode, dir_fd=dir_fd)
            if flags & _WRITE_FLAGS:
                written.setdefault(real_path, set()).add("os.open")
                keep = not flags & os.O_TRUNC
                return real["os.open"](files.write_path(path, keep, real), flags, mode)
            return real["os.open"](files.read_path(path, real_path), flags, mode)

        def stating(which):
            def stat(path, *args, **kwargs):
                if kwargs.get("dir_fd") is not None:
                    return real[which](path, *args, **kwargs)
                return real[which](files.read_path(path), *args, **kwargs)
            return stat

        def listing(path="."):
            names = real["listdir"](path)
            folder = _abspath(path)
            if folder is None or not files._redirected(folder) or files.root is None:
                return names
            hidden = {os.path.basename(p) for p in files.hidden if os.path.dirname(p) == folder}
            names = [n for n in names if n not in hidden]
            mine = files.shadow_path(folder)
            if os.path.isdir(mine):
                names += [n for n in real["listdir"](mine) if n not in names]
            return names

        def removing(which):
            def remove(path, *, dir_fd=None):
                target = _abspath(path)
                if dir_fd is not None or not files._redirected(target):
                    return real[which](path, dir_fd=dir_fd)
                if target in files.files:
                    files.files.discard(target)
                    written.pop(target, None)
                    return real[which](files.shadow_path(target))
                real["stat"](files.read_path(path, target))  # FileNotFoundError, as it would
                files.hidden.add(target)  # the PyTorch side's file stays
            return remove

        def renaming(which):
            def rename(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
                a, b = _abspath(src), _abspath(dst)
                if (src_dir_fd is not None or dst_dir_fd is not None
                        or not (files._redirected(a) and files._redirected(b))):
                    return real[which](src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
                if a in files.files:
                    target = files.write_path(dst, False, real)
                    files.files.discard(a)
                    real[which](files.shadow_path(a), target)
                    written.setdefault(b, set()).update(written.pop(a, {"w"}))
                    return None
                source = files.read_path(src, a)
                real["stat"](source)  # FileNotFoundError, as it would
                shutil.copyfile(source, files.write_path(dst, False, real))
                files.hidden.add(a)
                written.setdefault(b, set()).add("w")
                return None
            return rename

        def chmoding(path, mode, *args, **kwargs):
            target = _abspath(path)
            if kwargs.get("dir_fd") is not None or not files._redirected(target):
                return real["chmod"](path, mode, *args, **kwargs)
            if target in files.files:
                return real["chmod"](files.shadow_path(target), mode, *args, **kwargs)
            real["stat"](files.read_path(path, target))
            return None  # the permissions of the PyTorch side's file are left alone

        def saving(obj, f, *args, **kwargs):
            # a PyTorch call the port kept: torch.save writes a path from native code
            path = _abspath(f)
            if files._redirected(path):
                written.setdefault(path, set()).add("wb")
                f = files.write_path(f, False, real)
            return real_save(obj, f, *args, **kwargs)

        def making(path, mode=0o777, *, dir_fd=None):
            target = _abspath(path)
            if dir_fd is None and files._redirected(target) and target not in files._made:
                files._made.add(target)
                if os.path.isdir(target):
                    return None  # the PyTorch side created it running this statement
            return real["mkdir"](path, mode, dir_fd=dir_fd)

        _watcher(opening, real["open"])
        patched = {
            (builtins, "open"): opening, (io, "open"): opening, (os, "open"): os_opening,
            (os, "stat"): stating("stat"), (os, "lstat"): stating("lstat"), (os, "listdir"): listing,
            (os, "remove"): removing("remove"), (os, "unlink"): removing("unlink"),
            (os, "rename"): renaming("rename"), (os, "replace"): renaming("replace"),
            (os, "chmod"): chmoding, (os, "mkdir"): making,
        }
        # MindSpore's checkpoint file system holds ``open`` itself (the one in place when
        # it was imported: maybe a watcher of an earlier run, which is put right here)
        fs = _checkpoint_file_system()
        saved_fs = None
        if fs is not None and getattr(fs, "backend", "basic") == "basic":
            saved_fs = (_unwrapped(fs.create), _unwrapped(fs.open))
            fs.create = fs.open = opening
        torch = __import__("sys").modules.get("torch")
        real_save = getattr(torch, "save", None)
        if real_save is not None:
            patched[(torch, "save")] = saving
        previous = {key: getattr(*key) for key in patched}
        for (owner, name), fn in patched.items():
            setattr(owner, name, fn)
        try:
            yield
        finally:
            for (owner, name), fn in previous.items():
                setattr(owner, name, fn)
            if saved_fs is not None:
                fs.create, fs.open = saved_fs


def _watcher(fn, real):
    """Mark ``fn`` as msmagic's stand-in for ``real`` (see :func:`_unwrapped`)."""
    fn.__msmagic_wraps__ = real
    return fn


def _unwrapped(fn):
    """The function one of msmagic's stand-ins for ``open`` replaces (a module imported
    while one was in place may hold it)."""
    return getattr(fn, "__msmagic_wraps__", fn)


def _checkpoint_file_system():
    serialization = __import__("sys").modules.get("mindspore.train.serialization")
    return getattr(serialization, "_ckpt_fs", None)


# ----------------------------------------------------------------------------- comparing


def _pairs(written: dict) -> list[tuple[str, str]]:
    """(PyTorch path, MindSpore path) of the files both sides wrote: the same path, or
    the port's checkpoint name (``model.pt`` -> ``model.pt.ckpt``, ``model.ckpt``)."""
    ms = written["mindspore"]
    out = []
    for path in sorted(written["torch"]):
        stem = os.path.splitext(path)[0]
        for candidate in (path, path + ".ckpt", stem + ".ckpt"):
            if candidate in ms:
                out.append((path, candidate))
                break
    return out


def compare_files(written: dict, files: ShadowFiles, rtol: float, atol: float, modules,
                  ms_name) -> tuple[list[Row], list[str]]:
    """Rows for the files both sides wrote in this run, and the names of those that
    could not be compared. ``modules``: PyTorch modules of the cell, to map checkpoint
    keys to MindSpore's parameter names through ``ms_name(module, key)``."""
    rows, skipped = [], []
    for torch_path, ms_path in _pairs(written):
        shown = os.path.relpath(torch_path)
        name = f"file {torch_path if shown.startswith(os.pardir) else shown}"
        shadow = files.shadow_path(ms_path)
        if not os.path.isfile(torch_path) or not os.path.isfile(shadow):
            continue
        statement = files.torch_statement.get(torch_path, -1)
        row = _compare_file(name, torch_path, shadow, rtol, atol, modules, ms_name, statement)
        if row is None:
            skipped.append(os.path.basename(torch_path))
        else:
            rows.append(row)
    return rows, skipped


def _compare_file(name, torch_path, ms_path, rtol, atol, modules, ms_name, statement) -> Optional[Row]:
    tensors = _torch_checkpoint(torch_path)
    if tensors is not None:
        ms_tensors = _ms_checkpoint(ms_path)
        if ms_tensors is None:
            return Row(name, NOT_COMPARABLE, statement=statement,
                       note="PyTorch wrote a checkpoint; the MindSpore side's file is neither a MindSpore "
                            "checkpoint nor a pickle (a torch.save the port kept?)")
        return _compare_checkpoints(name, tensors, ms_tensors, rtol, atol, modules, ms_name, statement)
    arrays = _numpy_file(torch_path), _numpy_file(ms_path)
    if arrays[0] is not None and arrays[1] is not None:
        return compare_values(name, arrays[0], arrays[1], rtol, atol, statement, series=False)
    texts = _text(torch_path), _text(ms_path)
    if texts[0] is not None and texts[1] is not None:
        return _compare_text(name, texts[0], texts[1], rtol, atol, statement)
    return None


def _torch_checkpoint(path: str) -> Optional[dict]:
    """{key: value} of a file torch.load reads with weights_only (nested dicts flattened
    with dots); None for any other file."""
    import torch

    try:
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":  # torch.save's zip format
                return None
        value = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - not a checkpoint torch reads safely
        return None
    return _flattened(value)


def _flattened(value) -> dict:
    """{key: value} of a saved object, nested dicts flattened with dots (a dict checkpoint's
    ``state_dict.fc.weight``); an object that is no dict is the one entry ``""``."""
    out: dict = {}

    def flatten(v, prefix: str) -> None:
        if isinstance(v, dict):
            for k, item in v.items():
                flatten(item, f"{prefix}.{k}" if prefix else str(k))
        else:
            out[prefix] = v

    flatten(value, "")
    return out


def _ms_checkpoint(path: str) -> Optional[dict]:
    """{key: value} of what the MindSpore side saved: a MindSpore checkpoint, or a pickle
    (rule CKP004 ports ``torch.save`` of a dict checkpoint or another object to pickle),
    flattened as PyTorch's is; None for any other file."""
    import mindspore

    try:
        return dict(mindspore.load_checkpoint(path))
    except Exception:  # noqa: BLE001 - not a MindSpore checkpoint
        pass
    try:
        with open(path, "rb") as f:
            if f.read(1) != b"\x80":  # pickle's protocol 2+ header
                return None
            f.seek(0)
            # the file the MindSpore side of this cell wrote into the shadow folder
            return _flattened(pickle.load(f))
    except Exception:  # noqa: BLE001 - not a pickle this process reads
        return None


def _compare_checkpoints(name, tensors, ms_tensors, rtol, atol, modules, ms_name, statement) -> Row:
    """One row: every entry of PyTorch's checkpoint against MindSpore's of the same
    (mapped) name."""
    from msmagic.parity_check.compare import SKIP_BUFFERS

    keys = [k for k in tensors if k.rsplit(".", 1)[-1] not in SKIP_BUFFERS]
    mapping = _mapped_keys(keys, modules, ms_name)
    missing = [k for k in keys if mapping[k] not in ms_tensors]
    present = [k for k in keys if k not in missing]
    if not present:
        return Row(name, DIFFERS, statement=statement,
                   note=f"no entry of PyTorch's checkpoint ({', '.join(keys[:3])}...) is in MindSpore's")
    row = compare_values(name, {k: tensors[k] for k in present},
                         {k: _in_torch_layout(tensors[k], ms_tensors[mapping[k]]) for k in present},
                         rtol, atol, statement, series=False)
    row.torch_shape, row.ms_shape = (len(keys),), (len(ms_tensors),)
    row.torch_dtype = row.ms_dtype = "checkpoint"
    if missing:
        row.status = DIFFERS
        row.note = (f"{len(missing)} entr{'ies' if len(missing) != 1 else 'y'} of PyTorch's checkpoint "
                    f"missing in MindSpore's ({', '.join(missing[:3])}{'...' if len(missing) > 3 else ''})")
    return row


def _in_torch_layout(torch_value, ms_value):
    """MindSpore's checkpoint entry in PyTorch's shape where the two differ only by axes
    of size one (a Conv1d weight is (out, in, 1, k) in MindSpore, (out, in, k) in
    PyTorch); the entry as it is otherwise."""
    from msmagic.parity_check.compare import to_numpy

    a, b = to_numpy(torch_value), to_numpy(ms_value)
    if a is None or b is None or a.shape == b.shape:
        return ms_value
    if [d for d in a.shape if d != 1] == [d for d in b.shape if d != 1]:
        return b.reshape(a.shape)
    return ms_value


def _mapped_keys(keys: list[str], modules, ms_name) -> dict[str, str]:
    """PyTorch's checkpoint key -> MindSpore's: the keys under one prefix (``""`` for a
    saved state dict, ``state_dict.`` for one inside a dict checkpoint; the shortest
    first) that are all parameter names of one module of the cell map through
    ``ms_name(module, name)``; the others stay as they are."""
    mapping = {k: k for k in keys}
    names = [(module, set(module.state_dict())) for module in modules]
    prefixes = {""} | {k[:i + 1] for k in keys for i, c in enumerate(k) if c == "."}
    left = set(keys)
    for prefix in sorted(prefixes, key=lambda p: (len(p), p)):
        group = [k for k in keys if k in left and k.startswith(prefix)]
        if not group:
            continue
        rests = {k[len(prefix):] for k in group}
        for module, module_names in names:
            if rests <= module_names:
                for k in group:
                    mapping[k] = prefix + ms_name(module, k[len(prefix):])
                left.difference_update(group)
                break
    return mapping


def _numpy_file(path: str):
    import numpy as np

    try:
        with open(path, "rb") as f:
            if f.read(6) != b"\x93NUMPY":
                return None
        return np.load(path, allow_pickle=False)
    except Exception:  # noqa: BLE001
        return None


def _text(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > MAX_TEXT:
            return None
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _compare_text(name, torch_text, ms_text, rtol, atol, statement) -> Row:
    """Text with the same words, and numbers equal within the tolerance."""
    words = _NUMBER.split(torch_text), _NUMBER.split(ms_text)
    numbers = _NUMBER.findall(torch_text), _NUMBER.findall(ms_text)
    lines = (torch_text.count("\n"), ms_text.count("\n"))
    if words[0] != words[1] or len(numbers[0]) != len(numbers[1]):
        return Row(name, DIFFERS, (lines[0],), "text", (lines[1],), "text", statement=statement,
                   note="the text differs")
    if not numbers[0]:
        return Row(name, MATCH, (lines[0],), "text", (lines[1],), "text", 0.0, 0.0, statement=statement)
    import numpy as np

    row = compare_values(name, np.array([float(x) for x in numbers[0]]),
                         np.array([float(x) for x in numbers[1]]), rtol, atol, statement, series=False)
    row.torch_shape, row.ms_shape, row.torch_dtype, row.ms_dtype = (lines[0],), (lines[1],), "text", "text"
    return row


def files_note(written: dict, files: ShadowFiles, compared: list[str], skipped: list[str]) -> str:
    """The report's note on the files the cell wrote ("" when the MindSpore side wrote none)."""
    ms = sorted(written["mindspore"])
    if not ms:
        return ""
    shown = ", ".join(os.path.basename(p) for p in ms[:5]) + (" ..." if len(ms) > 5 else "")
    text = (f"The cell runs once on each side: the MindSpore side wrote {shown} into its own folder "
            f"({files.root}), so your files are the PyTorch side's; later %%ms_parity cells read "
            "the MindSpore side's files from there")
    if compared:
        text += f"; compared: {', '.join(compared[:5])}"
    if skipped:
        text += f"; written by both sides, not compared (neither a checkpoint, an array nor text): " \
                f"{', '.join(skipped[:5])}"
    return text + "."
