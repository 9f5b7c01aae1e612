"""JSON and YAML output of any plain result (a trace, check results, what-if results), and the format switch."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str)


def to_yaml(data: Any) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True))


def emit(
    data: Any,
    fmt: str,
    *,
    table: Callable[[Any], None],
    markdown: Callable[[Any], str] | None = None,
) -> None:
    """Print a plain result in the chosen format: json, yaml, markdown (when offered) or the table."""
    if fmt == "json":
        print(to_json(data))
    elif fmt == "yaml":
        print(to_yaml(data), end="")
    elif fmt == "markdown" and markdown is not None:
        print(markdown(data), end="")
    else:
        table(data)
