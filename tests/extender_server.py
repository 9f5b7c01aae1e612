"""A small scheduler-extender HTTP server for the tests, on 127.0.0.1 with a free port.

Two ways to say what it answers:

* ``ExtenderServer(handlers)``: each verb (the last path segment) maps to a handler that
  gets the decoded JSON body and returns ``(status, body)``; a ``bytes`` body is sent as
  is, anything else as JSON;
* ``ExtenderServer.from_spec(spec)``: a scenario's ``extender.json`` (the format of the
  shared extender corpus): per extender, which nodes its filter rejects (``reject``) or
  rejects as unresolvable (``unresolvable``) with what message, what its prioritize verb
  scores each node (0 when not listed), and an optional simulated failure (``error``:
  ``filter`` answers 200 with ``Error`` set, ``filter-http`` answers HTTP 500 to filter,
  ``prioritize`` answers HTTP 500 to prioritize). ``{"byPath": {"/ext-a": {...}}}`` holds
  one such description per urlPrefix path. The verb's name decides what it is: one
  containing ``filter``, ``priorit``, ``preempt`` or ``bind``.

Every request is kept in ``requests`` so tests can assert on what kschedctl sent.
The server runs in a daemon thread and is shut down when the ``with`` block ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Handler = Callable[[Any], tuple[int, Any]]
#: (urlPrefix path, verb, decoded body) -> (HTTP status, body)
Router = Callable[[str, str, Any], tuple[int, Any]]

#: The message a spec's ``error: filter`` extender puts in ``ExtenderFilterResult.Error``.
SPEC_FILTER_ERROR = "simulated filter failure (extender_server)"


class ExtenderServer:
    def __init__(self, handlers: dict[str, Handler] | None = None, *, router: Router | None = None) -> None:
        self.handlers = handlers or {}
        self.router = router
        self.requests: list[tuple[str, Any]] = []
        server = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                path = self.path.split("?", 1)[0].rstrip("/")
                prefix, _, verb = path.rpartition("/")
                server.requests.append((self.path, body))
                status, answer = server._answer(prefix, verb, body)
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> ExtenderServer:
        """A server answering as a scenario's ``extender.json`` describes."""
        return cls(router=SpecRouter(spec))

    def _answer(self, prefix: str, verb: str, body: Any) -> tuple[int, Any]:
        if self.router is not None:
            return self.router(prefix, verb, body)
        handler = self.handlers.get(verb)
        return (404, {"error": "no such verb"}) if handler is None else handler(body)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/scheduler"

    def verbs(self) -> list[str]:
        return [path.rsplit("/", 1)[-1] for path, _ in self.requests]

    def __enter__(self) -> ExtenderServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class SpecRouter:
    """Answers the extender protocol from an ``extender.json`` description."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def describe(self, prefix: str) -> dict[str, Any]:
        """The description of the extender served at this urlPrefix path."""
        by_path = self.spec.get("byPath")
        if not isinstance(by_path, dict):
            return self.spec
        want = "/" + prefix.strip("/")
        for path, desc in by_path.items():
            if "/" + str(path).strip("/") == want:
                return dict(desc)
        return dict(by_path.get("*") or {})

    def __call__(self, prefix: str, verb: str, body: Any) -> tuple[int, Any]:
        desc = self.describe(prefix)
        kind = verb.lower()
        args = body if isinstance(body, dict) else {}
        if "filter" in kind:
            return self.filter(desc, args)
        if "priorit" in kind:
            return self.prioritize(desc, args)
        if "preempt" in kind:
            return 200, {"NodeNameToMetaVictims": _meta_victims(args)}
        if "bind" in kind:
            return 200, {"Error": ""}
        return 404, {"error": f"no verb {verb}"}

    @staticmethod
    def filter(desc: dict[str, Any], args: dict[str, Any]) -> tuple[int, Any]:
        failure = desc.get("error")
        if failure == "filter-http":
            return 500, {"error": "filter failed"}
        if failure == "filter":
            return 200, {"NodeNames": None, "Nodes": None, "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                         "Error": SPEC_FILTER_ERROR}
        rules = desc.get("filter") or {}
        reject: dict[str, str] = {str(k): str(v) for k, v in (rules.get("reject") or {}).items()}
        unresolvable: dict[str, str] = {str(k): str(v) for k, v in (rules.get("unresolvable") or {}).items()}
        names, items = _sent_nodes(args)
        answer: dict[str, Any] = {
            "FailedNodes": {n: reject[n] for n in names if n in reject and n not in unresolvable},
            "FailedAndUnresolvableNodes": {n: unresolvable[n] for n in names if n in unresolvable},
            "Error": "",
        }
        passing = [n for n in names if n not in reject and n not in unresolvable]
        if items is None:
            answer.update(NodeNames=passing, Nodes=None)
        else:
            keep = set(passing)
            kept = [it for it in items if ((it.get("metadata") or {}).get("name")) in keep]
            answer.update(NodeNames=None, Nodes={"metadata": {}, "items": kept})
        return 200, answer

    @staticmethod
    def prioritize(desc: dict[str, Any], args: dict[str, Any]) -> tuple[int, Any]:
        if desc.get("error") == "prioritize":
            return 500, {"error": "prioritize failed"}
        scores = desc.get("prioritize") or {}
        names, _ = _sent_nodes(args)
        return 200, [{"Host": n, "Score": int(scores.get(n, 0))} for n in names]


def _sent_nodes(args: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]] | None]:
    """Node names of ``ExtenderArgs``, and the Node objects when full ones were sent."""
    if args.get("NodeNames") is not None:
        return [str(n) for n in args["NodeNames"]], None
    items = [it for it in ((args.get("Nodes") or {}).get("items") or []) if isinstance(it, dict)]
    return [str((it.get("metadata") or {}).get("name") or "") for it in items], items


def _meta_victims(args: dict[str, Any]) -> dict[str, Any]:
    """The preemption candidates sent, answered back unchanged as meta victims."""
    if args.get("NodeNameToMetaVictims") is not None:
        return dict(args["NodeNameToMetaVictims"])
    out: dict[str, Any] = {}
    for node, victims in (args.get("NodeNameToVictims") or {}).items():
        victims = victims or {}
        uids = [{"UID": str((p.get("metadata") or {}).get("uid") or "")} for p in victims.get("Pods") or []]
        out[node] = {"Pods": uids, "NumPDBViolations": victims.get("NumPDBViolations", 0)}
    return out
