"""`synthgen chain`: hard -> medium -> easy stepping-stone chains, and the disjoint baseline."""
