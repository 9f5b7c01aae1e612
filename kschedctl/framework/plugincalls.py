"""Calling one plugin method: what a plugin raises, or returns of the wrong type, becomes its Error status.

Every plugin method the runtime runs goes through ``PluginCalls.call``: an exception a plugin
raises (or a result of the wrong type) becomes that plugin's Error status at that extension point,
exactly as if a Go plugin had returned the error, and then takes the path such a status takes
upstream, with upstream's wrapping (``running Score plugins: plugin "X" failed with: ...``). The
exception itself is kept as a ``PluginFailure`` (``framework/failures.py``) for the trace's notes
and for ``--debug``.

The ``check_*`` functions say what a method must return (and pass it on); the ``on_error``
functions give what the caller gets instead when the plugin raised.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kschedctl.framework import failures
from kschedctl.framework.interfaces import Plugin
from kschedctl.framework.status import Code, Status

T = TypeVar("T")


def check_status(result: Any) -> Status:
    if not isinstance(result, Status):
        raise TypeError(f"returned {result!r}, not a Status")
    return result


def check_result_and_status(result: Any) -> Any:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Status)):
        raise TypeError(f"returned {result!r}, not a (result, Status) pair")
    return result


def check_score_and_status(result: Any) -> tuple[int, Status]:
    check_result_and_status(result)
    try:
        return operator.index(result[0]), result[1]
    except TypeError:
        raise TypeError(f"returned the score {result[0]!r}, not an integer") from None


def check_status_and_timeout(result: Any) -> Any:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Status)):
        raise TypeError(f"returned {result!r}, not a (Status, timeout) pair")
    return result


def as_is(result: Any) -> Any:
    return result


@dataclass(frozen=True, slots=True)
class Failed:
    """What ``call`` returns for a method whose result is not a Status when the plugin raised."""

    status: Status


def no_result(st: Status) -> tuple[None, Status]:
    return None, st


def zero_score(st: Status) -> tuple[int, Status]:
    return 0, st


class PluginCalls:
    """The calls of one profile's plugin methods, and the exceptions they raised (``failures``)."""

    def __init__(self, in_tree: frozenset[str]) -> None:
        #: The plugins that come with kschedctl (a failure of theirs is kschedctl's bug).
        self.in_tree = in_tree
        #: Exceptions plugins raised (turned into Error statuses), oldest first; the cycle takes them.
        self.failures: list[failures.PluginFailure] = []

    def call(
        self,
        pl: Plugin,
        point: str,
        node: str | None,
        check: Callable[[Any], T],
        on_error: Callable[[Status], T],
        method: Callable[..., Any],
        *args: Any,
    ) -> T:
        """Call one plugin method; ``check`` validates (and returns) its result. An exception (or a
        result ``check`` rejects) becomes the plugin's Error status, passed to ``on_error``."""
        try:
            return check(method(*args))
        except Exception as e:
            failure = failures.PluginFailure.of(pl.name, point, node, e, in_tree=pl.name in self.in_tree)
            self.failures.append(failure)
            failures.report(failure)
            return on_error(Status(Code.ERROR, failure.exception, plugin=pl.name, error=failure.exception))

    def take_failures(self) -> list[failures.PluginFailure]:
        """The exceptions recorded since the last call (a cycle's), and forget them."""
        out, self.failures = self.failures, []
        return out
