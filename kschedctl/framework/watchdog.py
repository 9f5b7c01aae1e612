"""A time limit on every call into an out-of-tree plugin: a plugin that never returns cannot hang a command.

kube-scheduler has no such limit (a Go plugin that blocks blocks its scheduler), but kschedctl runs
plugins it did not write, in a CLI or in CI, where a hung process is worse than a failed one. So
each out-of-tree plugin object is wrapped, when the registry's factory builds it, in a proxy
(``WatchedPlugin``) that runs each method call on the plugin's own worker thread and waits at most
``settings.timeout`` seconds (``--plugin-timeout``; 0: no limit). A call that does not return in
time raises ``PluginTimeout`` in the caller, which the runtime turns into that plugin's Error
status like any exception a plugin raises; its worker is abandoned (a daemon thread, it never keeps
the process alive) and later calls of that plugin fail at once, naming the call still running.
Ctrl-C while a plugin call runs raises ``PluginInterrupted`` (a ``KeyboardInterrupt``) carrying the
same words, for the CLI to print before it exits 130.

In-tree plugins are never wrapped (they are ours and cannot hang), so the runtime's hot path is
unchanged for them; the framework runtime itself knows nothing of this module.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Seconds an out-of-tree plugin's call may take (``--plugin-timeout``).
DEFAULT_TIMEOUT = 10.0

#: Method -> the extension point (or call) as kube-scheduler names it in its messages.
POINT_OF_METHOD = {
    "pre_enqueue": "PreEnqueue", "less": "QueueSort", "sort_key": "QueueSort", "pre_filter": "PreFilter",
    "pre_filter_extensions": "PreFilterExtensions", "add_pod": "AddPod", "remove_pod": "RemovePod",
    "filter": "Filter", "filter_nodes": "Filter", "post_filter": "PostFilter", "pre_score": "PreScore",
    "score": "Score", "score_nodes": "Score", "score_extensions": "ScoreExtensions",
    "normalize_score": "NormalizeScore", "normalize_scores": "NormalizeScore", "reserve": "Reserve",
    "unreserve": "Unreserve", "permit": "Permit", "pre_bind_pre_flight": "PreBindPreFlight",
    "pre_bind": "PreBind", "bind": "Bind", "post_bind": "PostBind", "sign_pod": "SignPod",
}
#: Methods whose argument at this position is the node (a NodeInfo, or the node's name).
NODE_ARGUMENT = {
    "filter": 2, "score": 2, "add_pod": 3, "remove_pod": 3, "reserve": 2, "unreserve": 2, "permit": 2,
    "pre_bind_pre_flight": 2, "pre_bind": 2, "bind": 2, "post_bind": 2,
}
#: Methods that return an object whose own methods are calls into the plugin too.
RETURNS_EXTENSIONS = ("pre_filter_extensions", "score_extensions")


@dataclass
class Settings:
    """The limit plugins are built with (set once per command line by the CLI)."""

    timeout: float = DEFAULT_TIMEOUT


settings = Settings()


class PluginTimeout(Exception):
    """A plugin call that did not return within the time limit (it becomes the plugin's Error status)."""


class PluginInterrupted(KeyboardInterrupt):
    """Ctrl-C while a plugin call was running: ``str()`` names the plugin, the extension point and the node."""


def describe_call(plugin: str, method: str, args: tuple[Any, ...]) -> str:
    """``plugin "Hang" did not return from Filter on node "n1"``."""
    point = POINT_OF_METHOD.get(method, method)
    at = NODE_ARGUMENT.get(method)
    node = args[at] if at is not None and at < len(args) else None
    node = node if isinstance(node, str) or node is None else getattr(node, "name", None)
    where = f' on node "{node}"' if node else ""
    return f'plugin "{plugin}" did not return from {point}{where}'


class _Worker:
    """One daemon thread running one plugin's calls, one at a time, in the caller's context."""

    def __init__(self, plugin: str) -> None:
        #: A forked worker process (``kschedctl.parallel``) has no copy of this thread: it starts its own.
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=f"kschedctl-plugin-{plugin}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        _local.worker = self
        while True:
            self.jobs.get()()


_local = threading.local()


class _Watch:
    """The watchdog of one plugin: its worker, and the call that hung it, if one did."""

    def __init__(self, plugin: str, timeout: float) -> None:
        self.plugin = plugin
        self.timeout = timeout
        self.worker: _Worker | None = None
        self.hung: str | None = None

    def call(self, method: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if getattr(_local, "worker", None) is not None:
            return fn(*args, **kwargs)  # a call the plugin makes through the handle: its caller's limit holds
        if self.hung is not None:
            call = describe_call(self.plugin, method, args)
            if self.hung.startswith(call + " within"):  # the same call again (a diagnosis re-running Filter)
                raise PluginTimeout(self.hung)
            call = call.replace("did not return from", "was not called for", 1)
            raise PluginTimeout(f"{call}: {self.hung} and is still running")
        if self.worker is None or self.worker.pid != os.getpid():
            self.worker = _Worker(self.plugin)
        done = threading.Event()
        box: list[Any] = []
        context = contextvars.copy_context()

        def job() -> None:
            try:
                box.append((True, context.run(fn, *args, **kwargs)))
            except BaseException as e:  # handed back to the caller as raised
                box.append((False, e))
            finally:
                done.set()

        return self._run(self.worker, job, done, box, describe_call(self.plugin, method, args))

    def _run(self, worker: _Worker, job: Callable[[], None], done: threading.Event, box: list[Any], what: str) -> Any:
        """Hand ``job`` to the worker and wait for it; a Ctrl-C from the moment the job is handed over
        is reported as interrupting the call."""
        start = time.monotonic()
        try:
            worker.jobs.put(job)
            finished = done.wait(self.timeout)
        except KeyboardInterrupt:
            raise PluginInterrupted(f"{what} (interrupted after {time.monotonic() - start:.1f}s)") from None
        if not finished:
            self.hung, self.worker = f"{what} within {self.timeout:g}s (--plugin-timeout)", None
            raise PluginTimeout(self.hung)
        ok, value = box[0]
        if not ok:
            raise value
        return value


class WatchedPlugin:
    """An out-of-tree plugin seen through its watchdog: the same attributes, each method call time-limited."""

    def __init__(self, plugin: Any, watch: _Watch) -> None:
        self.__wrapped__ = plugin
        self._watch = watch

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and the like: never forwarded (nor looked up before __init__)
            raise AttributeError(attr)
        value = getattr(self.__wrapped__, attr)
        if not callable(value) or isinstance(value, type):
            return value
        watch = self._watch

        def call(*args: Any, **kwargs: Any) -> Any:
            result = watch.call(attr, value, args, kwargs)
            if attr in RETURNS_EXTENSIONS and result is not None:
                return WatchedPlugin(result, watch)
            return result

        return call

    def __repr__(self) -> str:
        return f"WatchedPlugin({self.__wrapped__!r}, timeout={self._watch.timeout:g}s)"


def watched(plugin: Any, name: str, timeout: float | None = None) -> Any:
    """``plugin`` behind a watchdog of ``timeout`` seconds (``settings.timeout`` when None); as is with 0."""
    limit = settings.timeout if timeout is None else timeout
    if not limit or limit <= 0:
        return plugin
    return WatchedPlugin(plugin, _Watch(name, limit))


def unwrapped(plugin: Any) -> Any:
    """The plugin object itself, behind any watchdog."""
    return getattr(plugin, "__wrapped__", plugin) if isinstance(plugin, WatchedPlugin) else plugin
