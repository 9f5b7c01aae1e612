"""OpportunisticBatching (kube-scheduler v1.35, beta, on by default): one cycle's sorted scores reused by the next.

Upstream (``framework/runtime/batch.go``), per profile:

* after a cycle that scored several nodes, the nodes it did not choose stay in a heap, sorted
  by total score, together with the pod's *signature* (see ``kschedctl.framework.signers``);
* the next cycle, after PreFilter succeeded, asks for a *node hint*. There is one when the
  stored heap is not empty, this cycle immediately follows the one that stored it (no other
  pod, of any profile, was popped in between, and that cycle placed its pod), the pod has the
  same signature, the batch is younger than 500 ms, and the node the previous pod got no longer
  passes this pod's Filter plugins (so the previous order is still right: pods go one per
  node). The hint is the heap's next node;
* the hint is then tried like a nominated node: Filter on that node alone, and when it passes,
  the pod goes there with no other node filtered or scored, and ``nextStartNodeIndex`` does not
  move. Otherwise the cycle runs in full and stores its own results.

A signature exists only when no extender is configured and every PreFilter, Filter, PreScore
and Score plugin of the profile implements ``sign_pod`` and signs the pod: in the default
profile, pods with pod (anti-)affinity, topology spread constraints (or any pod under
``System`` default spreading, the default) or ResourceClaims are never batched.

The 500 ms expiry is wall-clock time in upstream. kschedctl models the fast case: a batch
never expires, as when pods arrive back to back and each cycle takes a few milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.framework.interfaces import SignPlugin
from kschedctl.framework.signers import SCHEDULER_NAME, canonical

if TYPE_CHECKING:
    from kschedctl.framework.cycle_state import CycleState
    from kschedctl.framework.runtime import Framework
    from kschedctl.snapshot.model import Pod

#: Extension points whose plugins must all sign a pod (``computeBatchablePlugins``).
SIGNED_EXTENSION_POINTS = ("preFilter", "filter", "preScore", "score")


class SortedScoredNodes:
    """The feasible nodes as ``newSortedNodeScores`` keeps them: Go's ``container/heap`` built from the
    feasible list (Less: higher total, then higher extender randomizer), popped one by one.

    The heap holds each node's sort key beside its name (the total, or (total, randomizer) when
    extenders randomized), so that a comparison is one ``>`` of two keys."""

    def __init__(self, names: list[str], totals: dict[str, int], randomizer: dict[str, int] | None = None) -> None:
        self._h = list(names)
        if randomizer:
            self._k: list[Any] = [(totals[n], randomizer.get(n, 0)) for n in names]
        else:
            self._k = [totals[n] for n in names]
        n = len(self._h)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def _down(self, i0: int, n: int) -> None:
        h = self._h
        k = self._k
        i = i0
        while True:
            j = 2 * i + 1
            if j >= n:
                break
            if j + 1 < n and k[j + 1] > k[j]:  # Less(j+1, j): the higher key comes first
                j += 1
            if not k[j] > k[i]:
                break
            h[i], h[j] = h[j], h[i]
            k[i], k[j] = k[j], k[i]
            i = j

    def pop(self) -> str:
        """``heap.Pop``: the best node (ties: whichever the heap's shape puts first)."""
        h = self._h
        k = self._k
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        k[0], k[n] = k[n], k[0]
        self._down(0, n)
        k.pop()
        return h.pop()

    def peek(self) -> str | None:
        return self._h[0] if self._h else None

    def __len__(self) -> int:
        return len(self._h)


def signed_plugins(fw: Framework) -> tuple[list[SignPlugin], list[str]]:
    """The profile's plugins that sign pods, and those at a signed extension point that cannot."""
    seen: set[str] = set()
    signing: list[SignPlugin] = []
    unsupported: list[str] = []
    for ep in SIGNED_EXTENSION_POINTS:
        for pl in fw.plugins.lists[ep]:
            if pl.name in seen:
                continue
            seen.add(pl.name)
            if isinstance(pl, SignPlugin):
                signing.append(pl)
            else:
                unsupported.append(pl.name)
    return signing, unsupported


@dataclass
class BatchRecord:
    """What OpportunisticBatching did in one cycle (``Trace.batch``)."""

    #: The pod's signature exists (None: why not).
    signable: bool = False
    why_not_signable: str | None = None
    #: The node hint offered to this cycle, and why there was none.
    hint: str | None = None
    no_hint_reason: str | None = None
    #: The pod was placed on the hint without scoring.
    batched: bool = False
    #: What the cycle left for the next pod.
    stored: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "signable": self.signable,
            "notSignableBecause": self.why_not_signable,
            "hint": self.hint,
            "noHintBecause": self.no_hint_reason,
            "batched": self.batched,
            "stored": self.stored,
        }


