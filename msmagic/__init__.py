"""msmagic: port PyTorch notebook cells to MindSpore (``%load_ext msmagic``).

``msmagic.port(source)`` rewrites a PyTorch cell and returns a :class:`PortResult` whose
edit log names the rule behind every change. Importing msmagic imports neither torch
nor mindspore; only running ported code does.
"""

from __future__ import annotations

from msmagic.errors import PortError, PortSyntaxError
from msmagic.result import Edit, Finding, PortResult, StatementLink

__version__ = "0.1.0"
__all__ = [
    "port",
    "parity",
    "shadow_namespace",
    "PortResult",
    "Edit",
    "Finding",
    "StatementLink",
    "PortError",
    "PortSyntaxError",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def port(source: str, **options) -> PortResult:
    """Port PyTorch ``source`` to MindSpore; see :func:`msmagic.engine.core.port`.

    Options: ``session`` (a :class:`msmagic.engine.session.PortSession` holding earlier
    cells' imports), ``view`` ("split" or "unified") and ``quiet`` for the renderers.
    Raises :class:`PortSyntaxError` (with ``line``/``column``) when the cell is not Python.
    """
    from msmagic.engine.core import port as _port

    return _port(source, **options)


def parity(source: str, **options):
    """Run a PyTorch cell and its MindSpore port in lockstep and compare them; returns a
    :class:`msmagic.parity_report.ParityReport`. See :func:`msmagic.parity_runner.parity`."""
    from msmagic.parity_runner import parity as _parity

    return _parity(source, **options)


def shadow_namespace() -> dict:
    """The persistent namespace the MindSpore side of ``%%ms_parity`` runs in."""
    from msmagic.parity_runner import shadow_namespace as _shadow

    return _shadow()


def load_ipython_extension(ip):
    from msmagic.magics import load_ipython_extension as _load

    _load(ip)


def unload_ipython_extension(ip):
    from msmagic.magics import unload_ipython_extension as _unload

    _unload(ip)
