"""Field errors as apimachinery words them (``util/validation/field/errors.go``): one problem with
the path of its field, its type (Required, Invalid...) and the value, and ``Errors``, the list
every check appends to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kschedctl.kube.goformat import go_quote, render_value

REQUIRED = "Required value"


INVALID = "Invalid value"


DUPLICATE = "Duplicate value"


NOT_SUPPORTED = "Unsupported value"


FORBIDDEN = "Forbidden"


NOT_FOUND = "Not found"


#: Not a ``field.Error``: the JSON decoder refused the value before validation (``body`` is its text alone).
UNDECODABLE = "undecodable"


_NO_VALUE_TYPES = {REQUIRED, FORBIDDEN}


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: a path, an error type, the offending value and a detail."""

    type: str
    field: str
    value: Any = None
    detail: str = ""

    def body(self) -> str:
        if self.type == UNDECODABLE:
            return self.detail
        s = self.type if self.type in _NO_VALUE_TYPES else f"{self.type}: {render_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, "", detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value, "")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, "", detail)


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(go_quote(v) for v in valid)
    return FieldError(NOT_SUPPORTED, path, value, f"supported values: {quoted}" if quoted else "")


def undecodable(path: str, detail: str) -> FieldError:
    return FieldError(UNDECODABLE, path, None, detail)


def aggregate(errors: Iterable[object]) -> str:
    """``utilerrors.NewAggregate(...).Error()`` over already flattened errors.

    Identical messages are shown once; several distinct ones are bracketed and
    comma separated, exactly as Go prints them.
    """
    msgs: list[str] = []
    for e in errors:
        m = str(e)
        if m not in msgs:
            msgs.append(m)
    if not msgs:
        return ""
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


#: One object's problems: appended to as they are found.
Errors = list[FieldError]
