"""The IPython magics: ``%%ms_port`` ports a PyTorch cell to MindSpore and shows the diff;
``%%ms_parity`` runs the cell and its port side by side and compares what they bound;
``%ms_shadow`` shows the persistent MindSpore namespace ``%%ms_parity`` runs in.

Load with ``%load_ext msmagic``. Settings (``%config MsMagic.view = "unified"``, or
``c.MsMagic.view`` in an IPython config file):

* ``MsMagic.view``   -- "split" (PyTorch | MindSpore) or "unified" diff; default split
* ``MsMagic.quiet``  -- show only the ported code; default False
* ``MsMagic.device`` -- CPU, GPU or Ascend, for ``%%ms_parity``; default CPU
* ``MsMagic.strict`` -- ``%%ms_parity`` fails the cell when the port diverges or fails
  (``--strict``, for CI); default False

This module imports neither the engine, the parity runner nor torch/mindspore; they are
imported the first time a cell is ported or compared, so ``%load_ext msmagic`` stays fast.
"""

from __future__ import annotations

import contextlib
import importlib
import keyword
import re
import sys
from html import escape

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Bool, Enum
from traitlets.config.configurable import Configurable

__all__ = ["MsMagic", "ShadowSummary", "load_ipython_extension", "unload_ipython_extension"]

