"""``explain pod``: one pod by name, or every pod of a file, each through one scheduling cycle.

The cycle is ``explain/``'s; this use case picks the pods (a bound pod is explained as if it were
pending, a file's pods are admitted to the cluster first), and adds on top of each trace what the
command asked for: the margin and, with ``--fix`` or ``--compare``, the remedies ``whatif.remedies``
verifies, and with ``--scale-up`` each node group's answer (``whatif.scaleup_groups``). The result
holds each trace and its document for ``render/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.usecases.request import ClusterRequest, Hooks
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.explain.trace import Trace
    from kschedctl.snapshot.model import Pod


@dataclass(kw_only=True)
class ExplainPodRequest(ClusterRequest):
    """``explain pod``: one pod by name, or every pod of a file, each through one cycle."""

    config: SchedulerConfig
    #: A pod of the cluster (in ``namespace``), or else the pods of ``filename`` (- for stdin).
    name: str | None = None
    namespace: str = "default"
    filename: str | None = None
    #: Record every plugin's and node's details (wide, JSON and YAML output).
    details: bool = False
    #: Also search single changes that make the pod fit (``--fix``).
    fix: bool = False
    #: The node the selected one is compared with (``--compare``; None: the runner-up).
    compare: str | None = None
    #: Also ask each node group whether one new node would take the pod, and how many it takes (``--scale-up``).
    scale_up: bool = False
    #: With ``scale_up``: the most new nodes of one group the least-count search tries.
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES


@dataclass
class ExplainResult:
    """Each explained pod's trace, and its document (the trace with margin and remedies added)."""

    traces: list[Trace] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def schedulable(self) -> bool:
        return all(t.schedulable for t in self.traces)


def _pods_to_explain(request: ExplainPodRequest, hooks: Hooks) -> list[Pod]:
    """The named pod, or the pods of the file admitted to the cluster (admission's notes to ``hooks``)."""
    from kschedctl.snapshot.loader import admit_pod, load_pods

    if request.filename is None:
        assert request.name is not None
        return [request.named_pod(request.namespace, request.name)]
    filename = request.filename
    pods = load_pods(filename, features=request.config.features)
    for p in pods:
        for n in admit_pod(request.cluster, p, "<stdin>" if filename == "-" else filename):
            hooks.note(n)
    if len(pods) > 1:
        hooks.note(f"{filename} holds {len(pods)} pods: each is explained against the snapshot as it is "
                   "(to place them one after another, use kschedctl simulate)" + _groups_note(request, pods))
    return pods


def _groups_note(request: ExplainPodRequest, pods: list[Pod]) -> str:
    """What the note on a file of several pods adds when some of them form a PodGroup that v1.36 schedules together."""
    from kschedctl.framework.podgroups import pod_group_cycle_on, pod_group_name

    if not pod_group_cycle_on(request.config.features) or not any(pod_group_name(p) for p in pods):
        return ""
    return "; the pods of a PodGroup are in the queue together, so each one's pod-group cycle schedules the others too"


def explain_pods(request: ExplainPodRequest, hooks: Hooks | None = None) -> ExplainResult:
    """One scheduling cycle per pod, a bound pod explained as if it were pending, margin and remedies added."""
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.explain.margin import annotate_margin
    from kschedctl.explain.order import assess
    from kschedctl.explain.pending import as_pending
    from kschedctl.kube.versions import version_fields

    hooks = hooks or Hooks()
    result = ExplainResult()
    order = request.noted_order(hooks)
    pods = _pods_to_explain(request, hooks)
    created = pods if request.filename is not None and len(pods) > 1 else []
    for pod in pods:
        bound_to = pod.node_name
        if bound_to:
            pod = as_pending(pod)
        trace = explain_pod(request.cluster, pod, request.config, request.registry, details=request.details,
                            on_phase=hooks.progress.phase, after=assess, created=created)
        if bound_to:
            trace.notes.append(f"the pod is bound to {bound_to}; explained as if it were pending (its own placement removed)")
        data = {**version_fields(request.config.features), **trace.to_dict()}
        if not order.by_name:
            data["nodeOrder"] = order.to_dict()
        if request.fix or request.compare:
            hooks.progress.phase("verifying remedies")
        if request.fix:  # (the remedy search's modules are imported only then)
            from kschedctl.whatif.remedies import annotate_trace

            annotate_trace(data, trace, request.cluster, pod, request.config, request.registry,
                           fix=True, compare=request.compare)
        else:
            annotate_margin(data, trace, request.cluster, request.compare)
        if request.scale_up:
            hooks.progress.phase("asking node groups")
            data["scaleUp"] = _scale_up(request, pod, trace)
        result.traces.append(trace)
        result.documents.append(data)
    return result


def _scale_up(request: ExplainPodRequest, pod: Pod, trace: Trace) -> dict[str, Any]:
    """``--scale-up`` for one pod: each node group's answer (none when the pod is gated, or fits now and the
    pods queued before it leave it the room) and the pod's autoscaler-style line."""
    from kschedctl.whatif.scaleup_groups import scale_up_report

    gated = "gated at PreEnqueue: no scheduling attempt, so no scale-up either until its gates are removed"
    report = scale_up_report(request.cluster, request.config, request.registry, [] if trace.gated else [pod],
                             fits_now=[pod.key] if trace.schedulable else [],
                             skipped=[(pod.key, gated)] if trace.gated else [], max_new_nodes=request.max_new_nodes)
    out = report.to_dict()
    line = out.pop("pods")[0]
    return {"message": line["message"], **({"note": line["note"]} if "note" in line else {}), **out}
