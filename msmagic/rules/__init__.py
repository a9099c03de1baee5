"""Rule modules. Each module registers its rules (``registry.register``) and the
mapping entries that apply them (``engine.spec``). Every module in this package is
imported here, so adding a rule group is adding a file."""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "registry" and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
