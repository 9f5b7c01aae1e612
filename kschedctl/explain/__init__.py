"""The dry run: one scheduling cycle for one pod, recorded step by step."""

from kschedctl.explain.cycle import explain_pod
from kschedctl.explain.trace import Trace

__all__ = ["Trace", "explain_pod"]
