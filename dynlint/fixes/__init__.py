"""Rewrite builders for the automatic fixes: what a rule offers as `--fix`. Built on analysis; the fixer in
core applies the edits."""
