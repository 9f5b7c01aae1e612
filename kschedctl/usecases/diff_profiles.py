"""``diff-profiles``: what two scheduler configurations, or two profiles of one, decide for the same pods.

Both sides run under one version (the configurations are loaded with the same features), so a
difference is the configurations' own and nothing is attributed to a version; the pods and the
comparison are ``usecases.comparison``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kschedctl.usecases.comparison import ComparisonRequest, compare
from kschedctl.usecases.request import Hooks

if TYPE_CHECKING:
    from kschedctl.whatif.diff import DiffReport


@dataclass(kw_only=True)
class DiffProfilesRequest(ComparisonRequest):
    """Two configurations (or two profiles of one) as sides A and B, and the pods to compare them on."""


def diff_profiles(request: DiffProfilesRequest, hooks: Hooks | None = None) -> DiffReport:
    """What each side decides for every pod, and where they differ (see ``whatif.diff``)."""
    return compare(request, hooks or Hooks())
