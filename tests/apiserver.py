"""A local HTTP server that answers like the recorded kube-apiserver, for the live-cluster tests.

It serves the JSON answers in tests/recordings/ (recorded from a real
kube-apiserver, see tests/recordings/README.md) at the paths they were recorded
for, so the real ``kubernetes`` client can be pointed at it through an ordinary
kubeconfig. Around the recordings it reproduces what a real server does:

* paging: ``limit=500`` answers with the unpaged recording, ``limit=100`` with
  the recorded pages, following the ``continue`` tokens;
* RBAC: every request is authorized against a ClusterRole (by default the one
  kschedctl ships) and denied with a 403 Status worded as the recorded one;
* a namespaced list is the cluster-wide recording filtered to the namespace;
* modes for the error paths: rejected credentials (401), no answer at all
  until the server is closed (timeouts, with nothing to race), resources the
  server does not serve (404), an expired ``continue`` token (410).

Every request is logged, so tests can assert that kschedctl only ever sent GETs.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

import yaml

ROOT = Path(__file__).parent.parent
RECORDINGS = Path(__file__).parent / "recordings" / "003-medium-30n150p"
CLUSTERROLE = ROOT / "deploy" / "kschedctl-readonly-clusterrole.yaml"
USER = "system:serviceaccount:kube-system:snapshot-reader"


def recording_name(path: str, query: str = "") -> str:
    """The file name a recorded answer is stored under: path with / as _, the query after ``__``."""
    name = path.strip("/").replace("/", "_")
    return f"{name}__{query}.json" if query else f"{name}.json"


EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter."
)


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, str]
    group: str | None  # None for non-resource URLs
    resource: str
    verb: str
    namespace: str | None


def load_rules(path: Path = CLUSTERROLE) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    role = next(d for d in docs if d.get("kind") == "ClusterRole")
    return list(role.get("rules") or [])


def allowed(rules: list[dict[str, Any]], seen: Seen) -> bool:
    """RBAC's rule matching for the subset a ClusterRole uses: groups, resources, verbs, nonResourceURLs."""
    for rule in rules:
        verbs = rule.get("verbs") or []
        if seen.verb not in verbs and "*" not in verbs:
            continue
        if seen.group is None:
            if seen.path in (rule.get("nonResourceURLs") or []):
                return True
            continue
        groups = rule.get("apiGroups")
        resources = rule.get("resources")
        if groups is None or resources is None:
            continue
        if (seen.group in groups or "*" in groups) and (seen.resource in resources or "*" in resources):
            return True
    return False


def classify(method: str, path: str, query: dict[str, str]) -> Seen:
    """Group, resource, namespace and RBAC verb of a request path (the apiserver's RequestInfo)."""
    parts = [p for p in path.split("/") if p]
    verb_of = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return Seen(method, path, query, None, path, verb_of.get(method, method.lower()), None)
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource, name = rest[0], (rest[1] if len(rest) > 1 else None)
    verb = verb_of.get(method, method.lower())
    if method == "GET" and name is None:
        verb = "watch" if query.get("watch") in ("1", "true") else "list"
    return Seen(method, path, query, group, resource, verb, namespace)


class ThreadedServer:
    """``with server:`` serves ``handler()`` on a free local port from a daemon thread until the block
    ends; ``url`` says where."""

    _httpd: ThreadingHTTPServer | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"


