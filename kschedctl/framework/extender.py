"""Scheduler extenders: the HTTP webhooks a KubeSchedulerConfiguration lists under ``extenders:``.

kube-scheduler v1.35 calls an extender by POSTing JSON to ``<urlPrefix>/<verb>``:
``filterVerb`` after the Filter plugins, ``prioritizeVerb`` next to the Score
plugins, ``preemptVerb`` from the preemption evaluator, ``bindVerb`` instead of
the Bind plugins. This module is the client side of that protocol (the
``HTTPExtender`` of ``extender.go``): it builds the ``ExtenderArgs`` the
scheduler sends, calls the endpoint with the standard library, and decodes the
answer the way Go's ``encoding/json`` would (field names match case-insensitively).

It is the one place where kschedctl talks to something other than the
Kubernetes API, and it still writes nothing to a cluster: filter, prioritize and
preempt only ask questions; the bind verb is never called (``binding_args``
only builds the request a real scheduler would send). Every call is appended to
a shared log of ``ExtenderCall`` records so that the trace can show what each
extender was sent and what it answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from kschedctl.errors import InputError
from kschedctl.framework.profile import Extender
from kschedctl.framework.status import MAX_NODE_SCORE
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.goformat import json_kind
from kschedctl.snapshot.model import Node, Pod

if TYPE_CHECKING:  # the HTTP client is imported when an extender is called, not by every command
    import ssl

#: ``extenderv1.MaxExtenderPriority``: extenders score 0..10; the scheduler scales by 100/10.
MAX_EXTENDER_PRIORITY = 10
#: What one extender point is worth on the plugins' 0..100 scale (integer division, as Go).
EXTENDER_SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY


class ExtenderError(Exception):
    """A failed extender call; ``str()`` is the error text kube-scheduler would report."""

    def __init__(self, message: str, call: ExtenderCall | None = None) -> None:
        super().__init__(message)
        #: The logged call that failed (its outcome is already "error").
        self.call = call


@dataclass
class ExtenderCall:
    """One request to one extender (or one that a dry run deliberately did not send)."""

    extender: str
    verb: str
    url: str
    #: ``called``, ``error``, ``ignored`` (an ignorable extender failed), ``not interested``,
    #: ``not called (dry run)``.
    outcome: str = "called"
    error: str | None = None
    #: What was sent, summarised: node names, or the number of full Node objects.
    sent: dict[str, Any] = field(default_factory=dict)
    #: What came back, decoded (verb-specific).
    result: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"extender": self.extender, "verb": self.verb, "url": self.url, "outcome": self.outcome}
        if self.error is not None:
            d["error"] = self.error
        if self.sent:
            d["sent"] = self.sent
        d.update(self.result)
        return d


@dataclass
class FilterResult:
    """What ``Filter`` returns: the nodes that passed and the failure messages by node."""

    nodes: list[NodeInfo]
    failed: dict[str, str]
    failed_and_unresolvable: dict[str, str]
    #: True when the extender returned full Node objects (at least one): the passing nodes are
    #: then fresh NodeInfos built from them, without their pods (as v1.35 does).
    rebuilt: bool = False


#: Sends one request: (url, JSON body bytes, timeout seconds, ssl context) -> (HTTP status, body).
Transport = Callable[[str, bytes, float, "ssl.SSLContext | None"], tuple[int, bytes]]


def urllib_transport(url: str, body: bytes, timeout: float, context: ssl.SSLContext | None) -> tuple[int, bytes]:
    """POST ``body`` as JSON with the standard library; HTTP errors are returned, not raised."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as e:
        with e:
            return int(e.code), e.read()


def extender_url(url_prefix: str, verb: str) -> str:
    """``strings.TrimRight(urlPrefix, "/") + "/" + verb``."""
    return url_prefix.rstrip("/") + "/" + verb


