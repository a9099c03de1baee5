"""The rules, in their one explicit order.

Each rule module registers its rules (``registry.register``) and declares the mapping
entries and hooks that apply them (``engine.spec``). ``ORDER`` below is the only list of
rules: :func:`install` gives each rule listed there its entries and hooks and puts them
in the engine's tables in this order (hooks run in it; an API one rule maps cannot be
mapped by another); the docs list the rules in it. A rule left out of ``ORDER`` has no
docs, no mappings and no hooks. The API table (``msmagic.apis``, data) comes last:
hand-written entries, which carry logic, take precedence over it.
"""

from msmagic import apis as _apis
from msmagic.engine import spec as _spec
from msmagic.rules import registry as _registry
from msmagic.rules import (  # noqa: F401  (each module registers its rules)
    attention, autograd, axes, batchnorm, cells, checkpoints, custom_function, data, data_loading, device, distributed, distributions, distribution_families, dropout, ecosystem, embedding_and_norm, functional, generic, hand_written_layers, imports, indexing, init, layers, linalg, misc, more_layers, nn_formulas, nograd, optim, padding_and_resizing, precision, random, recompute, recurrent, schedulers, table_fixes, tensor_methods, tensor_more, torch_functions, training, utilities, api_table,
)

ORDER = (
    # attention
    "ATN001", "ATN002", "ATN003", "ATN004",
    # autograd
    "GRD001", "GRD002", "GRD003", "GRD004", "GRD005", "GRD006", "GRD007",
    # hand-written layers: after autograd (whose statement hooks may replace a line
    # first), before the training step that differentiates their Parameters
    "HWL001", "HWL002", "HWL003",
    # axes
    "AXS001", "AXS002", "AXS003", "AXS004", "AXS005", "AXS006",
    # batchnorm
    "BNM001", "BNM002", "BNM003", "BNM004", "BNM005",
    # cells
    "CEL001", "CEL002", "CEL003", "CEL004", "CEL005", "CEL006", "MOD001", "MOD002", "MOD003", "MOD004",
    # checkpoints
    "CKP001", "CKP002", "CKP003", "CKP004", "CKP005", "CKP006",
    # custom_function
    "FNC001", "FNC002",
    # data
    "DAT001", "DAT002", "DAT003", "DAT004", "DAT005", "DAT006", "DAT007",
    # data_loading
    "LDR001", "LDR002", "LDR003", "LDR004", "LDR005", "LDR008", "LDR009", "LDR010",
    # device
    "DEV001", "DEV002", "DEV003", "DEV004", "DEV005", "DEV006", "DEV007", "DEV008",
    # distributed
    "DDP001", "DDP002", "DDP003", "DDP004",
    # distributions
    "DST001", "DST002", "DST003", "DST004", "DST005", "DST006", "DST007",
    # dropout
    "DRP001", "DRP002", "DRP003",
    # ecosystem
    "ECO001", "ECO002", "ECO003", "ECO004",
    # embedding_and_norm
    "EMB001", "EMB002", "NRM001", "NRM002",
    # functional
    "FUN001", "FUN002", "FUN003", "FUN004", "FUN005", "FUN006", "FUN007", "FUN008", "FUN009", "FUN010", "FUN011", "FUN012", "FUN013", "FUN014", "FUN015", "FUN016", "FUN017", "FUN018", "FUN019", "FUN020",
    # generic
    "GEN001", "GEN002", "GEN003", "GEN004", "GEN005",
    # imports
    "IMP001",
    # indexing
    "IDX001", "IDX002", "IDX003", "IDX004", "IDX005", "IDX006", "IDX007", "IDX008", "IDX009", "IDX010", "IDX011",
    # init
    "INI001", "INI002", "INI003", "INI004", "INI005", "INI006",
    # layers
    "LAY001", "LAY002", "LAY003", "LAY004", "LAY005", "LAY006", "LAY007", "LAY008",
    # more_layers
    "LYR001", "LYR002", "LYR003", "LYR004", "LYR005", "LYR006", "LYR007", "LYR008", "LYR009", "LYR010",
    # nn_formulas
    "NNF001", "NNF002", "NNF003", "NNF004", "NNF005",
    # nograd
    "NGR001", "NGR002", "NGR003",
    # optim
    "OPT001", "OPT002", "OPT003", "OPT004", "OPT005", "OPT006", "OPT007", "OPT008", "OPT009", "OPT010", "OPT011",
    # padding_and_resizing
    "PAD001", "PAD002", "PAD003", "PAD004",
    # precision
    "PRC001", "PRC002",
    # misc (signal windows, torch.testing, cpu_count)
    "MSC001", "MSC002", "MSC003", "MSC004",
    # random
    "RNG001", "RNG002", "RNG003", "RNG004",
    # recompute (gradient checkpointing)
    "RCP001",
    # recurrent
    "RNN001", "RNN002", "RNN003", "RNN004", "RNN005", "RNN006",
    # schedulers
    "SCH001", "SCH002", "SCH003", "SCH004", "SCH005", "SCH006", "SCH007", "SCH008", "SCH009", "SCH010", "SCH011", "SCH012", "SCH013",
    # linalg
    "LNA001", "LNA002", "LNA003", "LNA004",
    # table_fixes
    "TBL001", "TBL002", "TBL003",
    # tensor_methods
    "TNS001", "TNS002", "TNS003", "TNS004", "TNS005", "TNS006", "TNS007", "TNS008", "TNS009",
    # torch_functions
    "TFN001", "TFN002", "TFN003", "TFN004", "TFN005",
    # tensor_more
    "TNS010", "TNS011", "TNS012", "TNS013", "TNS014", "TNS015", "TNS016", "TNS017", "TNS018", "TNS019", "TNS020",
    # training
    "TRN001", "TRN002", "TRN003", "TRN004", "TRN005", "TRN006", "TRN007", "TRN008",
    # utilities
    "UTL001", "UTL002", "UTL003", "UTL004", "UTL005", "UTL006", "UTL007", "UTL008", "UTL009",
    # api_table
    "API001", "API002", "API003", "API004", "API005", "API006", "API007", "API008",
)


def install(order=ORDER) -> None:
    """Install the rules listed in ``order``: each gets its declared entries and hooks,
    and the engine's tables are filled in rule order (then the API table's entries)."""
    position = {rule_id: i for i, rule_id in enumerate(order)}
    unknown = [r for r in order if r not in _registry.REGISTERED]
    if unknown:
        raise ValueError(f"ORDER names rules nobody registered: {', '.join(unknown)}")
    owned = [item for item in _spec.DECLARED if item.rule in position]
    owned.sort(key=lambda item: position[item.rule])  # stable: declaration order within a rule
    table = [item for item in api_table.table_entries(_apis.table()) if item.rule in position]
    _registry.RULES.clear()
    for rule_id in order:
        rule = _registry.REGISTERED[rule_id]
        rule.entries.clear()
        rule.hooks.clear()
        _registry.RULES[rule_id] = rule
    for item in owned + table:
        rule = _registry.RULES[item.rule]
        (rule.hooks if isinstance(item, _spec.Hook) else rule.entries).append(item)
    _spec.install(owned + table)


install()
