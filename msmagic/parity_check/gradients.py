"""Stage: sync. Optimizer steps in lockstep: PyTorch's gradients drive MindSpore's steps.

A training loop is one statement, so each side runs all of its steps before anything is
compared. Adaptive optimizers (Adam and its family, RMSprop, Adagrad) divide every
gradient entry by its own running magnitude: an entry whose gradient is at rounding
level (about ``eps`` or smaller; dead ReLU units, near-cancelling sums) moves by up to the
learning rate in a direction the last bit decides. The two frameworks sum in different
orders, so after one such step the weights differ by up to ``lr`` and every later step
compounds it, although both computed the same gradients to float32 rounding.

So, when a name is bound to a PyTorch optimizer on one side and a MindSpore optimizer on
the other, or the two are built in the same place of a statement (:func:`recorder`, then
:func:`attach`), :class:`GradientLink` records, at each PyTorch ``optimizer.step()``, the
gradient of every parameter. Each call of the MindSpore optimizer (``optimizer(grads)``)
takes the next recorded step: the gradients MindSpore computed are compared with
PyTorch's (a row when they differ beyond the tolerance: that is a porting error in the
forward or the loss), and the step is taken with PyTorch's values. Parameters are then
compared as usual after the cell, so the optimizer's update rule is still checked.
"""

from __future__ import annotations

import collections
import weakref
from typing import Optional

from msmagic.parity_check.compare import DIFFERS, MATCH, Row, is_cell, is_torch_module, to_numpy

__all__ = ["GradientLink", "link_optimizer", "recorder", "attach", "unlinkable", "is_torch_optimizer",
           "is_ms_optimizer", "LINKS"]

#: recorded gradients a link keeps at most (bytes); later steps are not recorded and the
#: MindSpore side takes them with its own gradients
MAX_BYTES = 1 << 30

#: gradients match when the norm of their difference is within this fraction of the norm
#: of PyTorch's gradient (plus ``atol``). A gradient entry is a sum over the batch (and over
#: the pixels of a convolution), and BatchNorm's backward subtracts nearly equal terms, so
#: entries near zero are not comparable one by one: on the tutorials' CNN and ResNet single
#: entries of the two frameworks' float32 results differ by up to 1% of the largest entry,
#: and the norm of the difference reaches 0.7% of the gradient's (a ResNet convolution
#: between two BatchNorms). A porting error (another loss reduction, a missing term, a
#: wrong activation) differs by tens of percent.
GRADIENT_RTOL = 2e-2

#: a parameter whose gradient is (nearly) zero in exact arithmetic (the bias of a layer
#: followed by BatchNorm, which the normalisation cancels), or much smaller than the
#: step's others, has a float32 gradient made of rounding noise from terms as large as the
#: step's other gradients: two correct runs differ by a large fraction of it. Its difference
#: is measured against this fraction of the norm of the whole step's gradient (all
#: parameters) when that is larger than its own norm. morvan's BatchNorm net: bias
#: gradients of 1e-6..5e-5 next to a step norm of 626, the frameworks 2.4e-4 apart there; a
#: deeper Linear-BatchNorm-tanh chain: a weight gradient of norm 0.27 (step norm 933) 2.15%
#: apart. A porting error changes the large gradients too, which are still held to 2%.
GRADIENT_FLOOR = 1e-3

#: every live link, across parity runs (optimizers live on in the namespaces)
LINKS: "weakref.WeakSet" = weakref.WeakSet()


def is_torch_optimizer(v) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, torch.optim.Optimizer)


def is_ms_optimizer(v) -> bool:
    if not is_cell(v):
        return False
    import mindspore

    bases = [mindspore.nn.Optimizer]
    try:
        from mindspore.experimental.optim import Optimizer as Experimental

        bases.append(Experimental)
    except ImportError:  # pragma: no cover
        pass
    return isinstance(v, tuple(bases))


