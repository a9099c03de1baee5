"""Rule modules. Each module registers its rules (``registry.register``) and the
mapping entries that apply them (``engine.spec``). Every module in this package is
imported here, so adding a rule group is adding a file."""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "registry" and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

# The data table comes last: hand-written entries (with logic) take precedence.
from msmagic import apis as _apis  # noqa: E402
from msmagic.rules import api_table as _api_table  # noqa: E402

_api_table.install(_apis.table())
