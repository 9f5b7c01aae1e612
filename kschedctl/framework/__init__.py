"""The scheduling framework: what a plugin sees (Status, CycleState, NodeInfo, the
protocols of each extension point) and the runtime that runs plugins in profile order.

Nothing in here knows about files, clusters or terminals.
"""
