"""Stage: sync. Random draws made while a statement runs, replayed on the MindSpore side.

A value a statement binds from ``torch.randn`` is copied across after the statement
(:mod:`~msmagic.parity_check.sync`). A draw made inside a loop or a function (a GAN's
noise ``z = torch.randn(batch, latent)`` at every step) is gone by then. So while the
PyTorch side of a step runs, every call of PyTorch's random factories (``torch.randn``,
``torch.rand``, ``torch.randint``, ``torch.normal``...) is recorded, and while the
MindSpore side runs the same step, MindSpore's functions of the same name in
``mindspore.ops`` (what the port calls) return PyTorch's values in the same order: each
call still draws, and its result is replaced by the next recorded PyTorch draw when that
has the same shape. A draw of another shape stops the replay for the rest of the step
(the two sides no longer draw in the same order) and is reported. Dropout masks go the
same way: each call of ``F.dropout``/``F.dropout1d/2d/3d`` in training mode (what
``nn.Dropout`` and ``nn.Dropout1d/2d/3d`` call) records the mask it applied, and the
MindSpore side's dropout layers and functions apply those masks in order.

Python's and NumPy's own random state (``random``, ``numpy.random`` and the generator
objects a cell binds) is the same library on both sides: :class:`HostRandom` gives the
MindSpore side of every statement the state the PyTorch side started it with.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import sys
from typing import Optional

__all__ = ["DrawReplay", "FACTORIES", "HostRandom", "is_host_generator", "random_apis", "replayable", "initialiser"]

#: PyTorch's random factories whose ``mindspore.ops`` port has the same name
FACTORIES = ("randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "randperm",
             "normal", "bernoulli", "multinomial", "poisson")

#: the ``mindspore.ops`` function the port calls for a factory of another name
#: (``torch.randperm(n)`` -> ``ops.shuffle(ops.arange(n))``)
MS_NAMES = {"randperm": "shuffle"}

#: recorded draws kept at most per step (bytes); later draws are not replayed
MAX_BYTES = 1 << 28


def random_apis(tags) -> list[str]:
    """The PyTorch APIs that draw random numbers in a statement (its ``random:<api>`` tags)."""
    return [t.split(":", 1)[1] for t in tags if t.startswith("random:")]


def replayable(api: str) -> bool:
    """A draw this module replays: one of PyTorch's random factories (``torch.randn``)."""
    return api.startswith("torch.") and api.count(".") == 1 and api[6:] in FACTORIES


def initialiser(api: str) -> bool:
    """A random initialiser of ``torch.nn.init`` (``nn.init.normal_``) or a tensor's
    in-place random fill (``w.data.normal_(std=0.01)``): it fills a tensor in place with
    draws no replay covers."""
    return api.startswith(("nn.init.", "torch.nn.init.")) or api in _RANDOM_FILLS


#: the Tensor methods that fill a tensor in place with random draws
_RANDOM_FILLS = frozenset(f"Tensor.{m}_" for m in (
    "normal", "uniform", "bernoulli", "exponential", "geometric", "log_normal", "cauchy", "random"))


#: the queue of dropout masks (not a factory name: the generic replay leaves it alone)
DROPOUT = "dropout mask"
#: PyTorch's dropout functions whose masks are replayed, with the kind of mask each draws:
#: one per element (``F.dropout``, which ``nn.Dropout`` calls) or one per channel
#: (``F.dropout1d/2d/3d``, which ``nn.Dropout1d/2d/3d`` call). A MindSpore dropout of the
#: other kind does not take the mask: the replay stops there and the difference shows.
MASKED_DROPOUTS = {"dropout": "element", "dropout1d": "channel", "dropout2d": "channel",
                   "dropout3d": "channel"}
#: dropout functions whose masks are not replayed (alpha dropout's affine noise has no
#: MindSpore port to take it): a call in training mode is counted and named in the notes
UNREPLAYED_DROPOUTS = ("alpha_dropout", "feature_alpha_dropout")


