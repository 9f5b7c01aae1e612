"""A small scheduler-extender HTTP server for the tests, on 127.0.0.1 with a free port.

Each verb (the last path segment) maps to a handler that gets the decoded JSON body
and returns ``(status, body)``; a ``bytes`` body is sent as is, anything else as JSON.
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


class ExtenderServer:
    def __init__(self, handlers: dict[str, Handler]) -> None:
        self.handlers = handlers
        self.requests: list[tuple[str, Any]] = []
        server = self

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                server.requests.append((self.path, body))
                handler = server.handlers.get(verb)
                status, answer = (404, {"error": "no such verb"}) if handler is None else handler(body)
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