class GradientLink:
    """The gradients a PyTorch optimizer stepped with, for its MindSpore port.

    ``pairs``: for each MindSpore optimizer parameter (in the order its gradients come),
    the index of the matching PyTorch parameter in the PyTorch optimizer's groups, or None.
    """

    def __init__(self, name: str, torch_opt, pairs: Optional[list], rtol: float, atol: float):
        self.name = name
        #: None until a MindSpore optimizer is attached (:func:`attach`)
        self.pairs = pairs
        self.rtol, self.atol = rtol, atol
        self.pending: collections.deque = collections.deque()
        self.recording = False
        self.bytes = 0
        self.dropped = 0  # PyTorch steps not recorded (memory)
        self.taken = 0  # MindSpore steps that used PyTorch's gradients
        self.missed = 0  # MindSpore steps with no recorded PyTorch step to follow
        self.worst: Optional[Row] = None  # the largest gradient difference seen
        self.first_bad: Optional[tuple[int, Row]] = None  # (step number, row) of the first failure
        #: does the PyTorch optimizer keep state (momentum, weight decay, Adam's moments)? Then a
        #: parameter PyTorch left without a gradient (None: unused by that forward) is skipped
        #: by PyTorch's step but still moved by MindSpore's, which steps it with zeros
        defaults = getattr(torch_opt, "defaults", {}) or {}
        self.stateful = not (type(torch_opt).__name__ == "SGD" and not defaults.get("momentum")
                             and not defaults.get("weight_decay"))
        #: weight decay moves a parameter with a zero gradient from its first step on; momentum
        #: and Adam's moments only once it has had a gradient (their state starts at zero)
        self.decays = bool(defaults.get("weight_decay"))
        self.had_grad: set = set()  # indices of the PyTorch parameters that had a gradient
        self.first_unused: Optional[tuple[int, int]] = None  # (step number, parameters without gradient)
        self.bad_names: list = []
        #: the MindSpore optimizer's parameter names, in the order its gradients come
        self.ms_names: list = []
        self.torch_optimizer = weakref.ref(torch_opt)
        self.held = None  # the optimizer itself, while a statement that built it runs
        self._handle = torch_opt.register_step_pre_hook(self._record)
        LINKS.add(self)  # until close()

    # PyTorch side ---------------------------------------------------------------------

    def _record(self, opt, args, kwargs) -> None:
        if not self.recording:
            return
        # ``args`` holds the optimizer itself, then step()'s own arguments
        if args[1:] or kwargs.get("closure") is not None:
            return  # a closure computes the gradients inside step(): nothing to record yet
        grads = []
        for group in opt.param_groups:
            for p in group["params"]:
                g = p.grad
                grads.append(None if g is None else g.detach().cpu().numpy().copy())
        size = sum(g.nbytes for g in grads if g is not None)
        if self.bytes + size > MAX_BYTES:
            self.dropped += 1
            return
        self.bytes += size
        self.pending.append(grads)

    def clear(self) -> None:
        self.pending.clear()
        self.bytes = 0

    # MindSpore side -------------------------------------------------------------------

    def substitute(self, grads):
        """The gradients the MindSpore step takes: PyTorch's for this step (after
        comparing), or MindSpore's own when PyTorch recorded no step for it."""
        import mindspore
        import numpy as np

        if (not self.pending or self.pairs is None or not isinstance(grads, (tuple, list))
                or len(grads) != len(self.pairs)):
            self.missed += 1
            return grads
        recorded = self.pending.popleft()
        self.bytes -= sum(g.nbytes for g in recorded if g is not None)
        self.taken += 1
        out = list(grads)
        step_norm = float(np.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64)))
                                      for g in recorded if g is not None and g.dtype.kind == "f")))
        unused = sum(1 for index in self.pairs if index is not None and recorded[index] is None
                     and (self.decays or index in self.had_grad))
        if unused and self.stateful and self.first_unused is None:
            self.first_unused = (self.taken, unused)
        self.had_grad.update(index for index in self.pairs if index is not None and recorded[index] is not None)
        for k, (index, mine) in enumerate(zip(self.pairs, grads)):
            theirs = recorded[index] if index is not None else None
            if theirs is None:
                continue
            row = self._compare(theirs, mine, step_norm)
            if row.status == MATCH:
                if self.worst is None or (row.max_abs or 0) > (self.worst.max_abs or 0):
                    self.worst = row
            else:
                if self.first_bad is None:
                    self.first_bad = (self.taken, row)
                if self.first_bad[0] == self.taken and k < len(self.ms_names):
                    self.bad_names.append(self.ms_names[k])
            if theirs.size == mine.size:
                out[k] = mindspore.Tensor(theirs.reshape(tuple(mine.shape)), dtype=mine.dtype)
        return type(grads)(out) if isinstance(grads, tuple) else out

    def _compare(self, theirs, mine, step_norm: float = 0.0) -> Row:
        """One parameter's gradients: ``max_rel`` is the norm of the difference relative to
        the norm of PyTorch's gradient; the difference is allowed ``GRADIENT_RTOL`` of that
        norm, or of ``GRADIENT_FLOOR`` times ``step_norm`` (the whole step's) if larger."""
        import numpy as np

        ours = to_numpy(mine)
        row = Row(f"{self.name}: gradients", MATCH, tuple(theirs.shape), str(theirs.dtype),
                  tuple(ours.shape), str(ours.dtype))
        if ours.size != theirs.size:
            row.status, row.note = DIFFERS, f"{theirs.size} gradient entries vs {ours.size}"
            return row
        a, b = theirs.astype(np.float64).ravel(), ours.astype(np.float64).ravel()
        if np.any(np.isnan(a) != np.isnan(b)) or np.any(np.isinf(a) != np.isinf(b)):
            row.status, row.note = DIFFERS, "NaN or infinite entries on one side only"
            return row
        finite = np.isfinite(a) & np.isfinite(b)
        a, b = a[finite], b[finite]
        d = np.abs(a - b)
        row.max_abs = float(d.max()) if d.size else 0.0
        norm, gap = float(np.linalg.norm(a)), float(np.linalg.norm(a - b))
        row.max_rel = gap / norm if norm else (0.0 if gap == 0 else float("inf"))
        if gap > self.atol + GRADIENT_RTOL * max(norm, GRADIENT_FLOOR * step_norm):
            row.status = DIFFERS
            row.note = f"the difference is {row.max_rel:.2%} of the gradient's norm"
        return row

    def reset(self) -> None:
        self.taken = self.missed = self.dropped = 0
        self.first_bad = self.worst = self.first_unused = None
        #: the MindSpore names of the parameters whose gradients differed at the first
        #: step that differed
        self.bad_names: list = []

    def report(self, run, statement: int) -> Optional[Row]:
        """Say what the MindSpore side of one parity step took; the failing row, if any."""
        taken, missed, bad, worst, dropped = self.taken, self.missed, self.first_bad, self.worst, self.dropped
        bad_names = self.bad_names
        unused = self.first_unused
        self.reset()
        if not taken and not missed:
            return None
        plural = "s" if taken != 1 else ""
        reason = f"PyTorch's gradients used for {taken} step{plural}"
        if bad is None and taken:
            size = worst.max_abs if worst is not None and worst.max_abs is not None else 0.0
            reason += (f" (the gradients MindSpore computed agreed within {GRADIENT_RTOL:.0%} of each "
                       f"gradient's norm; largest entry difference {size:.2g})")
        if missed:
            many = missed != 1
            reason += (f"; {missed} MindSpore step{'s' if many else ''} had no PyTorch step to follow "
                       f"and used {'their' if many else 'its'} own gradients")
        if dropped:
            reason += f"; {dropped} PyTorch step{'s' if dropped != 1 else ''} not recorded (memory)"
        if self.name not in run.synchronised:
            run.synchronised.append(self.name)
        run.sync_reasons[self.name] = reason
        if unused is not None:
            number, count = unused
            row = Row(f"{self.name}: parameters without gradient", DIFFERS, statement=statement)
            row.note = (f"at optimizer step {number}, PyTorch had no gradient (None: that forward pass did not "
                        f"use them) for {count} parameter{'s' if count != 1 else ''} that had one before (or decay); "
                        "PyTorch's optimizer skips "
                        "such a parameter, MindSpore's steps it with a zero gradient, so its momentum, weight "
                        "decay or Adam moments still move it: the weights differ from there on (a difference "
                        "of the two frameworks' optimizers the port cannot remove)")
            if bad is not None:
                row.note += f"; the gradients differ from step {bad[0]} on"
            return row
        if bad is None:
            return None
        number, row = bad
        row.name = f"{self.name}: gradients"  # the name the statement bound it to, if it has one now
        row.statement = statement
        row.status = DIFFERS
        row.note = (f"at optimizer step {number} ({row.note}): the gradients MindSpore computed differ from "
                    "PyTorch's (the forward pass or the loss differs); the step went on with "
                    "PyTorch's gradients")
        row.parameters = by_layer(bad_names)
        if row.parameters:
            shown = "; ".join(f"{layer or '(top level)'} ({', '.join(leaves)})" for layer, leaves in row.parameters[:4])
            more = len(row.parameters) - 4
            row.note += (f". The first parameters whose gradients differ, by layer: {shown}"
                         + (f" and {more} more layer{'s' if more != 1 else ''}" if more > 0 else ""))
        return row

    def close(self) -> None:
        self._handle.remove()
        LINKS.discard(self)


