"""What the installed MindSpore (2.10) marks deprecated and the port still reaches.

The port writes no API that MindSpore marks deprecated, with the exceptions in
``KNOWN_TARGETS`` (each with the reason no replacement was taken). Several
non-deprecated APIs the port writes use a deprecated primitive inside MindSpore itself;
MindSpore then logs ``'<name>' is deprecated ...`` the first time, although nothing in
the user's cell names it. ``INTERNAL`` lists those names, and :func:`internal_warnings`
keeps them off the output while a ported cell runs, so a caller can state them in one
note instead (``tests/test_deprecated_targets.py`` checks both lists against the
installed version, in both directions).
"""

from __future__ import annotations

import contextlib
import logging
import re
from typing import Iterator, Optional

#: Targets the port keeps although the installed MindSpore marks them deprecated.
KNOWN_TARGETS = {
    # warns on the first call
    "mindspore.ops.randint": (
        "torch.randint (FUN011): the replacement MindSpore's warning names, mint.randint, has no CPU "
        "kernel in 2.10 (InplaceRandom), nor has Tensor.random_; ops.uniform runs the same deprecated "
        "UniformInt primitive"),
    "mindspore.ops.randint_like": (
        "torch.randint_like (FUN011): mint.randint_like has no CPU kernel in 2.10 (InplaceRandom), "
        "and parity's draw replay pairs torch.randint_like with mindspore.ops.randint_like"),
    "mindspore.ops.rand_like": (
        "torch.rand_like (FUN011): mint.rand_like has no CPU kernel in 2.10 (InplaceUniform); "
        "ops.rand(x.shape, dtype=x.dtype) draws the same tensor, but parity's draw replay pairs "
        "torch.<factory> with mindspore.ops.<factory> of the same name and would lose the draw"),
    # docstring marks only ("This interface is deprecated and will be removed after version
    # 2.9.0"): nothing is printed; a replacement is open work
    "mindspore.ops.shuffle": "torch.randperm (FUN011): ops.randperm with its default seed=0 returns the "
                             "same permutation at every call in 2.10 (seed=-1 draws from the clock, which "
                             "mindspore.set_seed cannot repeat) and mint.randperm has no CPU kernel "
                             "(RandpermExt); ops.shuffle(ops.arange(n)) draws from the global seed",
    "mindspore.ops.masked_fill": "torch.masked_fill (FUN001): mint has no masked_fill; the unmarked "
                                 "Tensor.masked_fill would need the call rewritten as a method",
    "mindspore.ops.slice_scatter": "torch.slice_scatter: mint has none; the unmarked Tensor.slice_scatter "
                                   "would need the call rewritten as a method",
    "mindspore.ops.is_tensor": "torch.is_tensor: mindspore.is_tensor is marked too; isinstance(x, "
                               "mindspore.Tensor) needs a handler",
    "mindspore.nn.LRN": "torch.nn.LocalResponseNorm (LYR007): ops.lrn is marked too, mint has none",
    "mindspore.nn.BiDense": "torch.nn.Bilinear: no other bilinear layer in 2.10 (mint.nn has none)",
    "mindspore.ops.assign": "how ported loops, schedulers and checkpoints write Parameters the optimizer "
                            "reads (SCH, TRN, CKP rules); a replacement needs those rules re-verified",
    "mindspore.ops.clip_by_global_norm": "gradient clipping (TRN002): ops.clip_by_norm is marked too",
    "mindspore.ops.clip_by_value": "gradient clipping (TRN002) on the whole gradient tuple; ops.clamp "
                                   "takes one tensor",
    "mindspore.ops.invert": "Tensor.bitwise_not(_) (API002/API003): the unmarked Tensor.bitwise_not and "
                            "mint.bitwise_not have no CPU kernel in 2.10 (\"The kernel BitwiseNot "
                            "unregistered\")",
    "mindspore.ops.index_fill": "Tensor.index_fill (TNS012): the unmarked Tensor.index_fill runs the same "
                                "kernel, which needs the int32 index the function form is given; a "
                                "method rewrite is open work",
    "mindspore.ops.random_gamma": "the distributions written out in the cell (DST006: Gamma, Beta, Chi2, "
                                  "Dirichlet, StudentT...) draw through it: ops.gamma is marked too and "
                                  "the mark names no replacement (\"use None\")",
    "mindspore.ops.random_poisson": "Poisson and NegativeBinomial draws (DST006): the mark names no "
                                    "replacement (\"use None\"); parity replays PyTorch's draws",
    "mindspore.ops.standard_normal": "the written-out distributions' normal draws (DST006); a move to "
                                     "ops.randn is open work",
    "mindspore.ops.bessel_k0": "torch.special.modified_bessel_k0 (LNA001): no other modified Bessel K in 2.10 "
                               "(mint.special has none)",
    "mindspore.ops.bessel_k1": "torch.special.modified_bessel_k1 (LNA001): as bessel_k0",
    "mindspore.ops.bessel_k0e": "torch.special.scaled_modified_bessel_k0 (LNA001): as bessel_k0",
    "mindspore.ops.bessel_k1e": "torch.special.scaled_modified_bessel_k1 (LNA001): as bessel_k0",
    # a format of it is deprecated, not the API
    "mindspore.export": "torch.onnx.export (UTL008): only its AIR file format is deprecated; the port "
                        "writes ONNX",
}

