"""Exceptions raised by plugins, kept after the runtime turned them into Error statuses.

A Go plugin reports a failure by returning an Error status; a Python plugin may also raise.
The runtime (``framework/plugincalls.py``) catches what a plugin raises at any extension point,
turns it into that plugin's Error status there, as if the plugin had returned
``Status.as_error("<Type>: <message>")``, and records a ``PluginFailure`` here: which plugin,
where, on which node, and the traceback. The trace says where it happened; the CLI points at
``--debug`` for the traceback, which it prints from these records. This module is separate
from the runtime so that the CLI can collect failures without importing the framework.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

#: How many nodes a note about one failure names before it says "and N more".
MAX_NAMED_NODES = 5


@dataclass(frozen=True)
class PluginFailure:
    """One exception a plugin raised at one extension point (and node)."""

    plugin: str
    #: The extension point or method, as kube-scheduler names it: "Filter", "Score", "AddPod"...
    extension_point: str
    node: str | None
    #: ``"<ExceptionType>: <message>"``: the message of the plugin's Error status.
    exception: str
    traceback: str
    in_tree: bool = False

    @classmethod
    def of(cls, plugin: str, extension_point: str, node: str | None, exc: BaseException, *, in_tree: bool) -> PluginFailure:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(plugin, extension_point, node, exception_message(exc), tb, in_tree)

    @property
    def key(self) -> tuple[str, str, str]:
        """Failures with the same key are one bug met on several nodes."""
        return (self.plugin, self.extension_point, self.exception)


def exception_message(exc: BaseException) -> str:
    """``ValueError: boom``; the type alone when the exception has no message."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def group(failures: list[PluginFailure]) -> list[tuple[PluginFailure, list[str]]]:
    """Distinct failures in the order first met, each with the nodes it happened on."""
    out: dict[tuple[str, str, str], tuple[PluginFailure, list[str]]] = {}
    for f in failures:
        _, nodes = out.setdefault(f.key, (f, []))
        if f.node and f.node not in nodes:
            nodes.append(f.node)
    return list(out.values())


def describe(failure: PluginFailure, nodes: list[str]) -> str:
    """``plugin "X" raised ValueError: boom in Score on node n1``."""
    where = ""
    if nodes:
        named = ", ".join(nodes[:MAX_NAMED_NODES])
        more = f" and {len(nodes) - MAX_NAMED_NODES} more" if len(nodes) > MAX_NAMED_NODES else ""
        where = f" on node{'s' if len(nodes) > 1 else ''} {named}{more}"
    return f'plugin "{failure.plugin}" raised {failure.exception} in {failure.extension_point}{where}'


def notes(failures: list[PluginFailure]) -> list[str]:
    """One sentence per distinct failure, for the trace's notes."""
    return [
        f"{describe(f, nodes)}: the exception became the plugin's Error status there"
        for f, nodes in group(failures)
    ]


_collector: ContextVar[list[PluginFailure] | None] = ContextVar("kschedctl_plugin_failures", default=None)


@contextmanager
def collecting(into: list[PluginFailure]) -> Iterator[list[PluginFailure]]:
    """Every failure recorded while the block runs is also appended to ``into`` (the CLI's view of a command)."""
    token = _collector.set(into)
    try:
        yield into
    finally:
        _collector.reset(token)


def report(failure: PluginFailure) -> None:
    """Hand a failure to the collecting block, if any."""
    sink = _collector.get()
    if sink is not None:
        sink.append(failure)