def _counted(name: str, fn, drawn: collections.Counter):
    """``fn`` (a dropout function of ``torch.nn.functional``) counting its calls that draw."""

    import inspect

    signature = inspect.signature(fn)  # alpha_dropout's training defaults to False
    inside = [False]

    def call(*args, **kwargs):
        if inside[0]:
            # dispatched to itself (by its module name) through an active TorchFunctionMode,
            # such as torch's default-device context: count the call once
            return fn(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.arguments.get("training") and (bound.arguments.get("p") or 0) > 0:
                drawn[name] += 1
        except TypeError:  # the call fails in fn itself, as it would unpatched
            pass
        inside[0] = True
        try:
            return fn(*args, **kwargs)
        finally:
            inside[0] = False

    return functools.wraps(fn)(call)


class DrawReplay:
    """Records PyTorch's draws during one side of a step and replays them on the other."""

    def __init__(self) -> None:
        self.queues: dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self.bytes = 0
        self.replayed: collections.Counter = collections.Counter()
        #: the layers (by id) and call sites that applied a replayed dropout mask
        self.mask_sources: set = set()
        self.stopped: Optional[str] = None  # why the replay stopped in this step
        self.problems: list[str] = []
        self.recorded = self.dropped = 0  # PyTorch draws of this step kept / not kept
        #: the MindSpore side of the step took every PyTorch draw, in order
        self.complete = False

    # the synchroniser's part protocol: one context for each side of a statement -----

    def torch_side(self, step, tns: dict):
        return self.recording()

    def ms_side(self, step, mns: dict):
        return self.replaying(step.index)

    # PyTorch side ---------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self):
        """Patch ``torch.<factory>`` to record every draw while the PyTorch side runs."""
        import torch

        self.queues.clear()
        self.bytes = self.recorded = self.dropped = 0
        self.stopped = None
        self.complete = False
        import torch.nn.functional as TF

        originals = {name: getattr(torch, name) for name in FACTORIES if hasattr(torch, name)}
        for name, fn in originals.items():
            setattr(torch, name, self._recorder(name, fn))
        masked = {name: getattr(TF, name) for name in MASKED_DROPOUTS if hasattr(TF, name)}
        for name, fn in masked.items():
            setattr(TF, name, self._dropout_recorder(fn, MASKED_DROPOUTS[name]))
        others = {name: getattr(TF, name) for name in UNREPLAYED_DROPOUTS if hasattr(TF, name)}
        drawn: collections.Counter = collections.Counter()
        for name, fn in others.items():
            setattr(TF, name, _counted(name, fn, drawn))
        try:
            yield
        finally:
            for name, fn in originals.items():
                setattr(torch, name, fn)
            for name, fn in {**masked, **others}.items():
                setattr(TF, name, fn)
            if drawn:
                which = ", ".join(f"F.{name} ×{n}" for name, n in sorted(drawn.items()))
                problem = (f"random masks not replayed ({which}: nn.AlphaDropout and nn.FeatureAlphaDropout "
                           "call them, and have no MindSpore port to take PyTorch's noise), so what a statement "
                           "computes after one in training mode (and its gradients) differs by design; build "
                           "those layers with p=0 to compare the rest")
                if problem not in self.problems:
                    self.problems.append(problem)

    def _dropout_recorder(self, fn, kind: str):
        """``F.dropout`` (``nn.Dropout`` calls it) or a channel dropout (``F.dropout2d``):
        the mask each call in training mode drew, read from the output one element at a
        time (an element the input had at 0 is 0 either way; a dropped channel is 0
        throughout), so the MindSpore side applies it as ``x * mask / (1 - p)``."""
        replay = self
        inside = [False]

        def dropout(input, p=0.5, training=True, inplace=False):
            if inside[0]:
                # F.dropout dispatches to itself (by its module name) through an active
                # TorchFunctionMode, such as torch's default-device context: record once
                return fn(input, p, training, inplace)
            inside[0] = True
            try:
                out = fn(input, p, training, inplace)
            finally:
                inside[0] = False
            if training and 0 < p < 1:
                try:
                    mask = (out.detach() != 0).cpu().numpy()
                except Exception:  # noqa: BLE001 - not a plain tensor: not replayed
                    return out
                if replay.bytes + mask.nbytes <= MAX_BYTES:
                    replay.bytes += mask.nbytes
                    replay.queues[DROPOUT].append((mask, float(p), kind))
                    replay.recorded += 1
                else:
                    replay.dropped += 1
            return out

        return functools.wraps(fn)(dropout)

    def _recorder(self, name: str, fn):
        replay = self

        def draw(*args, **kwargs):
            out = fn(*args, **kwargs)
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("torch."):
                return out  # a sampler's own shuffle (linked elsewhere), an initialiser...
            try:
                value = out.detach().cpu().numpy().copy()
            except Exception:  # noqa: BLE001 - not a plain tensor (out= given...): not replayed
                return out
            if replay.bytes + value.nbytes <= MAX_BYTES:
                replay.bytes += value.nbytes
                replay.queues[name].append(value)
                replay.recorded += 1
            else:
                replay.dropped += 1
            return out

        return functools.wraps(fn)(draw)

    # MindSpore side -------------------------------------------------------------------

    @contextlib.contextmanager
    def replaying(self, statement: int):
        """Patch ``mindspore.ops.<factory>`` to return PyTorch's draws in order."""
        self.complete = False
        if not any(self.queues.values()):
            yield
            return
        import mindspore
        from mindspore import ops

        originals = {name: getattr(ops, MS_NAMES.get(name, name)) for name in self.queues
                     if hasattr(ops, MS_NAMES.get(name, name))}
        for name, fn in originals.items():
            setattr(ops, MS_NAMES.get(name, name), self._replayer(name, fn, statement))
        layers, functions = {}, {}
        if self.queues.get(DROPOUT):
            layers = {cls: cls.construct for cls in _ms_dropout_layers()}
            functions = {name: getattr(ops, name) for name in MASKED_DROPOUTS if hasattr(ops, name)}
            for cls, construct in layers.items():
                cls.construct = self._dropout_layer(construct, statement, _ms_kind(cls))
            for name, fn in functions.items():
                setattr(ops, name, self._dropout_function(fn, statement, MASKED_DROPOUTS[name]))
        try:
            yield
        finally:
            for name, fn in originals.items():
                setattr(ops, MS_NAMES.get(name, name), fn)
            for cls, construct in layers.items():
                cls.construct = construct
            for name, fn in functions.items():
                setattr(ops, name, fn)
            self.complete = (self.recorded > 0 and not self.dropped and self.stopped is None
                             and not any(self.queues.values()))
            self.queues.clear()
            self.bytes = 0

    def covers(self, tags) -> bool:
        """Did the MindSpore side of the step just run take all of PyTorch's draws, and are
        they all the draws the port knows the statement makes (``tags``: its
        ``random:<api>`` tags)? Then what it bound is compared, not copied."""
        apis = random_apis(tags)
        return self.complete and bool(apis) and all(replayable(a) for a in apis)

    def _replayer(self, name: str, fn, statement: int):
        replay = self

        def draw(*args, **kwargs):
            out = fn(*args, **kwargs)
            queue = replay.queues.get(name)
            if replay.stopped is not None or not queue:
                return out
            value = queue.popleft()
            shape = tuple(getattr(out, "shape", ()))
            if tuple(value.shape) != shape:
                replay.stopped = (f"statement {statement + 1}: a MindSpore {name} draw of shape {shape} met "
                                  f"PyTorch's of shape {tuple(value.shape)}; the draws after it are "
                                  "MindSpore's own")
                replay.problems.append(replay.stopped)
                return out
            import mindspore

            replay.replayed[name] += 1
            return mindspore.Tensor(value, dtype=out.dtype)

        return functools.wraps(fn)(draw)

    def _masked(self, x, statement: int, ms_p: float, kind: str, source):
        """``x`` with PyTorch's next dropout mask applied (and scaled by 1/(1-p)), or None
        when there is none for it (the MindSpore layer then draws its own). ``ms_p``: the
        drop probability the MindSpore layer or call has: one that is not PyTorch's (a
        port passing keep_prob for p) stops the replay, so the difference shows; so does a
        mask of the other ``kind`` (a channel dropout ported to an element one).
        ``source``: what applied it (a layer, or a call site), counted for the report."""
        queue = self.queues.get(DROPOUT)
        if self.stopped is not None or not queue:
            return None
        mask, p, torch_kind = queue[0]
        shape = tuple(getattr(x, "shape", ()))
        if tuple(mask.shape) != shape or abs(ms_p - p) > 1e-9 or kind != torch_kind:
            what = (f"of shape {shape} met PyTorch's mask of shape {tuple(mask.shape)}"
                    if tuple(mask.shape) != shape
                    else f"drops with p={ms_p:g} where PyTorch's dropped with p={p:g}" if abs(ms_p - p) > 1e-9
                    else f"drops one {kind} at a time where PyTorch's dropped one {torch_kind} at a time")
            self.stopped = (f"statement {statement + 1}: a MindSpore dropout {what}; the masks after it "
                            "are MindSpore's own")
            self.problems.append(self.stopped)
            return None
        queue.popleft()
        import mindspore

        self.replayed["dropout mask"] += 1
        self.mask_sources.add(source)
        return x * mindspore.Tensor(mask, dtype=x.dtype) * (1.0 / (1.0 - p))

    def _dropout_layer(self, construct, statement: int, kind: str):
        replay = self

        def dropout_construct(cell, x):
            ms_p = _layer_p(cell)
            if cell.training and ms_p and not _inside_mindspore():
                out = replay._masked(x, statement, float(ms_p), kind, ("layer", id(cell)))
                if out is not None:
                    return out
            return construct(cell, x)

        return functools.wraps(construct)(dropout_construct)

    def _dropout_function(self, fn, statement: int, kind: str):
        replay = self

        @functools.wraps(fn)
        def dropout(input, p=0.5, training=True, *args, **kwargs):
            if training and 0 < p < 1 and not _inside_mindspore():
                caller = sys._getframe(1)
                out = replay._masked(input, statement, float(p), kind,
                                     ("call", caller.f_code.co_filename, caller.f_lineno))
                if out is not None:
                    return out
            return fn(input, p, training, *args, **kwargs)

        return dropout

    def summary(self) -> str:
        """What the MindSpore side took in this run ("" when nothing): the dropout masks
        replayed (how many layers or call sites applied them, in how many calls) and the
        other draws."""
        if not self.replayed:
            return ""
        parts = []
        masks = self.replayed.get(DROPOUT, 0)
        if masks:
            where = len(self.mask_sources)
            parts.append(f"dropout masks replayed: {where} layer{'s' if where != 1 else ''} or call site"
                         f"{'s' if where != 1 else ''}, {masks} call{'s' if masks != 1 else ''} "
                         f"(dropout mask ×{masks})")
        others = {name: n for name, n in self.replayed.items() if name != DROPOUT}
        if others:
            total = sum(others.values())
            each = ", ".join(f"{name} ×{n}" for name, n in sorted(others.items()))
            parts.append(f"PyTorch's values used for {total} draw{'s' if total != 1 else ''} made while "
                         f"statements ran ({each})")
        return "; ".join(parts)


def _ms_dropout_layers() -> list:
    """MindSpore's dropout layers whose ``construct`` takes PyTorch's masks."""
    import mindspore

    return [getattr(mindspore.nn, name) for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d")
            if hasattr(mindspore.nn, name)]


def _ms_kind(cls) -> str:
    return "element" if cls.__name__ == "Dropout" else "channel"


def _layer_p(cell) -> float:
    """The drop probability of a MindSpore dropout layer (0 when it keeps everything):
    ``nn.Dropout`` holds ``p`` (or only ``keep_prob``), ``nn.Dropout1d`` ``prob``,
    ``nn.Dropout2d/3d`` ``keep_prob``."""
    p = getattr(cell, "p", None)
    if p is None:
        p = getattr(cell, "prob", None)
    if p is None:
        keep = getattr(cell, "keep_prob", 1.0)
        p = 1.0 - keep
    return float(p) if 0 < float(p) < 1 else 0.0


#: parity's own modules whose frames wrap a Cell call (this one's dropout patches, the
#: layer drill-down's and the first-call synchronisation's ``Cell.__call__`` wrappers)
_WRAPPERS = frozenset({__name__, "msmagic.parity_check.layers", "msmagic.parity_check.sync"})


def _inside_mindspore() -> bool:
    """Is the dropout being applied by MindSpore's own code (``nn.LSTM``'s dropout between
    layers, in ``mindspore.nn.layer.rnns``) rather than by the user's model? PyTorch draws
    that mask inside its RNN kernel, where no recording sees it: it must not take the
    masks the user's own dropout layers drew. The first caller outside MindSpore's
    ``Cell.__call__`` machinery and this module decides: MindSpore's recurrent layers."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name in _WRAPPERS or name.startswith(("mindspore.nn.cell", "mindspore.common", "functools")):
            frame = frame.f_back
            continue
        # MindSpore's recurrent layers (mindspore.nn.layer.rnns, rnn_cells); a container
        # (SequentialCell) or a transformer layer applies dropout layers PyTorch also records
        return name.startswith("mindspore.nn.layer.rnn")
    return False


# ----------------------------------------------------------------------------- host random state


def is_host_generator(value) -> bool:
    """A random generator of Python's or NumPy's (``random.Random``,
    ``numpy.random.Generator``, ``numpy.random.RandomState``)."""
    import random

    if isinstance(value, random.Random):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, (np.random.Generator, np.random.RandomState))


def _generator_state(value):
    import random

    if isinstance(value, random.Random):
        return value.getstate()
    if hasattr(value, "bit_generator"):  # numpy.random.Generator
        return value.bit_generator.state
    return value.get_state()  # numpy.random.RandomState


def _set_generator_state(value, state) -> None:
    import random

    if isinstance(value, random.Random):
        value.setstate(state)
    elif hasattr(value, "bit_generator"):
        value.bit_generator.state = state
    else:
        value.set_state(state)


class HostRandom:
    """Python's and NumPy's random state, the same for both sides of every statement.

    Both sides share the ``random`` and ``numpy.random`` modules: left alone, the
    MindSpore side of ``random.shuffle(words)`` would continue from the state the PyTorch
    side left and shuffle differently. So does PyTorch's own CPU generator, for the
    PyTorch calls a port keeps (a ``SubsetRandomSampler`` msmagic has no mapping for). So the state is captured before the PyTorch side
    runs a statement and put back before the MindSpore side runs it; afterwards the state
    the PyTorch side left is put back, so the notebook ends as if the plain cell had run.
    A generator object bound to a name (``rng = np.random.default_rng()``) is a separate
    object on each side: the MindSpore side's takes the state PyTorch's had when the
    statement began. ``names``: the names holding such generators (kept across cells).
    """

    def __init__(self, names: set) -> None:
        self.names = names
        self.start = self.end = None
        self.generators: dict = {}

    @staticmethod
    def _capture():
        import random

        np = sys.modules.get("numpy")
        torch = sys.modules.get("torch")
        return (random.getstate(), np.random.get_state() if np is not None else None,
                torch.random.get_rng_state() if torch is not None else None)

    @staticmethod
    def _restore(state) -> None:
        import random

        python, numpy_state, torch_state = state
        random.setstate(python)
        np = sys.modules.get("numpy")
        if numpy_state is not None and np is not None:
            np.random.set_state(numpy_state)
        if torch_state is not None:
            sys.modules["torch"].random.set_rng_state(torch_state)

    @contextlib.contextmanager
    def torch_side(self, step, tns: dict):
        """While the PyTorch side of ``step`` runs: the states it starts from and ends with."""
        for name in step.names:
            if name not in self.names and is_host_generator(tns.get(name)):
                self.names.add(name)
        self.generators = {n: (tns[n], _generator_state(tns[n])) for n in self.names
                           if is_host_generator(tns.get(n))}
        self.start = self._capture()
        try:
            yield
        finally:
            self.end = self._capture()

    @contextlib.contextmanager
    def ms_side(self, mns: dict):
        """While the MindSpore side of the same statement runs: it starts from PyTorch's
        state; PyTorch's end state is put back after it."""
        if self.start is None:
            yield
            return
        self._restore(self.start)
        for name, (torch_value, state) in self.generators.items():
            value = mns.get(name)
            if type(value) is type(torch_value) and value is not torch_value:
                _set_generator_state(value, state)
        try:
            yield
        finally:
            self._restore(self.end)
            self.start = None

    def learn(self, step, tns: dict) -> None:
        """After a statement: the generators it bound are followed from now on."""
        for name in step.bound:
            if is_host_generator(tns.get(name)):
                self.names.add(name)
