"""The dry run: one scheduling cycle for one pod, recorded step by step.

Upstream model: ``pkg/scheduler/schedule_one.go``.
"""

from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.trace import Trace

__all__ = ["Trace", "explain_pod"]
