"""Reading a default where it lives: the default of a domain dataclass's field.

Front ends (the CLI's options, the dashboard's URL parameters) show the core's defaults and
never type them again: ``field_default(Scenario, "checkpoint_gb")`` is 0.3 because
:class:`~deepvm_core.model.Scenario` says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def field_default(cls: type[Any], name: str) -> Any:
    """The default of the dataclass field ``name`` of ``cls`` (``Scenario``, ``Workload``, ...).

    Raises:
        KeyError: ``cls`` has no such field, or it has no plain default.
    """
    for f in dataclasses.fields(cls):
        if f.name == name and f.default is not dataclasses.MISSING:
            return f.default
    raise KeyError(f"{cls.__name__}.{name} has no default")