#: every msmagic magic answers both forms: -h gives its help either way, and the form it
#: is not made for says in one line how to use it
_MAGIC_NAMES = {"cell": ("ms_port", "ms_parity", "ms_shadow"), "line": ("ms_port", "ms_parity", "ms_shadow")}
_PORT_CELL = re.compile(r"""run_(?:cell|line)_magic\(\s*['"]ms_(?:port|parity)['"]""")
#: the first line of a cell that calls one of msmagic's cell magics (not "%%ms_port?")
_OWN_CELL_MAGIC = re.compile(r"([ \t]*)%%(ms_port|ms_parity|ms_shadow)(?=\s|$)")
_LINE_END = re.compile(r"\r\n|\r|\n")
_PORT_MAGIC_LINE = re.compile(r"%%ms_(?:port|parity)\b")
#: cell magics that run their body in the user's namespace: ``In`` holds the
#: ``run_cell_magic`` call IPython made of such a cell, and its body is what ran
_RUNS_BODY = ("time", "capture", "prun")
#: cell magics %%ms_parity runs the PyTorch cell under (their line follows %%ms_parity)
_PARITY_WRAPPERS = ("time", "timeit", "prun", "capture")


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
    strict = Bool(
        False,
        help="If True, %%ms_parity fails the cell after the report when a statement "
        "diverges, the MindSpore side raises or a side runs past --timeout (as --strict "
        "does; --no-strict overrides it for one cell), so a notebook run in CI stops there.",
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

    def _live_session(self, session):
        """The session, with the live namespace's objects to type names no earlier port
        typed (see :mod:`msmagic.live`)."""
        from msmagic.live import live_kind

        ns = self.shell.user_ns if self.shell is not None else {}
        session.live = lambda name: live_kind(ns, name)
        return session

    def _learn_history(self, session) -> None:
        """Teach the session the imports of every earlier cell not learned yet.

        ``In`` holds cells as IPython translated them; a ``%%ms_port`` cell (this one
        included) is a ``run_cell_magic('ms_port', ...)`` call there, and its body is
        learned right after it is ported instead. A cell run under ``%%time``,
        ``%%capture`` or ``%%prun`` is a ``run_cell_magic`` call too: its body is what
        ran in the user's namespace, so the body is learned.
        """
        history = self.shell.user_ns.get("In", []) if self.shell is not None else []
        for index in range(self._learned, len(history)):
            source = history[index]
            if not isinstance(source, str) or _PORT_CELL.search(source):
                continue
            source = _cell_body(source)
            if source.strip() and not _PORT_MAGIC_LINE.match(source.lstrip()):
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
    @line_cell_magic
    def ms_port(self, line, cell=None):
        """Port this PyTorch cell to MindSpore and show what changed and why.

        The cell is not run. Each changed hunk names the rule that changed it; click a
        rule badge for the explanation. Anything msmagic could not port faithfully is
        listed as a finding and marked in the code with a ``# msmagic:`` comment.
        """
        args = self._options_or_help(self.ms_port, line, cell, "the PyTorch code to port")
        if args is None:
            return None
        name = args.output
        if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
            raise UsageError(f"-o/--output needs a Python identifier, not {name!r}")
        view = args.view or self.view
        quiet = bool(args.quiet or self.quiet)

        from msmagic.engine.pipeline import port
        from msmagic.errors import PortError, PortSyntaxError

        session = self._live_session(self._get_session())
        self._learn_history(session)
        try:
            result = port(cell, session=session)
        except PortSyntaxError as err:
            raise self._syntax_error(err, cell) from None
        except PortError as err:  # too deep to port; output that would not parse
            raise UsageError(_one_line(str(err))) from None
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

    # ------------------------------------------------------------------ %%ms_parity

    @magic_arguments(name="%ms_parity")  # usage reads "%%ms_parity"
    @argument("-h", "--help", action="store_true", help="Show this help and do not run the cell.")
    @argument(
        "--device",
        choices=["CPU", "GPU", "Ascend"],
        default=None,
        help="MindSpore device target (default: MsMagic.device, which defaults to CPU).",
    )
    @argument(
        "--rtol",
        type=float,
        default=None,
        metavar="FLOAT",
        help="Relative tolerance: a value matches when |Δ| <= atol + rtol*|PyTorch value|, "
        "at least the RMS magnitude of a float tensor (default 1e-5).",
    )
    @argument("--atol", type=float, default=None, metavar="FLOAT",
              help="Absolute tolerance (default 1e-5, what torch.testing allows float32).")
    @argument("--seed", type=int, default=None, metavar="INT", help="Seed both frameworks before running.")
    @argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="Stop a side that runs longer than this and report what ran until then.",
    )
    @argument(
        "--no-sync",
        action="store_true",
        help="Compare everything: do not copy random draws, dropout masks and freshly "
        "initialised parameters from PyTorch to MindSpore (no layer drill-down either).",
    )
    @argument(
        "--no-layers",
        action="store_true",
        help="Do not compare each layer call to find the first divergent layer (faster "
        "on large models).",
    )
    @argument(
        "--against",
        metavar="VAR",
        default=None,
        help="Run the MindSpore code held in the variable VAR (a str, or a PortResult "
        "whose .code is used) instead of the port of this cell.",
    )
    @argument(
        "--strict",
        action="store_true",
        default=None,
        help="Fail the cell after the report when a statement diverges, the MindSpore side "
        "raises or a side runs past --timeout, so a notebook run (CI: nbval, nbclient) "
        "stops there (default: MsMagic.strict, which defaults to False).",
    )
    @argument("--no-strict", dest="strict", action="store_false", default=None,
              help="Report a divergence without failing the cell, even under MsMagic.strict.")
    @argument(
        "-o",
        "--output",
        metavar="NAME",
        default=None,
        help="Store the ParityReport in the variable NAME (.ok, .rows, .first_divergence...).",
    )
    @argument(
        "--view",
        choices=["split", "unified"],
        default=None,
        help="Layout of the port's diff in the report (default: MsMagic.view).",
    )
    @line_cell_magic
    def ms_parity(self, line, cell=None):
        """Run this PyTorch cell and its MindSpore port side by side and compare them.

        The PyTorch cell runs in your namespace like a plain cell; the MindSpore side
        runs in a separate, persistent shadow namespace (see %ms_shadow), so a failure
        there never changes your variables. The report shows one row per compared
        value, the statement where the two sides first diverge with the rules that
        changed it, errors next to the statement that raised them, and the run times.
        A %%time, %%timeit or %%prun line below %%ms_parity is kept in the port and the
        cell runs once on each side; under %%capture NAME the output of the run is
        captured into NAME as the plain cell's would be.

        The cell fails when the plain cell would have: after the report, the exception
        the PyTorch side raised (SystemExit from sys.exit() too) is raised again, and
        Ctrl-C raises KeyboardInterrupt, so a notebook run stops there. A failure on the
        MindSpore side only, and a side stopped by --timeout, are part of the report: the
        cell succeeds, unless --strict (or MsMagic.strict) is on: then a divergence, a
        MindSpore-side error or a timeout fails the cell after the report with a one-line
        UsageError, for CI. --timeout inf means no limit; --seed takes 0 to 2**32 - 1.
        """
        __tracebackhide__ = True  # an error the cell raised is shown from the cell's frames
        args = self._options_or_help(self.ms_parity, line, cell, "the PyTorch code to run")
        if args is None:
            return None
        name = args.output
        if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
            raise UsageError(f"-o/--output needs a Python identifier, not {name!r}")
        against = self._against_value(args.against)
        view = args.view or self.view

        try:
            _parity = importlib.import_module("msmagic.parity_check")
            from msmagic.parity_check.options import OptionError, ParityOptions
        except ImportError as err:
            raise UsageError(f"%%ms_parity is not available: {err}") from None
        try:
            tolerances = {k: v for k, v in (("rtol", args.rtol), ("atol", args.atol)) if v is not None}
            options = ParityOptions.create(
                device=args.device or self.device,
                **tolerances,
                seed=args.seed,
                timeout=args.timeout,
                sync=not args.no_sync,
                layers=not args.no_layers,
                against=against,
            )
        except OptionError as err:
            if err.option == "against":
                raise UsageError(f"--against {args.against}: {err.problem}") from None
            raise UsageError(f"--{err.option.replace('_', '-')} {err.problem}") from None
        from msmagic.errors import PortLimitError, PortOutputError, PortSyntaxError

        device_error = getattr(_parity, "ParityDeviceError", ())
        wrapper, capture, capture_name = self._parity_wrapper(cell)
        session = self._live_session(self._get_session())
        self._learn_history(session)
        try:
            with capture or contextlib.nullcontext() as captured:
                report = _parity.parity(
                    cell,
                    options,
                    user_ns=self.shell.user_ns,
                    shadow=_parity.shadow_namespace(),
                    session=session,
                    # live progress, unless %%capture keeps the cell's output
                    progress="auto" if capture is None else None,
                )
        except PortSyntaxError as err:
            raise self._syntax_error(err, cell) from None
        except (device_error, PortLimitError, PortOutputError) as err:
            raise UsageError(_one_line(str(err))) from None
        except KeyboardInterrupt:
            raise KeyboardInterrupt() from None  # a plain cell fails on Ctrl-C too
        except Exception as err:  # a bug in msmagic must not dump a traceback into the notebook
            raise UsageError(
                f"msmagic could not run the parity check ({type(err).__name__}: "
                f"{_one_line(str(err))}); this is a bug in msmagic, please report it with the cell"
            ) from None
        # later cells may use the names this cell imported (its PyTorch side ran here)
        session.learn(cell)
        if capture_name:
            self.shell.user_ns[capture_name] = captured
        # presentation is the magic's: the report carries it for the renderers
        if isinstance(getattr(report, "options", None), dict):
            report.options["view"] = view

        if name is not None:
            self.shell.user_ns[name] = report

        from IPython.display import display

        display(report)
        if wrapper in ("time", "timeit", "prun"):
            print(f"ms_parity: %%{wrapper} ran the cell once on each side, in lockstep "
                  "(not repeated, not profiled); the report's time line gives each side's time")
        if report.torch_error is not None:
            # the plain cell would have failed: so does this one (Out[] is not shown, a
            # notebook run stops here), with the exception the cell raised
            exc = self._cell_error(report.torch_error)
            if exc is not None:
                raise exc
            return None
        if report.interrupted:
            raise KeyboardInterrupt()  # the report above shows what was compared
        if (self.strict if args.strict is None else args.strict):
            failure = report.strict_failure()
            if failure is not None:  # the report above shows it in full
                raise UsageError(f"%%ms_parity strict check failed: {failure}")
        if capture is not None:
            return None  # a %%capture cell shows nothing of its own
        # what the plain cell would have shown as Out[] (None shows nothing)
        return getattr(report, "value", None)

    def _parity_wrapper(self, cell):
        """The cell magic the PyTorch cell starts with, below ``%%ms_parity``: (its name,
        the capture to run the parity check under and the name to bind it to for
        ``%%capture``), or Nones.
        ``%%time``/``%%timeit``/``%%prun`` lines stay in the cell (the port keeps them,
        neither side runs them); a cell magic whose body IPython does not run as a
        cell of Python in the user's namespace is refused."""
        from msmagic.engine.ipython import cell_magic

        header = cell_magic(cell)
        if header is None:
            return None, None, None
        if header.name not in _PARITY_WRAPPERS:
            raise UsageError(
                f"%%ms_parity cannot run a %%{header.name} cell: only %%"
                + ", %%".join(_PARITY_WRAPPERS) + " may follow %%ms_parity; put %%"
                f"{header.name} on a cell of its own"
            )
        if header.name != "capture":
            return header.name, None, None
        from IPython.utils.capture import capture_output

        try:
            args = _parse_options(self.shell.find_cell_magic("capture"), header.rest)
        except UsageError as err:
            raise UsageError(f"%%capture {header.rest.strip()}: {err}") from None
        capture = capture_output(not args.no_stdout, not args.no_stderr, not args.no_display)
        return header.name, capture, args.output or None

    def _against_value(self, var):
        """The value of the variable named by ``--against VAR`` (None without the
        option); ParityOptions checks that it is MindSpore code."""
        if var is None:
            return None
        ns = self.shell.user_ns
        if var not in ns:
            raise UsageError(f"--against: there is no variable named {var!r}")
        return ns[var]

    def _cell_error(self, err):
        """The PyTorch side's exception, ready to be raised from the magic like a plain
        cell's error: its traceback starts at the cell's own frames (the magic's frame is
        hidden from IPython's traceback). None when the report holds no exception: then
        its readable traceback is printed instead."""
        exc = getattr(err, "exception", None)
        if isinstance(exc, BaseException):
            tb = exc.__traceback__
            for _ in range(_runner_frames(tb)):
                tb = tb.tb_next
            return exc.with_traceback(tb)
        text = getattr(err, "traceback", "") or f"{err.type}: {err.message}"
        print(text.rstrip(), file=sys.stderr)
        return None

    def _options_or_help(self, magic, line, cell, what):
        """The options a cell magic was called with; None when its help was asked for
        (and printed). Called as a line magic (``cell`` is None), or over a cell with
        nothing below the magic's line, it says in one line how it is used; *what* names
        what goes below the magic's line."""
        name = magic.__name__
        if _asks_for_help(line):
            print(_help_text(magic.parser))
            return None
        if cell is None:
            raise UsageError(f"%{name} is a cell magic: put %%{name} (two %) on the first line of a "
                             f"cell, with {what} below it; %{name} -h lists the options")
        args = _parse_options(magic, line)
        if not cell.strip():
            raise UsageError(f"%%{name}: the cell is empty; put {what} below the %%{name} line")
        return args

    def _syntax_error(self, err, cell) -> UsageError:
        """The UsageError for a cell that does not parse: the line and column the editor
        shows, then that line with a caret under the column."""
        from msmagic.errors import source_excerpt

        above, indent, lines = self._body_in_editor(cell)
        text = lines[err.line - 1] if 0 < err.line <= len(lines) else ""
        err = err.moved(above, len(indent) if indent and text.startswith(indent) else 0)
        excerpt = source_excerpt(text, err.column)
        return UsageError(f"line {err.line}, column {err.column}: {err.message}"
                          + (f"\n{excerpt}" if excerpt else ""))

    def _body_in_editor(self, cell):
        """Where *cell*, a magic's body, sits in the cell as the user typed it: (the number
        of lines above it, the indentation IPython took off its lines, its lines as typed).

        The typed cell is the input IPython stored for this run (a kernel stores each cell
        it runs): there, the body follows a %%ms_port or %%ms_parity line, below any blank
        lines and cell magics (%%time) stacked above it. When no stored input holds the
        body (a run not kept in the history), the body follows the magic's line.
        """
        body = _LINE_END.split(cell)
        typed = self._typed_cell()
        if typed:
            lines = _LINE_END.split(typed if typed.endswith(("\n", "\r")) else typed + "\n")
            for i, line in enumerate(lines):
                found = _OWN_CELL_MAGIC.match(line)
                if found is None:
                    continue
                rest = lines[i + 1:]
                for indent in dict.fromkeys((found.group(1), "")):
                    if [l[len(indent):] if l.startswith(indent) else l for l in rest] == body:
                        return i + 1, indent, rest
        return 1, "", body

    def _typed_cell(self):
        """The cell IPython is running as the user typed it, when it keeps it in the history."""
        history = getattr(getattr(self.shell, "history_manager", None), "input_hist_raw", None)
        return history[-1] if history else None

    # ------------------------------------------------------------------ %ms_shadow

    @magic_arguments(name="ms_shadow")  # a line magic: usage reads "%ms_shadow"
    @argument("-h", "--help", action="store_true", help="Show this help.")
    @argument("--clear", action="store_true", help="Empty the shadow namespace.")
    @argument("name", nargs="?", default=None, help="Return the MindSpore value bound to NAME.")
    @line_cell_magic
    def ms_shadow(self, line="", cell=None):
        """The persistent MindSpore shadow namespace of %%ms_parity.

        Without arguments: the names bound there and their types. With NAME: that
        value. With --clear: empty it. Also available as msmagic.shadow_namespace().
        """
        if cell is not None:
            if _asks_for_help(line):
                print(_help_text(self.ms_shadow.parser))
                return None
            raise UsageError("%ms_shadow is a line magic (one %): write %ms_shadow, %ms_shadow NAME or "
                             "%ms_shadow --clear on a line of its own; %ms_shadow -h lists the options")
        args = _parse_options(self.ms_shadow, line)
        if args.help:
            print(_help_text(self.ms_shadow.parser))
            return None
        try:
            shadow = importlib.import_module("msmagic.parity_check").shadow_namespace()
        except ImportError as err:
            raise UsageError(f"%ms_shadow is not available: {err}") from None
        if args.clear:
            if args.name is not None:
                raise UsageError("%ms_shadow: give either NAME or --clear, not both")
            n = len(_visible(shadow))
            kept = {k: shadow[k] for k in ("__builtins__", "__name__") if k in shadow}
            shadow.clear()
            shadow.update(kept)
            print(f"ms_shadow: cleared {n} name{'s' if n != 1 else ''}")
            return None
        if args.name is not None:
            if args.name not in shadow:
                names = ", ".join(_visible(shadow)) or "none"
                raise UsageError(f"%ms_shadow: {args.name!r} is not in the shadow namespace (names: {names})")
            return shadow[args.name]
        return ShadowSummary(shadow)


