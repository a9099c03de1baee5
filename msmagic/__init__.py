"""msmagic: port PyTorch notebook cells to MindSpore (``%load_ext msmagic``).

``msmagic.port(source)`` rewrites a PyTorch cell and returns a :class:`PortResult` whose
edit log names the rule behind every change. Importing msmagic imports neither torch
nor mindspore; only running ported code does.
"""

from __future__ import annotations

from msmagic.errors import PortError, PortLimitError, PortOutputError, PortSyntaxError
from msmagic.result import Edit, Finding, PortResult, Statement

__version__ = "0.1.0"
__all__ = [
    "port",
    "parity",
    "shadow_namespace",
    "PortResult",
    "Edit",
    "Finding",
    "Statement",
    "PortError",
    "PortSyntaxError",
    "PortLimitError",
    "PortOutputError",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def port(source: str, **options) -> PortResult:
    """Port PyTorch ``source`` to MindSpore; see :func:`msmagic.engine.pipeline.port`.

    ``session``: a :class:`msmagic.engine.session.PortSession` holding what earlier
    cells imported and bound (how the result is shown is the renderers' business).
    Raises :class:`PortSyntaxError` (with ``line``/``column``) when the cell is not Python
    (what CPython rejects), :class:`PortLimitError` when valid input is beyond what the port
    can handle (memory), and :class:`PortOutputError` instead of returning code that does
    not parse (a bug in msmagic).
    """
    from msmagic.engine.pipeline import port as _port

    return _port(source, **options)


def parity(source: str, options=None, **values):
    """Run a PyTorch cell and its MindSpore port in lockstep and compare them; returns a
    :class:`~msmagic.parity_check.report.ParityReport`. See
    :func:`msmagic.parity_check.parity`."""
    from msmagic.parity_check import parity as _parity

    return _parity(source, options, **values)


def shadow_namespace() -> dict:
    """The persistent namespace the MindSpore side of ``%%ms_parity`` runs in."""
    from msmagic.parity_check.run import shadow_namespace as _shadow

    return _shadow()


def load_ipython_extension(ip):
    from msmagic.magics import load_ipython_extension as _load

    _load(ip)


def unload_ipython_extension(ip):
    from msmagic.magics import unload_ipython_extension as _unload

    _unload(ip)
