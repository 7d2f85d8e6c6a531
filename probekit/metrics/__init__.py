"""Metrics over score arrays and item tables; a model is seen only by the small helpers that produce those arrays."""