def _cell_body(source: str) -> str:
    """The cell a history entry ran: the body of ``get_ipython().run_cell_magic('time',
    '', body)`` for the magics that run their body in the user's namespace (nested ones
    too); other entries as they are."""
    if "run_cell_magic" not in source:
        return source
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return source
    call = tree.body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "run_cell_magic"
        and len(call.args) == 3
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)
        and call.args[0].value in _RUNS_BODY
    ):
        return source
    body = call.args[2].value
    # a nested cell magic (``%%time`` above ``%%capture``) is a cell again
    if body.lstrip().startswith("%%"):
        from msmagic.engine.ipython import cell_magic

        header = cell_magic(body)
        if header is not None and header.name in _RUNS_BODY:
            return "\n".join(body.split("\n")[header.index + 1:])
    return body


def _asks_for_help(line: str) -> bool:
    """Whether a magic's line asks for its help: -h or --help anywhere in it, as every
    msmagic magic takes them."""
    return any(word in ("-h", "--help") for word in line.split())


def _give_empty_cells_a_body(lines: list) -> list:
    """A cell that is only ``%%ms_port ...`` (or ``%%ms_parity``, ``%%ms_shadow``) gets a
    blank line below it. IPython refuses a cell magic over an empty cell before the magic
    runs ("the cell body is empty"); with the blank line ``%%ms_port -h`` alone in a cell
    shows the help, and ``%%ms_port`` alone says what to put below it."""
    if len(lines) == 1 and lines[0].startswith("%%") and _OWN_CELL_MAGIC.match(lines[0]):
        return [lines[0] if lines[0].endswith("\n") else lines[0] + "\n", "\n"]
    return lines