class HTTPExtender:
    """One configured extender, speaking kube-scheduler's extender protocol (``k8s.io/kube-scheduler/extender/v1``)."""

    def __init__(self, config: Extender, log: list[ExtenderCall] | None = None, transport: Transport | None = None) -> None:
        self.config = config
        self.url_prefix = config.url_prefix
        self.filter_verb = config.filter_verb
        self.prioritize_verb = config.prioritize_verb
        self.preempt_verb = config.preempt_verb
        self.bind_verb = config.bind_verb
        self.weight = config.weight
        self.node_cache_capable = config.node_cache_capable
        self.ignorable = config.ignorable
        self.timeout = config.http_timeout_seconds
        self.managed_resources = {str(m.get("name", "")) for m in config.managed_resources}
        self.log: list[ExtenderCall] = log if log is not None else []
        #: This extender's most recent logged call.
        self.last_call: ExtenderCall | None = None
        self._transport = transport or urllib_transport

    # identity and capabilities -----------------------------------------------------------
    @property
    def name(self) -> str:
        """Extenders are named by their URL prefix, as upstream does."""
        return self.url_prefix

    def is_ignorable(self) -> bool:
        return self.ignorable

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """No managed resources: every pod. Otherwise a pod requesting or limiting one of them
        in a container or an init container (ephemeral containers and pod-level resources do not count)."""
        if not self.managed_resources:
            return True
        spec = pod.raw.get("spec") or {}
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or []:
                res = (c or {}).get("resources") or {}
                for kind in ("requests", "limits"):
                    if any(str(name) in self.managed_resources for name in res.get(kind) or {}):
                        return True
        return False

    # the verbs ------------------------------------------------------------------------------
    def _args(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``ExtenderArgs`` (node names for a node-cache-capable extender, else a NodeList) and its summary."""
        names = [ni.name for ni in nodes]
        if self.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": names}, {"nodeNames": names}
        node_list = {"metadata": {}, "items": [ni.node.raw for ni in nodes]}
        return {"Pod": pod.raw, "Nodes": node_list, "NodeNames": None}, {"nodes": names}

    def filter(self, pod: Pod, nodes: list[NodeInfo]) -> FilterResult:
        """``Filter``: the nodes that pass, and the failed ones; raises ExtenderError when the call fails."""
        if not self.filter_verb:
            return FilterResult(list(nodes), {}, {})
        args, sent = self._args(pod, nodes)
        call = self._record("filter", self.filter_verb, sent)
        result = _decode_object(self._send(call, args), "ExtenderFilterResult", call)
        err = _get_str(result, "Error", call)
        if err:
            self._fail(call, err)
        by_name = {ni.name: ni for ni in nodes}
        node_names = _get(result, "NodeNames")
        node_list = _get(result, "Nodes")
        passed: list[NodeInfo] = []
        rebuilt = False
        if self.node_cache_capable and node_names is not None:
            for n in _str_list(node_names, "ExtenderFilterResult.NodeNames", call):
                ni = by_name.get(n)
                if ni is None:
                    self._fail(call, f'extender "{self.url_prefix}" claims a filtered node "{n}" which is not found in the input node list')
                passed.append(ni)
        elif node_list is not None:
            passed = [NodeInfo(n) for n in _nodes_of(node_list, call)]
            rebuilt = bool(passed)
        failed = _str_map(_get(result, "FailedNodes"), "FailedNodes", call)
        unresolvable = _str_map(_get(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes", call)
        call.result = {
            "passed": [ni.name for ni in passed],
            "failedNodes": failed,
            "failedAndUnresolvableNodes": unresolvable,
        }
        if rebuilt:
            call.result["nodeInfosRebuilt"] = True
        return FilterResult(passed, failed, unresolvable, rebuilt)

    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """``Prioritize``: (host, score) pairs and this extender's weight. Without a prioritize verb
        every node scores 0 with weight 0, and nothing is sent."""
        if not self.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        args, sent = self._args(pod, nodes)
        call = self._record("prioritize", self.prioritize_verb, sent)
        body = self._send(call, args)
        if body is None:
            scores: list[tuple[str, int]] = []
        elif not isinstance(body, list):
            self._fail(call, f"json: cannot unmarshal {json_kind(body)} into Go value of type v1.HostPriorityList")
        else:
            scores = []
            for item in body:
                if item is None:
                    scores.append(("", 0))
                    continue
                if not isinstance(item, dict):
                    self._fail(call, f"json: cannot unmarshal {json_kind(item)} into Go value of type v1.HostPriority")
                host = _get_str(item, "Host", call)
                scores.append((host, _get_int(item, "Score", call)))
        call.result = {"scores": {h: s for h, s in scores}, "weight": self.weight}
        return scores, self.weight

    def process_preemption(
        self, pod: Pod, victims: dict[str, tuple[list[Pod], int]], node_lookup: Callable[[str], NodeInfo | None]
    ) -> dict[str, tuple[list[Pod], int]]:
        """``ProcessPreemption``: the extender's (possibly reduced) node -> (victims, PDB violations) map."""
        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.url_prefix} but run into ProcessPreemption"
            )
        if self.node_cache_capable:
            meta = {
                node: {"Pods": [{"UID": p.uid} for p in pods], "NumPDBViolations": n}
                for node, (pods, n) in victims.items()
            }
            args: dict[str, Any] = {"Pod": pod.raw, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {node: {"Pods": [p.raw for p in pods], "NumPDBViolations": n} for node, (pods, n) in victims.items()}
            args = {"Pod": pod.raw, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        sent = {"candidates": {node: [p.key for p in pods] for node, (pods, _n) in victims.items()}}
        call = self._record("preempt", self.preempt_verb, sent)
        result = _decode_object(self._send(call, args), "ExtenderPreemptionResult", call)
        out: dict[str, tuple[list[Pod], int]] = {}
        meta_victims = _get(result, "NodeNameToMetaVictims")
        if meta_victims is not None and not isinstance(meta_victims, dict):
            self._fail(call, f"json: cannot unmarshal {json_kind(meta_victims)} into Go struct field "
                       "ExtenderPreemptionResult.NodeNameToMetaVictims")
        for node, mv in (meta_victims or {}).items():
            ni = node_lookup(node)
            if ni is None:
                self._fail(call, f'nodeinfo not found for node name "{node}"')
            pods: list[Pod] = []
            n_pdb = 0
            if mv is not None:
                if not isinstance(mv, dict):
                    self._fail(call, f"json: cannot unmarshal {json_kind(mv)} into Go value of type v1.MetaVictims")
                n_pdb = _get_int(mv, "NumPDBViolations", call)
                for mp in _get(mv, "Pods") or []:
                    uid = _get_str(mp, "UID", call) if isinstance(mp, dict) else ""
                    found = next((pi.pod for pi in ni.pods if pi.pod.uid == uid), None)
                    if found is None:
                        self._fail(
                            call,
                            f"extender: {self.url_prefix} claims to preempt pod (UID: {uid}) on node: {node}, "
                            "but the pod is not found on that node",
                        )
                    pods.append(found)
            out[node] = (pods, n_pdb)
        call.result = {"victims": {node: [p.key for p in pods] for node, (pods, _n) in out.items()}}
        return out

    def binding_args(self, pod: Pod, node_name: str) -> dict[str, Any]:
        """The ``ExtenderBindingArgs`` a real scheduler would POST to the bind verb (never sent here)."""
        return {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node_name}

    def record_bind_not_called(self, pod: Pod, node_name: str) -> ExtenderCall:
        call = self._record("bind", self.bind_verb, {})
        call.outcome = "not called (dry run)"
        call.result = {"request": self.binding_args(pod, node_name)}
        return call

    # plumbing ----------------------------------------------------------------------------
    def _record(self, verb_kind: str, verb: str, sent: dict[str, Any]) -> ExtenderCall:
        call = ExtenderCall(self.url_prefix, verb_kind, extender_url(self.url_prefix, verb), sent=sent)
        self.log.append(call)
        self.last_call = call
        return call

    def _fail(self, call: ExtenderCall, message: str) -> NoReturn:
        call.outcome = "error"
        call.error = message
        raise ExtenderError(message, call)

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.config.enable_https:
            return None
        # enableHTTPS without a CA: upstream skips certificate verification.
        import ssl

        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def _send(self, call: ExtenderCall, args: Any) -> Any:
        import urllib.error

        body = json.dumps(args).encode()
        url = call.url
        try:
            status, data = self._transport(url, body, self.timeout, self._ssl_context())
        except TimeoutError:
            self._fail(call, f'Post "{url}": context deadline exceeded (Client.Timeout exceeded after {self.timeout:g}s)')
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, TimeoutError):
                self._fail(call, f'Post "{url}": context deadline exceeded (Client.Timeout exceeded after {self.timeout:g}s)')
            self._fail(call, f'Post "{url}": {_reason_text(reason)}')
        except (OSError, ValueError) as e:
            self._fail(call, f'Post "{url}": {_reason_text(e)}')
        verb = url.rsplit("/", 1)[-1]
        if status != 200:
            self._fail(call, f"failed {verb} with extender at URL {url}, code {status}")
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self._fail(call, f"decoding the answer of {url}: {e}")


def build_extenders(configs: list[Extender], log: list[ExtenderCall], transport: Transport | None = None) -> list[HTTPExtender]:
    """``buildExtenders``: one client per configured extender, the ignorable ones moved to the tail
    (each group keeps its configuration order): kube-scheduler calls them in this order."""
    ordered = [c for c in configs if not c.ignorable] + [c for c in configs if c.ignorable]
    return [HTTPExtender(c, log, transport) for c in ordered]


# JSON decoding as Go's encoding/json does it for the extender types -----------------------------


def _reason_text(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason)




def _get(obj: dict[str, Any], name: str) -> Any:
    """A struct field: the exact key first, else a case-insensitive match (Go's rule)."""
    if name in obj:
        return obj[name]
    low = name.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _decode_object(body: Any, type_name: str, call: ExtenderCall) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        call.outcome = "error"
        call.error = f"json: cannot unmarshal {json_kind(body)} into Go value of type v1.{type_name}"
        raise ExtenderError(call.error, call)
    return body


def _type_error(call: ExtenderCall, v: Any, what: str, go_type: str) -> ExtenderError:
    call.outcome = "error"
    call.error = f"json: cannot unmarshal {json_kind(v)} into Go struct field {what} of type {go_type}"
    return ExtenderError(call.error, call)


def _get_str(obj: dict[str, Any], name: str, call: ExtenderCall) -> str:
    v = _get(obj, name)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise _type_error(call, v, name, "string")
    return v


def _get_int(obj: dict[str, Any], name: str, call: ExtenderCall) -> int:
    v = _get(obj, name)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int | float) or (isinstance(v, float) and not v.is_integer()):
        raise _type_error(call, v, name, "int64")
    return int(v)


def _str_list(v: Any, what: str, call: ExtenderCall) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise _type_error(call, v, what, "[]string")
    return list(v)


def _str_map(v: Any, what: str, call: ExtenderCall) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict) or not all(isinstance(s, str) for s in v.values()):
        raise _type_error(call, v, what, "v1.FailedNodesMap")
    return dict(v)


def _nodes_of(node_list: Any, call: ExtenderCall) -> list[Node]:
    if not isinstance(node_list, dict):
        raise _type_error(call, node_list, "ExtenderFilterResult.Nodes", "v1.NodeList")
    items = _get(node_list, "items") or []
    if not isinstance(items, list):
        raise _type_error(call, items, "NodeList.items", "[]v1.Node")
    out: list[Node] = []
    for raw in items:
        if not isinstance(raw, dict):
            raise _type_error(call, raw, "NodeList.items", "v1.Node")
        try:
            out.append(Node(raw))
        except InputError as e:
            call.outcome = "error"
            call.error = f"extender {call.extender} returned a node that cannot be read: {e}"
            raise ExtenderError(call.error, call) from None
    return out
