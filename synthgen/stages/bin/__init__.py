"""`synthgen bin`: kept problems split into difficulty bins by pass rate."""
