"""The row statuses of a parity report, at the import path scripts written against
msmagic 0.1 use (``from msmagic.lockstep import MATCH, ONLY_MS``; the real-world
acceptance runner in ``../shared/realworld`` is one). The parity check itself lives in
:mod:`msmagic.parity_check`; this module only names its statuses."""

from msmagic.parity_check.compare import DIFFERS, MATCH, NOT_COMPARABLE, ONLY_MS, ONLY_TORCH

__all__ = ["MATCH", "DIFFERS", "ONLY_TORCH", "ONLY_MS", "NOT_COMPARABLE"]
