"""DeepSpeed-style mixture of experts: top-1 gating with capacity, random token selection, expert dispatch."""