@dataclass
class RecordedAPIServer(ThreadedServer):
    """``with RecordedAPIServer() as srv:`` serves the recordings at ``srv.url`` until the block ends."""

    recordings: Path = RECORDINGS
    rules: list[dict[str, Any]] = field(default_factory=load_rules)
    #: Answer every request with 401, as a server does for an expired token.
    unauthorized: bool = False
    #: Answer no request before the server is closed (any --request-timeout fires first).
    silent: bool = False
    #: Path prefixes answered with 404, as by a server that does not serve those APIs.
    unserved: tuple[str, ...] = ()
    #: Answer the first request that carries a continue token with 410 Expired.
    expire_continue_once: bool = False
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._expired = False
        self._lock = threading.Lock()
        self._closed = threading.Event()

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        super().__exit__(*exc)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def kubeconfig(self, path: Path, *, namespace: str | None = None, context: str = "recorded") -> Path:
        return write_kubeconfig(path, self.url, namespace=namespace, context=context)

    # answering -------------------------------------------------------------------------
    def answer(self, method: str, raw_path: str) -> tuple[int, dict[str, Any] | bytes]:
        parts = urlsplit(raw_path)
        query = dict(parse_qsl(parts.query))
        seen = classify(method, parts.path, query)
        with self._lock:
            self.seen.append(seen)
        if self.silent:
            self._closed.wait()
        if self.unauthorized:
            return 401, status(401, "Unauthorized", "Unauthorized")
        if not allowed(self.rules, seen):
            return 403, forbidden(seen)
        if any(parts.path.startswith(p) for p in self.unserved):
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        if seen.group is None:
            f = self.recordings / recording_name(parts.path)
            return (200, f.read_bytes()) if f.is_file() else (404, status(404, "NotFound", "page not found"))
        if seen.verb == "get":
            f = self.recordings / recording_name(parts.path)
            if f.is_file():
                return 200, f.read_bytes()
            return self._get_from_list(parts.path, seen)
        return self._list(parts.path, seen, query)

    def _get_from_list(self, path: str, seen: Seen) -> tuple[int, dict[str, Any] | bytes]:
        """A named object without its own recording: the item of the recorded list, as a server keeps both."""
        collection, name = path.rstrip("/").rsplit("/", 1)
        code, data = self._list(collection, classify("GET", collection, {}), {})
        if code == 200 and isinstance(data, dict):
            for item in data.get("items") or []:
                if (item.get("metadata") or {}).get("name") == name:
                    kind = str(data.get("kind") or "")[: -len("List")]
                    return 200, {"kind": kind, "apiVersion": data.get("apiVersion"), **item}
        return 404, status(404, "NotFound", f'{seen.resource} "{name}" not found', {"name": name, "kind": seen.resource})

    def _list(self, path: str, seen: Seen, query: dict[str, str]) -> tuple[int, dict[str, Any] | bytes]:
        cluster_path = path
        if seen.namespace is not None:
            cluster_path = path.replace(f"/namespaces/{seen.namespace}/", "/")
        base = recording_name(cluster_path)[: -len(".json")]
        token = query.get("continue")
        if token and self.expire_continue_once and not self._expired:
            self._expired = True
            return 410, status(410, "Expired", EXPIRED_MESSAGE)
        limit = query.get("limit", "500")
        fields = query.get("fieldSelector")
        # a field selector filters before the server pages: read the whole recorded list
        pages = [] if fields else sorted(self.recordings.glob(f"{base}__limit={limit}_page*.json"))
        if pages:
            chosen = pages[0]
            if token:
                follow = [p for p, _ in itertools.pairwise(pages) if _continue_of(p) == token]
                if not follow:
                    return 410, status(410, "Expired", EXPIRED_MESSAGE)
                chosen = pages[pages.index(follow[0]) + 1]
            data = json.loads(chosen.read_text())
        else:
            f = self.recordings / f"{base}.json"
            if not f.is_file():
                return 404, status(404, "NotFound", "the server could not find the requested resource")
            data = json.loads(f.read_text())
            if not fields and len(data.get("items") or []) > int(limit):
                raise AssertionError(f"no recording of {path} paged with limit={limit}")
        items = data.get("items") or []
        if seen.namespace is not None:
            items = [i for i in items if (i.get("metadata") or {}).get("namespace") == seen.namespace]
        selector = query.get("labelSelector")
        if selector:
            want = dict(term.split("=", 1) for term in selector.split(","))
            items = [i for i in items if all(((i.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in want.items())]
        if fields:  # the fields every resource supports: metadata.name and metadata.namespace, with = or ==
            for term in fields.split(","):
                key, _, want = term.replace("==", "=").partition("=")
                if key not in ("metadata.name", "metadata.namespace"):
                    return 400, status(400, "BadRequest", f'field label not supported: {key}')
                items = [i for i in items if (i.get("metadata") or {}).get(key.split(".")[1]) == want]
        data["items"] = items
        return 200, data


def _continue_of(page: Path) -> str | None:
    return (json.loads(page.read_text()).get("metadata") or {}).get("continue")


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason}
    if details is not None:
        out["details"] = details
    out["code"] = code
    return out


def forbidden(seen: Seen) -> dict[str, Any]:
    """A 403 Status worded exactly as the recorded ones (errors/GET_api_v1_secrets.json)."""
    if seen.group is None:
        msg = f'forbidden: User "{USER}" cannot {seen.verb} path "{seen.path}"'
        return status(403, "Forbidden", msg, {})
    scope = f'in the namespace "{seen.namespace}"' if seen.namespace else "at the cluster scope"
    msg = (
        f'{seen.resource} is forbidden: User "{USER}" cannot {seen.verb} resource "{seen.resource}" '
        f'in API group "{seen.group}" {scope}'
    )
    return status(403, "Forbidden", msg, {"kind": seen.resource})


def _handler_for(server: RecordedAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            code, body = server.answer(self.command, self.path)
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (a timeout test)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


def write_kubeconfig(path: Path, server: str, *, namespace: str | None = None, context: str = "recorded") -> Path:
    ctx: dict[str, Any] = {"cluster": f"{context}-cluster", "user": f"{context}-reader"}
    if namespace:
        ctx["namespace"] = namespace
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": f"{context}-cluster", "cluster": {"server": server}}],
        "users": [{"name": f"{context}-reader", "user": {"token": "recorded-token"}}],
        "contexts": [{"name": context, "context": ctx}],
        "current-context": context,
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


def closed_port_url() -> str:
    """A URL nothing listens on (connection refused)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"
