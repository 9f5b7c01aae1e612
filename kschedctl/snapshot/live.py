"""The live-cluster source: read a Kubernetes API server, the way kubectl would, without writing to it.

This is the only module that imports the ``kubernetes`` client (lazily, so that
``kschedctl --help`` stays fast). It loads the kubeconfig as kubectl does
(``--kubeconfig``, then ``KUBECONFIG`` with its path list, then ``~/.kube/config``,
then the in-cluster service account), sends only GET requests through the
client's ``ApiClient`` and keeps the answers as raw JSON dictionaries (the
client's model classes would be slow and would drop fields), pages through
large lists with ``limit``/``continue``, and turns every failure into one
``ClusterAccessError`` line: unreachable server, rejected credentials (401),
missing permission (403, naming the verb and resource), timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kschedctl.errors import NESTED_TOO_DEEPLY, ClusterAccessError, UsageError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.bulk import bulk_build
from kschedctl.snapshot.source import (
    POD,
    RESOURCES,
    APIResource,
    Encoded,
    Fetched,
    Page,
    Progress,
    Raw,
    Sink,
    Warn,
    list_items,
    pod_not_found_in,
)
from kschedctl.snapshot.writer import encode_items

if TYPE_CHECKING:
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.offload import Offload

DEFAULT_CHUNK_SIZE = 500
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

#: An object's managedFields as the API server writes them (compact, after the metadata's first key): the
#: array up to its first ``]`` outside a string. (Only ObjectMeta has a member of that name, so outside a string
#: this text starts nothing else; entries hold no arrays, so that ``]`` closes it. Were one to, the cut would
#: leave brackets unbalanced, no JSON, and ``decode_list`` decodes the whole body instead.)
MANAGED_FIELDS = re.compile(rb',"managedFields":\[(?:[^\]"]++|"(?:[^"\\]++|\\.)*+")*+\]')
_MANAGED_KEY = b',"managedFields":['


def cut_managed_fields(body: bytes) -> bytes:
    """``MANAGED_FIELDS.sub(b"", body)`` for a JSON body, found with the bytes' own searches instead of
    the regular expression's walk over every character (that walk took longer than decoding what is left).

    From each ``,"managedFields":[``, the array ends at the first ``]`` with an even number of string
    quotes before it: a quote behind a backslash is escaped (in JSON a backslash stands only in a string),
    as long as no backslash is itself escaped; where one is (a ``\\\\`` in the array), the regular
    expression decides that array. (A body that is not JSON may be cut differently.)"""
    parts: list[bytes] = []
    pos = 0
    while (start := body.find(_MANAGED_KEY, pos)) >= 0:
        end = _managed_fields_end(body, start + len(_MANAGED_KEY))
        if end is None:  # no end found here: the regular expression's answer at this place
            m = MANAGED_FIELDS.match(body, start)
            if m is None:
                parts.append(body[pos : start + 1])
                pos = start + 1
                continue
            end = m.end()
        parts.append(body[pos:start])
        pos = end
    if not parts:
        return body
    parts.append(body[pos:])
    return b"".join(parts)


def _managed_fields_end(body: bytes, i: int) -> int | None:
    """Where the managedFields array opened before ``i`` ends (just after its ``]``); None when a
    backslash escapes a backslash before it, or no ``]`` closes it."""
    quotes = 0
    j = i
    while (k := body.find(b"]", j)) >= 0:
        if body.find(b"\\\\", j, k) >= 0:
            return None
        quotes += body.count(b'"', j, k) - body.count(b'\\"', j, k)
        if quotes % 2 == 0:
            return k + 1
        j = k + 1
    return None

_FORBIDDEN_RE = re.compile(
    r'(?:User "(?P<user>[^"]*)" )?cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
    r'(?P<scope> at the cluster scope| in the namespace "[^"]*")?'
)


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """kubectl's connection flags, plus what to keep in the objects read."""

    kubeconfig: str | None = None
    context: str | None = None
    #: Seconds; None or 0: no timeout (kubectl's ``--request-timeout=0``).
    request_timeout: float | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    redact: bool = True


@dataclass(frozen=True, slots=True)
class Request:
    """What one GET asks for, so an error can say which permission or object it concerned."""

    path: str
    verb: str  # get or list (the RBAC verb)
    resource: str  # plural, or the path for non-resource URLs
    group: str = ""
    namespace: str | None = None


