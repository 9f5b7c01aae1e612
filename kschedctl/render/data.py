"""JSON and YAML output of any plain result (a trace, a list of check results)."""

from __future__ import annotations

import json
from typing import Any

import yaml

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str)


def to_yaml(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True))
