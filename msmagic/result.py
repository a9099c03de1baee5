"""What a port returns: the MindSpore code plus the edit log.

The edit log is the contract between the engine and everything that reads it (the
renderers, the parity runner, the CLI). Nothing here knows about individual rules; a
rule is looked up in the registry by id when its text is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional

from msmagic.lines import unified_diff


@dataclass(frozen=True)
class Edit:
    """One rewrite: ``rule_id`` changed input lines ``before`` into output lines ``after``.

    Line ranges are 1-based and inclusive. ``api`` names what was rewritten
    (``torch.nn.Linear``, ``Tensor.size``). ``detail`` says what this particular edit
    did when the rule's title alone is not enough ("momentum 0.1 -> 0.9").
    ``statement`` is the index of the top-level input statement the edit sits in.
    ``tags`` carry facts for the runner; ``"random"`` marks a statement that draws
    random numbers, so the runner may copy its result across instead of comparing.
    """

    rule_id: str
    title: str
    before: tuple[int, int]
    after: tuple[int, int]
    api: str = ""
    detail: str = ""
    statement: int = -1
    tags: frozenset = frozenset()


@dataclass(frozen=True)
class Finding:
    """Something msmagic could not port faithfully.

    ``line``/``column`` are 1-based positions in the input cell; ``out_line`` is where
    the ``# msmagic:`` comment sits in the output.
    """

    line: int
    column: int
    api: str
    rule_id: str
    reason: str
    out_line: int = 0
    statement: int = -1

    def __str__(self) -> str:
        return f"{self.line}:{self.column} {self.rule_id} {self.api}: {self.reason}"


@dataclass(frozen=True)
class Statement:
    """What the port knows about top-level input statement ``index``: the plan parity
    runs from (it never parses the cell itself).

    ``before``: its input lines; ``after``: the output lines it became (``None`` when it
    was removed, an import with no MindSpore counterpart; statements msmagic added, such
    as imports, belong to none). ``binds``: names it binds at the top level, on either
    side; ``reads``: names it mentions; ``expression``: it is a lone expression (its
    value is the cell's output when last); ``tags``: ``"random"`` when it draws random
    numbers; ``modules``: for each PyTorch layer it constructs (qualified name), the
    parameter-name map of the layer's mapping entry. ``a = 1; b = 2`` is one statement.
    """

    index: int
    before: tuple[int, int]
    after: Optional[tuple[int, int]]
    binds: tuple = ()
    reads: frozenset = frozenset()
    expression: bool = False
    tags: frozenset = frozenset()
    modules: dict = field(default_factory=dict, compare=False, hash=False)
    loop: Optional["Loop"] = None


@dataclass(frozen=True)
class Loop:
    """A top-level loop, for parity to run both sides iteration by iteration.

    ``kind``: "for" or "while". ``carried``: names the body reads before it binds them
    (``w1 -= lr * grad_w1``, ``hidden = model(x, hidden)``): what one iteration hands the
    next. ``torch_span`` / ``ms_span``: (line, column, end line, end column), columns in
    characters, of the ``for`` loop's iterable or the ``while`` loop's condition in the
    input and in the output. ``lines``: the loop statement's first and last line in the
    input (inside a script's ``if __name__ == "__main__":`` block for its loop);
    ``needs``: the names an iteration reads from outside it (those it mentions and does
    not bind, and the carried ones)."""

    kind: str
    carried: tuple
    torch_span: tuple
    ms_span: tuple
    lines: tuple = ()
    needs: frozenset = frozenset()


@dataclass(frozen=True)
class Revision:
    """A function an earlier cell defined, ported again because this cell's calls showed
    what its parameters are (``kinds``: parameter -> what every call passes).
    ``result`` is the port of its definition; running it defines the function anew."""

    name: str
    kinds: dict
    result: "PortResult"


@dataclass
class PortResult:
    #: which renderers show it (``msmagic.render`` dispatches on this, importing no
    #: result class)
    render_kind: ClassVar[str] = "port"

    source: str
    code: str
    edits: list[Edit] = field(default_factory=list)
    unsupported: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    #: PyTorch layer (qualified name) -> parameter-name map of its mapping entry, for
    #: every layer this cell and the earlier ported cells of its session construct
    module_params: dict = field(default_factory=dict)
    #: functions of earlier cells ported again with what this cell's calls pass
    #: (:class:`Revision`), in the order to run them
    revised: list = field(default_factory=list)
    #: How to show it (``view``, ``quiet``): set by the magic or the CLI for the
    #: renderers; the port itself takes no presentation options.
    options: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.code != self.source

    @property
    def rule_ids(self) -> list[str]:
        """Ids of the rules that changed something or reported a finding, in first-use order."""
        seen: dict[str, None] = {}
        for e in self.edits:
            seen.setdefault(e.rule_id, None)
        for f in self.unsupported:
            seen.setdefault(f.rule_id, None)
        return list(seen)

    def diff(self, context: int = 3) -> str:
        """Unified diff from the PyTorch input to the MindSpore output."""
        return "".join(
            unified_diff(_lines(self.source), _lines(self.code), fromfile="pytorch",
                         tofile="mindspore", n=context)
        )

    def edits_for_output_lines(self, start: int, end: int) -> list[Edit]:
        return [e for e in self.edits if e.after[0] <= end and e.after[1] >= start]

    def edits_for_input_lines(self, start: int, end: int) -> list[Edit]:
        return [e for e in self.edits if e.before[0] <= end and e.before[1] >= start]

    def __repr__(self) -> str:
        return (
            f"<PortResult: {len(self.edits)} edits by {len(self.rule_ids)} rules, "
            f"{len(self.unsupported)} findings>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        from msmagic.render import mimebundle

        return mimebundle(self, include=include, exclude=exclude)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines
