"""The ground floor: Kubernetes basics that every other part of kschedctl builds on.

Quantities, object names and label rules, label selectors, Go-compatible value formatting, the
Kubernetes version and feature-gate identity, and CEL. Nothing here knows about pods, nodes,
the scheduler's configuration or its framework, so this package imports nothing of kschedctl
except ``kschedctl.errors``; every floor above may import it.
"""