#: Name in MindSpore's message -> the API the port writes that triggers it, and why it stays.
INTERNAL = {
    "UniformReal": "used inside ops.rand, ops.rand_like, ops.multinomial, ops.rrelu, fractional_max_pool2d and "
                   "Distribution.sample; every uniform sampler that runs on CPU in 2.10 uses it "
                   "(mint.rand and Tensor.uniform_ have no CPU kernel)",
    "UniformInt": "used inside ops.randint (see KNOWN_TARGETS)",
    "ops.randint": "torch.randint's port (see KNOWN_TARGETS)",
    "ops.rand_like": "torch.rand_like's port (see KNOWN_TARGETS)",
    "ops.randint_like": "torch.randint_like's port (see KNOWN_TARGETS)",
    "Eps": "constructed by MindSpore's own module-level code when mindspore.nn.probability "
           "(Bernoulli, Categorical...) or ops.pinv first loads mindspore.scipy",
    "MatrixSetDiagV3": "used inside ops.diag_embed and ops.diagonal_scatter (no mint counterpart)",
    "ScalarCast": "used inside ops.addmv for some scalar arguments (mint.addmv has no CPU kernel)",
    "ApplyAdagradV2": "used inside mindspore.experimental.optim.Adagrad, PyTorch's Adagrad port",
    "getName()": "Python's threading API, called by mindspore.train.serialization's checkpoint thread "
                 "(a DeprecationWarning Python hides outside __main__)",
}

_NAMED = re.compile(r"'?([\w.]+(?:\(\))?)'? is deprecated")


def internal_name(message: str) -> Optional[str]:
    """The ``INTERNAL`` name a deprecation message is about, or None."""
    m = _NAMED.search(message)
    return m.group(1) if m and m.group(1) in INTERNAL else None


class _Collect(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.names: list = []

    def filter(self, record: logging.LogRecord) -> bool:
        name = internal_name(record.getMessage())
        if name is None:
            return True
        if name not in self.names:
            self.names.append(name)
        return False


@contextlib.contextmanager
def internal_warnings() -> Iterator[list]:
    """While active, MindSpore's deprecation messages about its own internals
    (``INTERNAL``) are not logged; the list yielded collects their names, in order, for
    a note. Every other message, deprecation or not, passes."""
    from mindspore import log as ms_log

    logger = ms_log._get_logger()
    collect = _Collect()
    logger.addFilter(collect)
    try:
        yield collect.names
    finally:
        logger.removeFilter(collect)