# skipped when IPython checks whether typed input is complete: a terminal keeps waiting for
# the lines below a %%ms_port line
_give_empty_cells_a_body.has_side_effects = True


def _parse_options(magic, line: str):
    """The magic's options from its line; a one-line UsageError for a line that cannot
    be split into words (an unclosed quote) as for any other bad option."""
    try:
        return parse_argstring(magic, line)
    except ValueError as err:  # shlex: "No closing quotation", "No escaped character"
        raise UsageError(f"cannot read the options {line.strip()!r}: {_one_line(str(err)).lower()}") from None


def _help_text(parser) -> str:
    text = parser.format_help()
    # magic_arguments writes the usage as a reST literal block ("::"); drop that marker.
    return text[4:].lstrip("\n") if text.startswith("::\n") else text


class ShadowSummary:
    """What ``%ms_shadow`` shows: the names in the shadow namespace and their types."""

    def __init__(self, shadow: dict) -> None:
        self.names = {k: _type_name(v) for k, v in _visible(shadow).items()}

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name) -> bool:
        return name in self.names

    def __repr__(self) -> str:
        if not self.names:
            return "MindSpore shadow namespace: empty"
        width = max(len(k) for k in self.names)
        lines = [f"MindSpore shadow namespace: {len(self.names)} name{'s' if len(self.names) != 1 else ''}"]
        lines += [f"  {k.ljust(width)}  {t}" for k, t in self.names.items()]
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        if not self.names:
            return '<div class="msm-shadow">MindSpore shadow namespace: empty</div>'
        rows = "".join(
            f"<tr><td><code>{escape(k)}</code></td><td><code>{escape(t)}</code></td></tr>"
            for k, t in self.names.items()
        )
        return (
            f'<div class="msm-shadow"><div>MindSpore shadow namespace: {len(self.names)} '
            f"name{'s' if len(self.names) != 1 else ''}</div>"
            f"<table><thead><tr><th>Name</th><th>Type</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )


def _visible(ns: dict) -> dict:
    return {k: v for k, v in ns.items() if not (k.startswith("__") and k.endswith("__"))}


def _type_name(value) -> str:
    cls = type(value)
    mod = cls.__module__
    return cls.__qualname__ if mod in ("builtins", "abc") else f"{mod}.{cls.__qualname__}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _runner_frames(tb) -> int:
    """How many leading traceback frames belong to msmagic's runner, not the cell.

    The runner compiles each statement under a ``<...>`` pseudo file name; the frames
    before the first such frame are msmagic's own and are not shown.
    """
    n = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<"):
            return n
        n += 1
        tb = tb.tb_next
    return 0


# ---------------------------------------------------------------------- extension


def _registered(ip):
    registry = getattr(ip.magics_manager, "registry", {})
    found = dict.get(registry, MsMagic.__name__) if isinstance(registry, dict) else None
    return found if isinstance(found, MsMagic) else None


def load_ipython_extension(ip) -> None:
    """Register %%ms_port, %%ms_parity and %ms_shadow with the shell; loading twice
    registers them once."""
    if _registered(ip) is not None:
        return
    ip.register_magics(MsMagic(shell=ip))
    if _give_empty_cells_a_body not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(_give_empty_cells_a_body)
    from msmagic.signals import cell_started, restore_after_cell

    # Ctrl-C stays a KeyboardInterrupt during and after a cell that runs MindSpore
    if cell_started not in ip.events.callbacks["pre_run_cell"]:
        ip.events.register("pre_run_cell", cell_started)
    if restore_after_cell not in ip.events.callbacks["post_run_cell"]:
        ip.events.register("post_run_cell", restore_after_cell)


def unload_ipython_extension(ip) -> None:
    """Remove msmagic's magics (and the MsMagic configurable) from the shell."""
    from msmagic.signals import cell_started, restore_after_cell

    if cell_started in ip.events.callbacks["pre_run_cell"]:
        ip.events.unregister("pre_run_cell", cell_started)
    if restore_after_cell in ip.events.callbacks["post_run_cell"]:
        ip.events.unregister("post_run_cell", restore_after_cell)
    while _give_empty_cells_a_body in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(_give_empty_cells_a_body)
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
