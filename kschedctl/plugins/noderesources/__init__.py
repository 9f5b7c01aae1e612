"""NodeResourcesFit and NodeResourcesBalancedAllocation, sharing the resource-allocation scorer.

Upstream model: ``pkg/scheduler/framework/plugins/noderesources/fit.go and balanced_allocation.go``.
"""
