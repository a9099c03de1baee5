"""Hand-written verification cases for APIs PyTorch's test databases do not cover.

``op_db`` and ``module_db`` cover operators and layers. Factories, dtypes, ``nn.init``,
optimizers, schedulers, Tensor conversions and utilities get cases here: a PyTorch
snippet (with its imports) that uses the API. The harness ports it, runs both sides
in lockstep and compares every value the snippet binds (random draws are copied
across and their shapes and dtypes checked, as ``%%ms_parity`` does).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

CASES: dict[str, list["Case"]] = {}


@dataclass(frozen=True)
class Case:
    key: str
    code: str
    dtype: str = "float32"
    positional: int = 0
    keywords: tuple = ()


def case(key: str, code: str, *, dtype: str = "float32") -> None:
    code = textwrap.dedent(code).strip("\n") + "\n"
    positional, keywords = _pattern(key, code)
    CASES.setdefault(key, []).append(Case(key, code, dtype, positional, keywords))


def _pattern(key: str, code: str) -> tuple[int, tuple]:
    """Argument pattern of the first call to ``key`` in the snippet."""
    name = key.rsplit(".", 1)[-1]
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            func = node.func
            last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if last == name:
                pos = len(node.args) + (0 if key.startswith(("Tensor.", "Module.")) else 0)
                return pos, tuple(sorted(k.arg for k in node.keywords if k.arg))
    return 0, ()


# ----------------------------------------------------------------------------- cases
# (added by family below; each case binds the values to compare)