class NotFound(ClusterAccessError):
    """404: the object does not exist, or the server does not serve the resource."""


class NotServed(NotFound):
    """404 to the first page of a list: the server does not serve that resource."""


class Expired(ClusterAccessError):
    """410: a ``continue`` token outlived the server's compaction window."""


class Forbidden(ClusterAccessError):
    """403: the identity lacks the permission."""


class NoClusterConfigured(ClusterAccessError):
    """Neither a kubeconfig nor an in-cluster service account: commands that take --snapshot say so."""


def version_note(git_version: str | None) -> str | None:
    """A note when the API server's minor version is outside the ones kschedctl explains (None when it is
    inside, or unknown): which version's rules are used instead (``config.versions.server_minor``)."""
    from kschedctl.kube.versions import server_minor

    return server_minor(git_version)[1]


def kubeconfig_files(explicit: str | None) -> list[str]:
    """The kubeconfig files kubectl would merge: --kubeconfig, else KUBECONFIG's list, else ~/.kube/config."""
    if explicit:
        path = os.path.expanduser(explicit)
        if os.path.isdir(path):
            raise ClusterAccessError(f"kubeconfig {explicit}: is a directory")
        if not os.path.isfile(path):
            raise ClusterAccessError(f"kubeconfig {explicit}: no such file")
        return [path]
    env = os.environ.get("KUBECONFIG")
    candidates = env.split(os.pathsep) if env else ["~/.kube/config"]
    paths = [os.path.expanduser(c) for c in candidates if c]
    for p in paths:  # kubectl skips a listed file that does not exist, but not one it cannot read as a file
        if os.path.isdir(p):
            raise ClusterAccessError(f"kubeconfig {p} (from KUBECONFIG): is a directory")
    return [p for p in paths if os.path.isfile(p)]


def check_kubeconfig(path: str) -> None:
    """Fail with one line naming the file when it is not YAML or not a mapping (the client would trace back)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as e:
        raise ClusterAccessError(f"kubeconfig {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ClusterAccessError(f"kubeconfig {path}: not a UTF-8 text file") from None
    except RecursionError:
        raise ClusterAccessError(f"kubeconfig {path}: invalid YAML: {NESTED_TOO_DEEPLY}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ClusterAccessError(f"kubeconfig {path}: invalid YAML{where}: {problem}") from None
    if data is not None and not isinstance(data, dict):
        raise ClusterAccessError(f"kubeconfig {path}: not a kubeconfig (a mapping with clusters, contexts and users)")
    for key in ("clusters", "contexts", "users"):
        value = data.get(key) if isinstance(data, dict) else None
        if value is not None and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            raise ClusterAccessError(f"kubeconfig {path}: {key}: must be a list of named entries")


def first_current_context(files: list[str]) -> str | None:
    """kubectl's rule for merged kubeconfigs: the first file that sets current-context wins.

    (The Python client lets the last one win, so kschedctl picks the context itself.)
    """
    import yaml

    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data.get("current-context"):
            return str(data["current-context"])
    return None


def kubeconfig_contexts(explicit: str | None = None) -> tuple[list[str], str | None]:
    """Context names of the merged kubeconfig and the current one (for completion); empty when none."""
    files = kubeconfig_files(explicit)
    if not files:
        return [], None
    from kubernetes import config

    try:
        for f in files:
            check_kubeconfig(f)
        contexts, _ = config.list_kube_config_contexts(config_file=os.pathsep.join(files))
    except (config.ConfigException, ClusterAccessError):
        return [], None
    return [str(c["name"]) for c in contexts], first_current_context(files)


class _Ahead:
    """One request running on a thread of its own while the caller works on the page before it (the
    thread waits on the socket without the GIL); ``result()`` is its body or raises its error."""

    def __init__(self, get: Callable[[str | None], bytes], token: str | None) -> None:
        self._answer: bytes | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(get, token), daemon=True)
        self._thread.start()

    def _run(self, get: Callable[[str | None], bytes], token: str | None) -> None:
        try:
            self._answer = get(token)
        except BaseException as e:  # handed to the caller, in its thread
            self._error = e

    def result(self) -> bytes:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer


@dataclass(frozen=True, slots=True)
class _Pending:
    """A page in the offload worker: its body (decoded here should the worker fail) and its list's state."""

    req: Request
    body: bytes
    remaining: Any  # remainingItemCount, when the server said
    last: bool