@dataclass
class _State:
    signature: str
    sorted_nodes: SortedScoredNodes


@dataclass
class _LastCycle:
    cycle: int
    chosen_node: str
    succeeded: bool


class OpportunisticBatch:
    """One profile's batch state across cycles (``runtime.OpportunisticBatch``)."""

    def __init__(self, fw: Framework, *, has_extenders: bool = False) -> None:
        self.fw = fw
        self.signing, unsupported = signed_plugins(fw)
        self.disabled_because: str | None = None
        if has_extenders:
            self.disabled_because = "the configuration has extenders"
        elif unsupported:
            self.disabled_because = f"plugin(s) {', '.join(unsupported)} do not sign pods"
        self.state: _State | None = None
        self.last: _LastCycle | None = None

    # -- SignPod --------------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[str | None, str | None]:
        """The pod's signature (canonical JSON of the fragments), or None and why."""
        if self.disabled_because:
            return None, f"signatures are disabled for this profile: {self.disabled_because}"
        sig: dict[str, Any] = {SCHEDULER_NAME: pod.scheduler_name}
        for pl in self.signing:
            try:
                fragments, st = pl.sign_pod(pod)
            except Exception as e:  # as an Error status upstream: the pod is just not signable
                return None, f"{pl.name}: sign_pod raised {type(e).__name__}: {e}"
            if not st.is_success():
                return None, f"{pl.name}: {st.message()}"
            for f in fragments or ():
                sig[f.key] = f.value
        return canonical(sig), None

    # -- GetNodeHint ----------------------------------------------------------------------
    def get_node_hint(self, state: CycleState, pod: Pod, cycle: int) -> tuple[str | None, str | None, BatchRecord]:
        """(hint, signature, record): called after PreFilter succeeded in cycle number ``cycle``."""
        signature, why = self.sign_pod(pod)
        rec = BatchRecord(signable=signature is not None, why_not_signable=why)
        reason = self._incompatible(state, pod, signature, cycle)
        if reason is not None:
            rec.no_hint_reason = reason
            return None, signature, rec
        assert self.state is not None
        rec.hint = self.state.sorted_nodes.pop()
        return rec.hint, signature, rec

    def _incompatible(self, state: CycleState, pod: Pod, signature: str | None, cycle: int) -> str | None:
        """Why the stored results cannot give this pod a hint (``batchStateCompatible``), None when they can."""
        if self.state is None or len(self.state.sorted_nodes) == 0:
            return "no stored results"
        last = self.last
        if last is None or cycle != last.cycle + 1:
            return "the previous cycle did not place a pod of this profile"
        if not last.succeeded:
            return "the previous pod failed"
        if signature is None or signature != self.state.signature:
            return "the pod's signature differs from the stored one" if signature else "the pod is not signable"
        ni = self.fw.snapshot.get(last.chosen_node)
        if ni is None:
            return f"the previous pod's node {last.chosen_node} is gone"
        if not self.fw.filtering.run_filter_plugins(state, pod, ni).is_rejected():
            return f"the previous pod's node {last.chosen_node} still fits this pod, so the stored order may be wrong"
        return None

    # -- StoreScheduleResults -------------------------------------------------------------
    def store_schedule_results(
        self,
        signature: str | None,
        hinted: str | None,
        chosen: str,
        other_nodes: SortedScoredNodes | None,
        cycle: int,
        rec: BatchRecord | None = None,
    ) -> None:
        """After a node was chosen (before Reserve): remember this cycle, and its sorted scores when useful."""
        self.last = _LastCycle(cycle, chosen, True)
        if hinted and hinted == chosen:
            if rec is not None:
                rec.batched = True
                rec.stored = "kept: the rest of the stored order serves the next pod"
            return
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _State(signature, other_nodes)
            if rec is not None:
                rec.stored = f"the {len(other_nodes)} other scored node(s), best first, for the next pod with this signature"
            return
        self.state = None
        if rec is not None:
            rec.stored = "nothing: " + ("the pod is not signable" if signature is None else "no other node was scored")
