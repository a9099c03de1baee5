"""The rule registry: every rewrite msmagic makes is explained by exactly one rule.

A rule is one object: its id, its explanation (the title says what it does, ``why``
why the frameworks differ, ``example`` a PyTorch snippet whose port is the "after"
half of the docs), and, once the rules package installs it, the mapping entries and
hooks it owns. ``msmagic.rules.ORDER`` lists the rules in their one explicit order; a
rule left out of it has no docs, no mappings and no hooks. ``docs/rules.md`` is
generated from these objects (``msmagic.docs``), so it cannot disagree with the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The versions every rule's executed test ran on. Tests assert the installed versions
#: match, so a rule is never claimed verified on a version it did not run on.
VERIFIED_ON = {"mindspore": "2.10.0", "torch": "2.13.0"}


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    why: str
    seed: str
    example: str
    #: Free-form group label used to order the docs ("Imports", "Layers", ...).
    group: str
    #: Pages of ../shared/reference/mindspore-docs that state the correspondence.
    reference: str = ""
    #: Rules that only ever produce findings (nothing is rewritten) set this.
    finding_only: bool = False
    #: Where the installed MindSpore disagrees with the mapping docs, say so here.
    installed_note: str = ""
    verified_on: dict = field(default_factory=lambda: dict(VERIFIED_ON))
    #: the mapping entries (``engine.spec`` Api/Method/Member/ModuleMap) and hooks this
    #: rule owns, in the order they were declared; filled when the rule is installed
    entries: list = field(default_factory=list, compare=False, repr=False)
    hooks: list = field(default_factory=list, compare=False, repr=False)


#: every rule the rule modules registered, by id
REGISTERED: dict[str, Rule] = {}
#: the installed rules, in ``msmagic.rules.ORDER``
RULES: dict[str, Rule] = {}


def register(
    id: str,
    title: str,
    *,
    why: str,
    seed: str,
    example: str,
    group: str,
    reference: str = "",
    finding_only: bool = False,
    installed_note: str = "",
) -> Rule:
    """Add a rule to the registry; ids are unique."""
    if id in REGISTERED:
        raise ValueError(f"rule {id} registered twice")
    rule = Rule(
        id=id,
        title=title,
        why=_dedent(why),
        seed=seed,
        example=_dedent(example),
        group=group,
        reference=reference,
        finding_only=finding_only,
        installed_note=_dedent(installed_note),
    )
    REGISTERED[id] = rule
    return rule


def get_rule(rule_id: str) -> Rule:
    _load()
    return RULES[rule_id]


def all_rules() -> list[Rule]:
    _load()
    return list(RULES.values())


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n")


def _load() -> None:
    # Importing the rules package installs the rules in ORDER.
    from msmagic import rules  # noqa: F401