def _call_through_link(link: GradientLink, cls):
    def __call__(self, *args, **kwargs):
        if args:
            args = (link.substitute(args[0]),) + args[1:]
        return cls.__call__(self, *args, **kwargs)

    return __call__


def unlinkable(torch_opt) -> str:
    """Why the steps of ``torch_opt`` cannot be followed ("" when they can)."""
    if type(torch_opt).__name__ == "LBFGS":
        return "LBFGS computes its gradients inside step()"
    return ""


def link_optimizer(name: str, torch_opt, ms_opt, tns: dict, mns: dict, params, rtol: float, atol: float):
    """Link a PyTorch optimizer to its MindSpore port: (link, "") or (None, why not).

    An optimizer already linked to ``torch_opt`` (built in the same statement, see
    :func:`recorder`) keeps its link and takes the name it is bound to.
    """
    problem = unlinkable(torch_opt)
    if problem:
        return None, problem
    old = getattr(type(ms_opt), "_msmagic_link", None)
    if old is not None:
        if old.torch_optimizer() is torch_opt:
            old.name = name
            return old, ""
        old.close()
    link = GradientLink(name, torch_opt, None, rtol, atol)
    problem = attach(link, ms_opt, tns, mns, params)
    if problem:
        link.close()
        return None, problem
    return link, ""


