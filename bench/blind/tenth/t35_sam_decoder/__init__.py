"""Segment-anything-style promptable mask decoder (prompt encoder + two-way mask decoder + predictor)."""