def _handed_over(body: bytes, hand_over: Callable[[], bool]) -> dict[str, Any] | None:
    """The list's metadata when this page is to go on undecoded: not the last (its head says where the list
    goes on) and ``hand_over`` wants it."""
    from kschedctl.snapshot.offload import list_head

    meta = list_head(body)
    return meta if meta is not None and meta.get("continue") and hand_over() else None


def _report(progress: Progress | None, res: APIResource, done: int, remaining: Any, last: bool) -> None:
    """Progress after a page: the total is known from remainingItemCount, or once the last page is in."""
    if progress is not None:
        total = done + remaining if isinstance(remaining, int) else (done if last else None)
        progress(res.group_resource, done, total)


class LiveCluster:
    """A read-only connection to the API server a kubeconfig context (or the pod's service account) names."""

    def __init__(self, options: LiveOptions | None = None) -> None:
        self.options = options or LiveOptions()
        self._offload: Offload | None = None
        self.context: str | None = None
        self.namespace = "default"
        self.api: Any = self._connect()
        self.server = str(self.api.configuration.host)

    # connection --------------------------------------------------------------------------
    def _connect(self) -> Any:
        from kubernetes import client, config

        cfg = client.Configuration()
        files = kubeconfig_files(self.options.kubeconfig)
        if files:
            joined = os.pathsep.join(files)
            for f in files:
                check_kubeconfig(f)
            try:
                contexts, _ = config.list_kube_config_contexts(config_file=joined)
                chosen = self.options.context or first_current_context(files)
                match = [c for c in contexts if c.get("name") == chosen]
                if not match:
                    if self.options.context:
                        raise ClusterAccessError(f'context "{self.options.context}" not found in kubeconfig {joined}')
                    raise ClusterAccessError(f"kubeconfig {joined} has no current context; give --context")
                self.context = str(chosen)
                self.namespace = str((match[0].get("context") or {}).get("namespace") or "default")
                config.load_kube_config(
                    config_file=joined, context=self.context, client_configuration=cfg, persist_config=False
                )
            except config.ConfigException as e:
                raise ClusterAccessError(f"kubeconfig {joined}: {e}") from None
            except (TypeError, AttributeError, KeyError, ValueError) as e:  # a structure the client cannot walk
                raise ClusterAccessError(f"kubeconfig {joined}: not a valid kubeconfig ({type(e).__name__}: {e})") from None
        elif self.options.context:
            raise ClusterAccessError(f'--context "{self.options.context}" needs a kubeconfig, and none was found')
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            try:
                config.load_incluster_config(client_configuration=cfg)
            except config.ConfigException as e:
                raise ClusterAccessError(f"in-cluster configuration: {e}") from None
            with contextlib.suppress(OSError):
                self.namespace = Path(SERVICE_ACCOUNT_NAMESPACE).read_text().strip() or "default"
        else:
            raise NoClusterConfigured(
                "no cluster to read: no kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config) and not running "
                "in a cluster"
            )
        cfg.retries = 0  # kubectl does not retry timeouts; one clear error instead of a long wait
        return client.ApiClient(configuration=cfg)

    def describe(self) -> str:
        return f'context "{self.context}" ({self.server})' if self.context else f"in-cluster API server {self.server}"

    # requests ----------------------------------------------------------------------------
    def get_json(self, req: Request, query: list[tuple[str, str]] | None = None) -> dict[str, Any]:
        """GET one path; the JSON answer as a dictionary, or a ClusterAccessError."""
        return self.decode(req, self.get_body(req, query))

    @staticmethod
    def decode(req: Request, body: bytes) -> dict[str, Any]:
        """A successful answer's body as a dictionary, or a ClusterAccessError."""
        try:
            data = json.loads(body)
        except (ValueError, TypeError):
            raise ClusterAccessError(f"GET {req.path}: the server did not answer with JSON") from None
        if not isinstance(data, dict):
            raise ClusterAccessError(f"GET {req.path}: the server's answer is not a JSON object")
        return data

    @classmethod
    def decode_list(cls, req: Request, body: bytes) -> dict[str, Any]:
        """``decode`` of a list whose objects are to be redacted: their managedFields (more than half of a
        list's JSON, and redaction's to drop) cut from the body before it is decoded, the rest as ``decode``
        gives it; the whole body decoded when the cut does not leave a JSON object (``MANAGED_FIELDS``)."""
        cut = cut_managed_fields(body)
        if len(cut) < len(body):
            try:
                data = json.loads(cut)
            except (ValueError, TypeError, RecursionError):
                data = None
            if isinstance(data, dict):
                return data
        return cls.decode(req, body)

    def get_body(self, req: Request, query: list[tuple[str, str]] | None = None) -> bytes:
        """GET one path; the body of a successful answer, undecoded, or a ClusterAccessError."""
        import urllib3
        from kubernetes.client.exceptions import ApiException
        from kubernetes.config import ConfigException

        try:  # adding the credentials may run the kubeconfig's exec plugin to refresh a token
            method, url, headers, _, _ = self.api.param_serialize(
                method="GET",
                resource_path=req.path,
                query_params=list(query or []),
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
        except ConfigException as e:
            raise ClusterAccessError(f"cannot get credentials for {self.describe()}: {e}") from None
        timeout = self.options.request_timeout or None
        try:
            resp = self.api.call_api(method, url, header_params=headers, _request_timeout=timeout)
            body = resp.read()
        except urllib3.exceptions.HTTPError as e:
            raise self._transport_error(e) from None
        except OSError as e:
            raise ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: {e}") from None
        except ApiException as e:  # the client wraps TLS failures into ApiException(status=0)
            reason = str(e.reason or e).replace("\n", ": ")
            raise ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: {reason}") from None
        status = int(resp.status)
        if 200 <= status < 300:
            return bytes(body)
        raise self._status_error(status, str(resp.reason or ""), body, req)

    def _transport_error(self, e: Exception) -> ClusterAccessError:
        import urllib3

        reason: Any = getattr(e, "reason", None) if isinstance(e, urllib3.exceptions.MaxRetryError) else e
        reason = reason or e
        # NameResolutionError is a NewConnectionError, which is a TimeoutError: test the narrowest first.
        if isinstance(reason, urllib3.exceptions.NameResolutionError):
            return ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: unknown host")
        if isinstance(reason, urllib3.exceptions.NewConnectionError):
            text = str(reason)
            why = "connection refused" if "refused" in text.lower() else text.rsplit("]", 1)[-1].strip() or text
            return ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: {why}")
        if isinstance(reason, urllib3.exceptions.TimeoutError):
            t = self.options.request_timeout
            if t:
                return ClusterAccessError(f"request timed out after {t:g}s (--request-timeout)")
            return ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: connection timed out")
        if isinstance(reason, urllib3.exceptions.SSLError):
            return ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: TLS error: {reason}")
        return ClusterAccessError(f"cannot reach the Kubernetes API server at {self.server}: {reason}")

    def _status_error(self, status: int, reason: str, body: bytes | None, req: Request) -> ClusterAccessError:
        payload: dict[str, Any] = {}
        try:
            parsed = json.loads(body or b"")
            if isinstance(parsed, dict):
                payload = parsed
        except ValueError:
            pass
        message = str(payload.get("message") or (body or b"").decode("utf-8", "replace").strip() or reason)
        if status == 401:
            who = f' of context "{self.context}"' if self.context else ""
            return ClusterAccessError(
                f"the server rejected our credentials (401 Unauthorized): {message}; the credentials{who} "
                "may have expired: log in again or renew them"
            )
        if status == 403:
            return Forbidden(forbidden_message(payload, req))
        if status == 404:
            return NotFound(message)
        if status == 410:
            return Expired(message)
        return ClusterAccessError(f"GET {req.path}: the server answered {status} {reason}: {message}")

    # reading -----------------------------------------------------------------------------
    def server_version(self) -> str | None:
        """``gitVersion`` of GET /version (asked once); None when this identity may not read it."""
        if not hasattr(self, "_git_version"):
            try:
                data = self.get_json(Request("/version", "get", "/version"))
            except (Forbidden, NotFound):
                data = {}
            self._git_version: str | None = str(data.get("gitVersion") or "") or None
        return self._git_version

    def list_pages(
        self,
        res: APIResource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        progress: Progress | None = None,
        encoded: bool = False,
        hand_over: Callable[[], bool] | None = None,
    ) -> Iterator[Page | None]:
        """The objects of one resource, one page (limit/continue) at a time, each page's answer decoded
        and dropped before the next is asked for. ``None`` among the pages: the list starts again (its
        ``continue`` token expired), forget the pages before. NotServed when the server does not serve it.

        ``encoded``: a big page may come as its lines (``Encoded``), made by the offload worker while the
        next page is fetched; it is then yielded after that page's answer arrived.

        ``hand_over``: asked for each page but the last; when it says so, the page comes undecoded (``Raw``,
        for ``forkfetch``'s other process to decode), its continue token read from its head."""
        offload = self._offload_worker() if encoded else None
        lean = self.options.redact and not encoded  # objects read into memory, not written: redacted anyway
        path = res.list_path(namespace)
        req = Request(path, "list", res.plural, res.group, namespace if res.namespaced else None)
        token: str | None = None
        restarted = False
        done = 0
        ahead: _Ahead | None = None

        def get(token: str | None) -> bytes:
            query = [("limit", str(self.options.chunk_size))]
            if label_selector:
                query.append(("labelSelector", label_selector))
            if field_selector:
                query.append(("fieldSelector", field_selector))
            if token:
                query.append(("continue", token))
            return self.get_body(req, query)

        pending: _Pending | None = None  # the page in the offload worker, yielded once the next is fetched
        try:
            while True:
                try:
                    body = ahead.result() if ahead is not None else get(token)
                    meta = offload.head(body) if offload is not None else None
                    raw = meta is None and hand_over is not None and (meta := _handed_over(body, hand_over)) is not None
                    answer = (self.decode_list(req, body) if lean else self.decode(req, body)) if meta is None else None
                except NotFound:
                    if token is None:
                        raise NotServed(res.group_resource) from None
                    raise
                except Expired:
                    if token is None or restarted:
                        raise ClusterAccessError(
                            f"listing {res.group_resource}: the list changed faster than it could be paged; try "
                            "again or raise --chunk-size"
                        ) from None
                    if pending is not None:
                        yield from self._collect(res, pending, done, progress)
                    restarted, token, done, ahead, pending = True, None, 0, None, None
                    yield None
                    continue
                if answer is not None:
                    meta = answer.get("metadata") or {}
                assert meta is not None
                token = str(meta.get("continue") or "") or None
                remaining = meta.get("remainingItemCount")
                if answer is None and offload is not None:
                    offload.start()  # (when fetch did not: forked before the thread below exists)
                # the next page is asked for now: its answer arrives while this one is redacted and written
                # (the thread only waits on the socket; decoding it here keeps the GIL uncontended)
                ahead = _Ahead(get, token) if token else None
                here: Page | None = Raw(body, self.options.chunk_size) if raw else None
                if pending is not None:
                    if answer is None:  # a big page while the worker is busy: this process does it meanwhile
                        items = list_items(res, self.decode(req, body), redacted=self.options.redact)
                        here = Encoded(encode_items(items), len(items))
                        del items
                    done = yield from self._collect(res, pending, done, progress)
                    pending = None
                if here is None and answer is None and offload is not None and offload.submit(res, body, redacted=self.options.redact):
                    pending = _Pending(req, body, remaining, token is None)
                if pending is None:
                    if here is None:
                        here = list_items(res, answer if answer is not None else self.decode(req, body), redacted=self.options.redact)
                    del answer
                    done += len(here) if isinstance(here, list) else here.objects
                    yield here
                    _report(progress, res, done, remaining, token is None)
                del body
                if token is None:
                    if pending is not None:
                        yield from self._collect(res, pending, done, progress)
                    return
        finally:
            if pending is not None and offload is not None:
                offload.drop()

    def _offload_worker(self) -> Offload:
        if self._offload is None:
            from kschedctl.snapshot.offload import Offload

            self._offload = Offload()
        return self._offload

    def _collect(
        self, res: APIResource, pending: _Pending, done: int, progress: Progress | None
    ) -> Generator[Page, None, int]:
        """The page in the offload worker, as its lines (or decoded here when the worker could not);
        returns the count of objects so far."""
        assert self._offload is not None
        page: Page | None = self._offload.result()
        if page is None:
            page = list_items(res, self.decode(pending.req, pending.body), redacted=self.options.redact)
        done += len(page) if isinstance(page, list) else page.objects
        yield page
        _report(progress, res, done, pending.remaining, pending.last)
        return done

    def list_items(
        self,
        res: APIResource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        progress: Progress | None = None,
    ) -> list[dict[str, Any]] | None:
        """Every object of one resource (``list_pages`` gathered); None when the server does not serve it."""
        fetched = Fetched(self.server)
        pages = self.list_pages(
            res, namespace=namespace, label_selector=label_selector, field_selector=field_selector, progress=progress
        )
        try:
            fetched.take(res, pages)
        except NotServed:
            return None
        return fetched.lists[0][1]

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One pod by name (GET, verb get); None when it does not exist."""
        req = Request(POD.object_path(namespace, name), "get", "pods", "", namespace)
        try:
            return self.get_json(req)
        except NotFound:
            return None

    def namespaces_of_pod(self, name: str) -> list[str]:
        """The namespaces holding a pod called ``name`` (one list at the cluster scope, filtered by the
        server on metadata.name); empty when that list is not allowed or fails."""
        try:
            items = self.list_items(POD, field_selector=f"metadata.name={name}") or []
        except ClusterAccessError:
            return []
        return sorted(str((i.get("metadata") or {}).get("namespace") or "") for i in items)

    def fetch(
        self,
        *,
        namespace: str | None = None,
        pod_selector: str | None = None,
        progress: Progress | None = None,
        sink: Sink | None = None,
    ) -> Fetched:
        """Every resource of ``RESOURCES``: the whole cluster, or one namespace's namespaced objects.

        The objects go to ``sink`` page by page as they arrive (a snapshot file being written), or when
        it is None are kept in the Fetched returned; its notes and server version are set either way."""
        fetched = Fetched(self.server)
        fetched.server_version = self.server_version()
        into: Sink = fetched if sink is None else sink
        if getattr(into, "takes_encoded", False):  # started before any thread of ours runs (a fork copies one)
            self._offload_worker().start()
        try:
            with bulk_build():  # no cycles among decoded JSON: the collector would only walk every page again
                self._fetch_into(into, fetched, namespace, pod_selector, progress)
        finally:
            self.stop_offload()
        return fetched

    def read_in_fork(self, sink: Sink, fetched: Fetched, progress: Progress, hand_over: Callable[[], bool]) -> None:
        """``fetch`` into ``sink``, in a forked process (``forkfetch``): on connections of its own, the
        ones of the process it was forked from being that process's; ``hand_over`` as ``list_pages``'s."""
        self.api.rest_client.pool_manager.clear()
        self._offload = None
        self._fetch_into(sink, fetched, None, None, progress, hand_over)

    def decode_page(self, res: APIResource, body: bytes) -> list[dict[str, Any]]:
        """The objects of a page ``read_in_fork`` handed over undecoded (``Raw``), as ``list_pages`` gives them."""
        req = Request(res.list_path(), "list", res.plural, res.group)
        answer = self.decode_list(req, body) if self.options.redact else self.decode(req, body)
        return list_items(res, answer, redacted=self.options.redact)

    def stop_offload(self) -> None:
        """End the offload worker ``list_pages(encoded=True)`` started, if it did (``fetch`` does at its end)."""
        if self._offload is not None:
            self._offload.close()
            self._offload = None

    def _fetch_into(
        self,
        into: Sink,
        fetched: Fetched,
        namespace: str | None,
        pod_selector: str | None,
        progress: Progress | None,
        hand_over: Callable[[], bool] | None = None,
    ) -> None:
        encoded = bool(getattr(into, "takes_encoded", False))
        for res in RESOURCES:
            pages = self.list_pages(
                res,
                namespace=namespace,
                label_selector=pod_selector if res is POD else None,
                progress=progress,
                encoded=encoded,
                hand_over=hand_over,
            )
            try:
                into.take(res, pages)
            except Forbidden as e:
                if not res.optional:
                    raise
                # an alpha API (pod groups) a role written before it existed does not grant: read without it
                fetched.notes.append(f"{e}; the snapshot has no {res.kind} objects")
            except NotServed:
                fetched.not_served(res)


def forbidden_message(status: dict[str, Any], req: Request) -> str:
    """One line from a 403 Status body: which verb on which resource is missing, and for whom."""
    message = str(status.get("message") or "")
    m = _FORBIDDEN_RE.search(message)
    if m:
        verb, resource, group = m["verb"], m["resource"], m["group"]
        scope = (m["scope"] or "").strip()
        user = m["user"]
    else:
        details = status.get("details") if isinstance(status.get("details"), dict) else {}
        verb, resource, group = req.verb, str((details or {}).get("kind") or req.resource), req.group
        scope = f'in the namespace "{req.namespace}"' if req.namespace else "at the cluster scope"
        user = None
    line = f'forbidden: cannot {verb} resource "{resource}" in API group "{group}"'
    if scope:
        line += f" {scope}"
    who = f", user {user}" if user else ""
    return line + f" (verb {verb}{who}; the read-only ClusterRole in the README grants what kschedctl reads)"


class LiveSource:
    """The ``Source`` for a live cluster: one in-memory snapshot of everything the scheduler reads."""

    def __init__(self, options: LiveOptions | None = None) -> None:
        from kschedctl.snapshot import forked

        self._cpu_before = forked.cpu_times()  # how busy the machine is while we connect (``load``)
        self.cluster = LiveCluster(options)
        self.description = self.cluster.describe()

    def default_namespace(self) -> str:
        return self.cluster.namespace

    def require_pod(self, namespace: str, name: str) -> None:
        pod = self.cluster.get_pod(namespace, name)
        if pod is None:
            where = f'context "{self.cluster.context}"' if self.cluster.context else self.cluster.server
            elsewhere = [ns for ns in self.cluster.namespaces_of_pod(name) if ns != namespace]
            raise pod_not_found_in(name, namespace, where, elsewhere)
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            raise UsageError(f'pod "{name}" in namespace "{namespace}" has finished ({phase}): kube-scheduler ignores it')

    def fetch(
        self,
        *,
        namespace: str | None = None,
        pod_selector: str | None = None,
        progress: Progress | None = None,
        sink: Sink | None = None,
    ) -> Fetched:
        return self.cluster.fetch(namespace=namespace, pod_selector=pod_selector, progress=progress, sink=sink)

    def server_version(self) -> str | None:
        """The API server's ``gitVersion`` (one GET /version, remembered)."""
        return self.cluster.server_version()

    def shown_gates(self, features: Features) -> dict[str, str]:
        """The gates off in ``features`` that the server evidently runs with: each API version it serves only
        with a gate on, and answers a list of (the first page of a resource the snapshot reads anyway)."""
        from kschedctl.snapshot.apiversions import served_gate_versions

        shown: dict[str, str] = {}
        for version, gate in served_gate_versions(features).items():
            for res in (r for r in RESOURCES if r.api_version == version):
                try:
                    next(iter(self.cluster.list_pages(res)), None)
                except (NotFound, Forbidden):  # not served, or not ours to read: nothing shown
                    continue
                shown[gate] = f"it serves {res.group_resource} ({version})"
        return shown

    def load(
        self, *, warn: Warn | None = None, progress: Progress | None = None, features: Features = DEFAULT_FEATURES
    ) -> Cluster:
        from kschedctl.snapshot import forked, forkfetch

        with bulk_build():  # a million dicts from JSON, then the model: the collector would walk them again and again
            if forked.available(self._cpu_before):
                with contextlib.suppress(forkfetch.Restart):
                    return self._load_forked(warn, progress, features)
            return self.fetch(progress=progress).to_cluster(warn, features)

    def _load_forked(self, warn: Warn | None, progress: Progress | None, features: Features) -> Cluster:
        """``load`` with the lists read by a second process while this one builds the model of the pages
        before (``forkfetch``); the same Cluster, notes and warnings as ``Fetched.to_cluster``'s."""
        from kschedctl.snapshot import forkfetch
        from kschedctl.snapshot.loader import build_cluster

        self.cluster.server_version()  # (as fetch asks it; here, so that this process remembers the answer)
        notes: list[str] = []
        with forkfetch.ForkedRead(self.cluster.read_in_fork, self.cluster.decode_page, self.cluster.server) as reader:
            # the API server validated them
            cluster = build_cluster(reader.documents(notes, progress), validate=False, features=features)
        if warn is not None:  # the read's notes first, as to_cluster gives them
            for note in [*notes, *cluster.notes]:
                warn(note)
        cluster.pods_listed = True
        cluster.notes[:0] = notes
        return cluster
