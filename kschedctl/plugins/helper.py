"""Small rules shared by several plugins (kube-scheduler's plugins/helper package).

Upstream model: ``pkg/scheduler/framework/plugins/helper/normalize_score.go and helper/shape_score.go``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kschedctl.framework.interfaces import NodeScore
from kschedctl.framework.status import MAX_NODE_SCORE, Status


def use_fast_paths(handle: object) -> bool:
    """Whether the framework building a plugin lets it count from the snapshot's indexes
    (``Framework.fast_paths``); plugins built over ``kschedctl.plugins.bare_framework`` (as tests build
    them) or a handle without the flag take the reference path. A plugin asks once, when it is built
    (the framework sets the flag before building plugins)."""
    return bool(getattr(handle, "fast_paths", False))


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero; Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """Go's ``math.Round``: the nearest integer, halves away from zero (Python's round() goes to even)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> Status:
    """``helper.DefaultNormalizeScore``: scale to [0, max_priority] by the highest score (integer division)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return Status()
    for s in scores:
        score = go_div(max_priority * s.score, max_count)
        if reverse:
            score = max_priority - score
        s.score = score
    return Status()


def default_normalize_scores(max_priority: int, reverse: bool, scores: list[int]) -> Status:
    """``default_normalize_score`` on a plain list of scores, in place (for ``normalize_scores``)."""
    max_count = max(scores, default=0)
    if max_count <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return Status()
    if min(scores) >= 0:  # all non-negative: floor division is Go's truncation
        if reverse:
            scores[:] = [max_priority - max_priority * s // max_count for s in scores]
        else:
            scores[:] = [max_priority * s // max_count for s in scores]
        return Status()
    for i, s in enumerate(scores):
        score = go_div(max_priority * s, max_count)
        scores[i] = max_priority - score if reverse else score
    return Status()


@dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    utilization: int
    score: int


def build_broken_linear_function(shape: list[FunctionShapePoint]):  # type: ignore[no-untyped-def]
    """``helper.BuildBrokenLinearFunction``: piecewise-linear score of a utilization (integer math)."""

    def f(p: int) -> int:
        for i, pt in enumerate(shape):
            if p <= pt.utilization:
                if i == 0:
                    return shape[0].score
                prev = shape[i - 1]
                return prev.score + go_div((pt.score - prev.score) * (p - prev.utilization), pt.utilization - prev.utilization)
        return shape[-1].score

    return f


MAX_CUSTOM_PRIORITY_SCORE = 10
__all__ = ["MAX_CUSTOM_PRIORITY_SCORE", "MAX_NODE_SCORE", "FunctionShapePoint", "build_broken_linear_function", "default_normalize_score", "default_normalize_scores", "go_div", "go_round", "use_fast_paths"]
