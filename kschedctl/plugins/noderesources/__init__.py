"""NodeResourcesFit and NodeResourcesBalancedAllocation, sharing the resource-allocation scorer."""
