"""The IPython magics: ``%%ms_port`` ports a PyTorch cell to MindSpore and shows the diff.

Load with ``%load_ext msmagic``. Settings (``%config MsMagic.view = "unified"``, or
``c.MsMagic.view`` in an IPython config file):

* ``MsMagic.view``   -- "split" (PyTorch | MindSpore) or "unified" diff; default split
* ``MsMagic.quiet``  -- show only the ported code; default False
* ``MsMagic.device`` -- CPU, GPU or Ascend, for ``%%ms_parity``; default CPU

This module imports neither the engine nor torch/mindspore; the engine is imported the
first time a cell is ported, so ``%load_ext msmagic`` stays fast.
"""

from __future__ import annotations

import keyword
import re
from html import escape

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Bool, Enum
from traitlets.config.configurable import Configurable

__all__ = ["MsMagic", "load_ipython_extension", "unload_ipython_extension"]

_MAGIC_NAMES = {"cell": ("ms_port",), "line": ()}
_PORT_CELL = re.compile(r"""run_cell_magic\(\s*['"]ms_port['"]""")


@magics_class
class MsMagic(Magics, Configurable):
    """Port PyTorch notebook cells to MindSpore."""

    view = Enum(
        ["split", "unified"],
        default_value="split",
        help="How %%ms_port shows the diff: 'split' (PyTorch and MindSpore side by "
        "side) or 'unified' (one column of -/+ lines).",
    ).tag(config=True)
    quiet = Bool(
        False,
        help="If True, %%ms_port shows only the ported MindSpore code, without the "
        "diff, the rule explanations and the findings.",
    ).tag(config=True)
    device = Enum(
        ["CPU", "GPU", "Ascend"],
        default_value="CPU",
        help="MindSpore device target used by %%ms_parity when it runs ported code.",
    ).tag(config=True)

    def __init__(self, shell=None, **kwargs):
        super().__init__(shell=shell, **kwargs)
        self._session = None
        #: index into In of the next earlier cell the session has not learned yet
        self._learned = 0

    # ------------------------------------------------------------------ session

    def _get_session(self):
        if self._session is None:
            from msmagic.engine.session import PortSession

            self._session = PortSession()
        return self._session

    def _learn_history(self, session) -> None:
        """Teach the session the imports of every earlier cell not learned yet.

        ``In`` holds cells as IPython translated them; a ``%%ms_port`` cell (this one
        included) is a ``run_cell_magic('ms_port', ...)`` call there, and its body is
        learned right after it is ported instead.
        """
        history = self.shell.user_ns.get("In", []) if self.shell is not None else []
        for index in range(self._learned, len(history)):
            source = history[index]
            if isinstance(source, str) and source.strip() and not _PORT_CELL.search(source):
                session.learn(source)
        self._learned = max(self._learned, len(history))

    # ------------------------------------------------------------------ %%ms_port

    @magic_arguments(name="%ms_port")  # the parser's prog: usage reads "%%ms_port"
    @argument("-h", "--help", action="store_true", help="Show this help and do not port.")
    @argument(
        "--insert",
        action="store_true",
        help="Also put the ported MindSpore code into a new cell below.",
    )
    @argument(
        "-o",
        "--output",
        metavar="NAME",
        default=None,
        help="Store the PortResult in the variable NAME "
        "(its .code, .edits, .unsupported and .diff() are the port).",
    )
    @argument(
        "--view",
        choices=["split", "unified"],
        default=None,
        help="Diff layout for this cell: split or unified (default: MsMagic.view).",
    )
    @argument("--quiet", action="store_true", help="Show only the ported code.")
    @cell_magic
    def ms_port(self, line, cell):
        """Port this PyTorch cell to MindSpore and show what changed and why.

        The cell is not run. Each changed hunk names the rule that changed it; click a
        rule badge for the explanation. Anything msmagic could not port faithfully is
        listed as a finding and marked in the code with a ``# msmagic:`` comment.
        """
        args = parse_argstring(self.ms_port, line)
        if args.help:
            print(_help_text(self.ms_port.parser))
            return None
        name = args.output
        if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
            raise UsageError(f"-o/--output needs a Python identifier, not {name!r}")
        view = args.view or self.view
        quiet = bool(args.quiet or self.quiet)

        from msmagic.engine.core import port
        from msmagic.errors import PortSyntaxError

        session = self._get_session()
        self._learn_history(session)
        try:
            result = port(cell, session=session, view=view, quiet=quiet)
        except PortSyntaxError as err:
            raise UsageError(f"line {err.line}, column {err.column}: {err.message}") from None
        except Exception as err:  # a bug in msmagic must not dump a traceback into the notebook
            raise UsageError(
                f"msmagic could not port this cell ({type(err).__name__}: {err}); "
                "this is a bug in msmagic, please report it with the cell"
            ) from None
        result.options["view"] = view
        result.options["quiet"] = quiet
        # Later cells may use the names this cell imported.
        session.learn(cell)

        if name is not None:
            self.shell.user_ns[name] = result
        if args.insert:
            self.shell.set_next_input(result.code, replace=False)

        from IPython.display import display

        if quiet:
            display(
                {
                    "text/plain": result.code,
                    "text/html": f'<pre class="msm-code-pre msm-quiet">{escape(result.code)}</pre>',
                },
                raw=True,
            )
        else:
            display(result)
        return None


def _help_text(parser) -> str:
    text = parser.format_help()
    # magic_arguments writes the usage as a reST literal block ("::"); drop that marker.
    return text[4:].lstrip("\n") if text.startswith("::\n") else text


# ---------------------------------------------------------------------- extension


def _registered(ip):
    registry = getattr(ip.magics_manager, "registry", {})
    found = dict.get(registry, MsMagic.__name__) if isinstance(registry, dict) else None
    return found if isinstance(found, MsMagic) else None


def load_ipython_extension(ip) -> None:
    """Register %%ms_port with the shell; loading twice registers it once."""
    if _registered(ip) is not None:
        return
    ip.register_magics(MsMagic(shell=ip))


def unload_ipython_extension(ip) -> None:
    """Remove %%ms_port (and the MsMagic configurable) from the shell."""
    manager = ip.magics_manager
    instance = _registered(ip)
    for kind, names in _MAGIC_NAMES.items():
        table = manager.magics.get(kind, {})
        for magic_name in names:
            func = table.get(magic_name)
            if func is not None and isinstance(getattr(func, "__self__", None), MsMagic):
                del table[magic_name]
    if instance is not None:
        dict.pop(manager.registry, MsMagic.__name__, None)
        configurables = getattr(ip, "configurables", None)
        if configurables is not None:
            ip.configurables[:] = [c for c in configurables if c is not instance]
