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
(the two sides no longer draw in the same order) and is reported.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import sys
from typing import Optional

__all__ = ["DrawReplay", "FACTORIES"]

#: PyTorch's random factories whose ``mindspore.ops`` port has the same name
FACTORIES = ("randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "randperm",
             "normal", "bernoulli", "multinomial", "poisson")

#: recorded draws kept at most per step (bytes); later draws are not replayed
MAX_BYTES = 1 << 28


class DrawReplay:
    """Records PyTorch's draws during one side of a step and replays them on the other."""

    def __init__(self) -> None:
        self.queues: dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self.bytes = 0
        self.replayed: collections.Counter = collections.Counter()
        self.stopped: Optional[str] = None  # why the replay stopped in this step
        self.problems: list[str] = []
        self.recorded = self.dropped = 0  # PyTorch draws of this step kept / not kept
        #: the MindSpore side of the step took every PyTorch draw, in order
        self.complete = False

    # PyTorch side ---------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self):
        """Patch ``torch.<factory>`` to record every draw while the PyTorch side runs."""
        import torch

        self.queues.clear()
        self.bytes = self.recorded = self.dropped = 0
        self.stopped = None
        self.complete = False
        originals = {name: getattr(torch, name) for name in FACTORIES if hasattr(torch, name)}
        for name, fn in originals.items():
            setattr(torch, name, self._recorder(name, fn))
        try:
            yield
        finally:
            for name, fn in originals.items():
                setattr(torch, name, fn)

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
        from mindspore import ops

        originals = {name: getattr(ops, name) for name in self.queues if hasattr(ops, name)}
        for name, fn in originals.items():
            setattr(ops, name, self._replayer(name, fn, statement))
        try:
            yield
        finally:
            for name, fn in originals.items():
                setattr(ops, name, fn)
            self.complete = (self.recorded > 0 and not self.dropped and self.stopped is None
                             and not any(self.queues.values()))
            self.queues.clear()
            self.bytes = 0

    def covers(self, tags) -> bool:
        """Did the MindSpore side of the step just run take all of PyTorch's draws, and are
        they all the draws the port knows the statement makes (``tags``: its
        ``random:<api>`` tags)? Then what it bound is compared, not copied."""
        apis = [t.split(":", 1)[1] for t in tags if t.startswith("random:")]
        return self.complete and bool(apis) and all(
            a.startswith("torch.") and a.count(".") == 1 and a[6:] in FACTORIES for a in apis)

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

    def summary(self) -> str:
        """What the MindSpore side took in this run ("" when nothing)."""
        if not self.replayed:
            return ""
        total = sum(self.replayed.values())
        each = ", ".join(f"{name} ×{n}" for name, n in sorted(self.replayed.items()))
        return (f"PyTorch's values used for {total} draw{'s' if total != 1 else ''} made while "
                f"statements ran ({each})")