def recorder(name: str, torch_opt, rtol: float, atol: float) -> Optional[GradientLink]:
    """A link that records the steps of ``torch_opt`` (built while a statement runs) from
    now on, for the MindSpore optimizer built in its place to :func:`attach` to later
    (None when its steps cannot be followed)."""
    if unlinkable(torch_opt):
        return None
    link = GradientLink(name, torch_opt, None, rtol, atol)
    link.recording = True
    # held until the statement ends: a function that builds and trains it may drop it
    # before the MindSpore side builds its own
    link.held = torch_opt
    return link


def attach(link: GradientLink, ms_opt, tns: dict, mns: dict, params) -> str:
    """Make ``ms_opt`` step with the gradients ``link`` records: "" or why it cannot.

    Parameters are paired by name through the modules both namespaces bind (``params``
    is :func:`~msmagic.parity_check.sync.ms_name_for`'s), else by position when both
    optimizers hold the same number of parameters of the same sizes.
    """
    torch_opt = link.torch_optimizer()
    if torch_opt is None:
        return "the PyTorch optimizer no longer exists"
    torch_params = [p for group in torch_opt.param_groups for p in group["params"]]
    ms_params = list(getattr(ms_opt, "parameters", ()) or ())
    if not ms_params:
        return "the MindSpore optimizer lists no parameters"
    pairs = _pair_by_name(torch_params, ms_params, tns, mns, params)
    if pairs is None:
        if len(torch_params) != len(ms_params) or any(
            t.numel() != int(m.size) for t, m in zip(torch_params, ms_params)
        ):
            return "its parameters could not be paired with PyTorch's"
        pairs = list(range(len(ms_params)))
    link.pairs = pairs
    link.ms_names = [str(getattr(m, "name", "") or "") for m in ms_params]
    cls = type(ms_opt)
    base = cls.__mro__[1] if getattr(cls, "_msmagic_link", None) is not None else cls
    ms_opt.__class__ = type(base.__name__, (base,), {
        "__call__": _call_through_link(link, base),
        "__module__": base.__module__,
        "__qualname__": base.__qualname__,
        "_msmagic_link": link,
    })
    return ""


def _pair_by_name(torch_params, ms_params, tns, mns, params) -> Optional[list]:
    """For each MindSpore parameter, the index of its PyTorch parameter, through a module
    bound to the same name on both sides; None when one is not found."""
    from msmagic.parity_check.sync import ms_name_for

    index = {id(p): i for i, p in enumerate(torch_params)}
    by_ms: dict[int, int] = {}
    for n, tmod in tns.items():
        cell = mns.get(n)
        if n.startswith("_") or not is_torch_module(tmod) or not is_cell(cell):
            continue
        ms_ids = {name: id(p) for name, p in cell.parameters_and_names()}
        for tname, p in tmod.named_parameters():
            i = index.get(id(p))
            mid = ms_ids.get(ms_name_for(tmod, tname, params))
            if i is not None and mid is not None:
                by_ms.setdefault(mid, i)
    pairs = [by_ms.get(id(m)) for m in ms_params]
    if any(i is None for i in pairs):
        return None
    return pairs


def by_layer(names) -> tuple:
    """Parameter names grouped by the layer that owns them, in order of first appearance:
    ``["fc.weight", "fc.bias", "bn.gamma"]`` -> ``(("fc", ("weight", "bias")), ("bn", ("gamma",)))``."""
    groups: dict = {}
    for name in names:
        layer, _, leaf = name.rpartition(".")
        groups.setdefault(layer, []).append(leaf)
    return tuple((layer, tuple(leaves)) for layer, leaves in groups.items())
