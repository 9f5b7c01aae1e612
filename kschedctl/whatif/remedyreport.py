"""What a remedy search reports: each change with the verdict of the cycle re-run on it (``Remedy``),
and the whole search (``RemedyReport``): the verdict before, the remedies, the budget and its use.

The search itself is ``whatif.remedies``; a ``Verdict`` is read from the ``Trace`` a (re-)run of
the real cycle returns, never computed otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.explain.trace import Trace
from kschedctl.whatif.patchcheck import PatchCheck
from kschedctl.whatif.remedybudget import Budget

#: What "verified" means: the printed patch, applied to the stored object, passes the API server's
#: checks (``whatif.patchcheck``), and the cycle re-run on the result concluded the verdict shown.
VERIFIED = "verified by re-running the cycle"

#: The order remedies of equal effect are listed in: the smallest, most reversible changes first.
KIND_ORDER = (
    "uncordon-node",
    "add-toleration",
    "lower-request",
    "remove-taint",
    "relax-node-affinity",
    "label-node",
    "spread-max-skew",
    "spread-schedule-anyway",
    "drop-pod-affinity-term",
    "drop-pod-anti-affinity-term",
    "add-node",
    "priority-class",
)
#: The kinds that change the pod (the others change the cluster).
POD_KINDS = {
    "add-toleration", "lower-request", "relax-node-affinity", "spread-max-skew", "spread-schedule-anyway",
    "drop-pod-affinity-term", "drop-pod-anti-affinity-term", "priority-class",
}
#: How good a verdict is, best first (every other outcome: 2).
_RANK = {"scheduled": 0, "preemption": 1}


@dataclass
class Verdict:
    """What a (re-)run of the cycle concluded."""

    outcome: str  # scheduled | preemption | unschedulable | gated | error
    node: str | None = None
    score: int | None = None
    candidates: list[str] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)
    reason: str | None = None

    @classmethod
    def of(cls, trace: Trace) -> Verdict:
        if trace.error:
            return cls("error", reason=trace.error)
        if trace.gated:
            return cls("gated", reason="rejected at PreEnqueue")
        if trace.schedulable:
            scored = len(trace.feasible_nodes) > 1
            return cls("scheduled", trace.selected_node, trace.max_score if scored else None, list(trace.candidates))
        pf = trace.post_filter
        if pf is not None and pf.nominated_node_name:
            return cls("preemption", pf.nominated_node_name, victims=list(pf.victims), reason=short_fit_error(trace))
        return cls("unschedulable", reason=short_fit_error(trace))

    @property
    def rank(self) -> int:
        return _RANK.get(self.outcome, 2)

    def text(self) -> str:
        if self.outcome == "refused":
            return f"not verified: the API server would refuse the patched object: {self.reason}"
        if self.outcome == "scheduled":
            if self.score is None:
                return f"schedulable on {self.node} (the only feasible node: not scored)"
            tie = f"; {len(self.candidates)} nodes tie" if len(self.candidates) > 1 else ""
            return f"schedulable on {self.node} (score {self.score}{tie})"
        if self.outcome == "preemption":
            n = len(self.victims)
            return (f"schedulable only by preemption: nominates {self.node}, evicts {n} pod{'s' if n != 1 else ''}"
                    + (f" ({', '.join(self.victims)})" if self.victims else ""))
        if self.outcome == "unschedulable":
            return f"still unschedulable: {self.reason}"
        return f"{self.outcome}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "node": self.node, "score": self.score, "candidates": list(self.candidates),
                "victims": list(self.victims), "reason": self.reason, "text": self.text()}


def short_fit_error(trace: Trace) -> str | None:
    """The FitError up to its PostFilter part: "0/N nodes are available: <histogram>"."""
    if trace.fit_error is None:
        return None
    return trace.fit_error.split(". ", 1)[0].rstrip(".")


@dataclass
class Remedy:
    """One change and the verdict of the cycle re-run on it."""

    kind: str
    text: str
    target: str
    patch: dict[str, Any]
    verdict: Verdict
    helps: bool
    command: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The patch applied to its target and checked as the API server would (None: not checked).
    check: PatchCheck | None = None

    @property
    def verified(self) -> bool:
        """The patch applies as written and the cycle was re-run on the result."""
        return self.verdict.outcome != "refused"

    @property
    def side(self) -> str:
        return "pod" if self.kind in POD_KINDS else "cluster"

    def line(self) -> str:
        extra = ""
        if "opensNodes" in self.detail:
            n = len(self.detail["opensNodes"])
            extra = f" [opens {n} node{'s' if n != 1 else ''}]"
        if "copies" in self.detail:
            c = self.detail["copies"]
            extra = f" [the new node takes {c}{'+' if self.detail.get('copiesCapped') else ''} cop{'ies' if c != 1 else 'y'}]"
        return f"{self.text}{extra} → {self.verdict.text()}" + (f" — {VERIFIED}" if self.verified else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "side": self.side,
            "change": self.text,
            "target": self.target,
            "patch": self.patch,
            "patchType": "node shape" if self.kind == "add-node" else "strategic merge",
            "command": self.command,
            "verdict": self.verdict.to_dict(),
            "helps": self.helps,
            "verified": VERIFIED if self.verified else None,
            "apply": self.check.to_dict() if self.check is not None else None,
            "detail": self.detail,
        }


@dataclass
class RemedyReport:
    pod: str
    before: Verdict
    remedies: list[Remedy] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    reruns: int = 0
    probes: int = 0
    seconds: float = 0.0
    #: What the budget cut off (empty when the search ran to its end).
    not_tried: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def helpful(self) -> list[Remedy]:
        return [r for r in self.remedies if r.helps]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "before": self.before.to_dict(),
            "remedies": [r.to_dict() for r in self.remedies],
            "budget": self.budget.to_dict(),
            "used": {"reruns": self.reruns, "probes": self.probes, "seconds": round(self.seconds, 3)},
            "notTried": list(self.not_tried),
            "notes": list(self.notes),
        }
