"""JSON Schemas (draft 2020-12) of the two exports, shipped as package data.

* ``recommend.schema.json``: ``deepvm recommend --format json`` and the dashboard's
  recommendation download (:func:`deepvm_core.io.export.recommendation_to_dict`);
* ``plan.schema.json``: ``deepvm plan --format json`` and the dashboard's plan download
  (:func:`deepvm_core.io.plan_json.plan_to_dict`).

Every number's unit is in its description (and new keys carry it in their names).
:func:`load_schema` is the one reader (``importlib.resources``: works from a wheel).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

from deepvm_core.errors import InputError

SCHEMA_NAMES: Final = ("recommend", "plan")


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of export ``name`` (:data:`SCHEMA_NAMES`) as a dict.

    Raises:
        InputError: an unknown name.
    """
    if name not in SCHEMA_NAMES:
        raise InputError("schema", name, f"must be one of {', '.join(SCHEMA_NAMES)}")
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
