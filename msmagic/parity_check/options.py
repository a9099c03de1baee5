"""The options of a parity run: one validated object shared by the ``%%ms_parity`` magic,
the Python API (``msmagic.parity(source, **options)``) and :func:`run_pair`.

Every value is checked here, once, in :meth:`ParityOptions.__post_init__`; a bad value
raises :class:`OptionError`, a ``ValueError`` with a one-line message naming the option
(``rtol must be a number >= 0, not -1.0``), which the magic shows as a UsageError
(``--rtol must be ...``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Optional

#: the tolerance ``%%ms_parity`` judges values at (``--rtol``/``--atol``); ``make verify-apis``
#: verifies every mapping at the same tolerance, so a verified entry is one parity will not
#: report as differing
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-5

__all__ = ["ParityOptions", "OptionError", "DEVICES", "MAX_SEED", "MAX_TIMEOUT"]

DEVICES = ("CPU", "GPU", "Ascend")
#: the largest seed: NumPy's legacy seeding and ``mindspore.set_seed`` take 0 .. 2**32 - 1
MAX_SEED = 2**32 - 1
#: the longest finite time limit in seconds (about 31 years; the interval timer behind
#: ``timeout`` cannot be set much further ahead); ``inf`` means no limit
MAX_TIMEOUT = 1e9


class OptionError(ValueError):
    """A bad option value: ``option`` (its name) ``problem`` (what is wrong), one line."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = " ".join(problem.split())
        super().__init__(f"{option} {self.problem}")


@dataclass(frozen=True)
class ParityOptions:
    """How parity runs.

    ``device``: CPU, GPU or Ascend (None: CPU). ``rtol``/``atol``: a value matches when
    ``|Δ| <= atol + rtol * |PyTorch value|`` (atol 1e-5 is what
    ``torch.testing.assert_close`` allows float32 values), where for an element of a
    floating-point tensor ``|PyTorch value|`` is at least the tensor's RMS magnitude (the
    rounding error of a sum of products scales with what was summed). ``seed``: seed Python, NumPy,
    PyTorch and MindSpore first: an integer from 0 to 2**32 - 1, the range NumPy and
    MindSpore accept. ``timeout``: seconds each side may run, more than 0 and at most
    :data:`MAX_TIMEOUT`; ``math.inf`` (``--timeout inf``) means no limit and is kept as
    None. ``sync``: take from PyTorch what is
    not to be compared: random draws (replayed in order inside loops and functions),
    freshly initialised parameters, shuffle orders, and the gradients each optimizer step
    applies (after comparing them); dropout masks are PyTorch's. ``against``: explicit MindSpore
    code to run instead of the port (a str, or anything with a str ``.code`` such as a
    PortResult; kept as the code). ``layers``: compare every layer call of the
    statements that call modules, to name the first layer whose output differs
    (:mod:`~msmagic.parity_check.layers`; needs ``sync``).
    """

    device: Optional[str] = "CPU"
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    seed: Optional[int] = None
    timeout: Optional[float] = None
    sync: bool = True
    against: Optional[str] = None
    layers: bool = True

    def __post_init__(self) -> None:
        def put(name, value):
            object.__setattr__(self, name, value)

        device = "CPU" if self.device is None else self.device
        if device not in DEVICES:
            raise OptionError("device", f"must be one of {', '.join(DEVICES)}, not {device!r}")
        put("device", device)
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not _real(value) or not value >= 0:  # also rejects nan
                raise OptionError(name, f"must be a number >= 0, not {value!r}")
            put(name, float(value))
        if self.seed is not None:
            if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
                raise OptionError("seed", f"must be an integer, not {self.seed!r}")
            if not 0 <= self.seed <= MAX_SEED:
                raise OptionError("seed", f"must be from 0 to {MAX_SEED} (2**32 - 1), not {self.seed!r}")
            put("seed", int(self.seed))
        if self.timeout is not None:
            timeout = self.timeout
            if not _real(timeout) or not timeout > 0:  # also rejects nan
                raise OptionError("timeout", f"must be a positive number of seconds, not {timeout!r}")
            if timeout == math.inf:
                put("timeout", None)
            elif timeout > MAX_TIMEOUT:
                raise OptionError(
                    "timeout", f"must be at most {MAX_TIMEOUT:g} seconds (inf for no limit), not {timeout!r}")
            else:
                put("timeout", float(timeout))
        for name in ("sync", "layers"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(name, f"must be True or False, not {getattr(self, name)!r}")
        if self.against is not None:
            code = self.against if isinstance(self.against, str) else getattr(self.against, "code", None)
            if not isinstance(code, str):
                raise OptionError(
                    "against",
                    "must be MindSpore code, a str or a PortResult (with .code), "
                    f"not {type(self.against).__name__}",
                )
            put("against", code)

    @classmethod
    def create(cls, base: Optional["ParityOptions"] = None, **values) -> "ParityOptions":
        """``base`` (default: the defaults) with ``values`` changed, validated."""
        unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            known = ", ".join(f.name for f in dataclasses.fields(cls))
            raise TypeError(f"unknown parity option {unknown[0]!r}; the options are {known}")
        if base is None:
            return cls(**values)
        if not isinstance(base, cls):
            raise TypeError(f"options must be a ParityOptions, not {type(base).__name__}")
        return dataclasses.replace(base, **values) if values else base


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
