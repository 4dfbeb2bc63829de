"""Rewrite builders for the automatic fixes: what a rule offers as `--fix`. Built on analysis; the fixer in
linter applies the edits. `common` (Autofix, torch's name, templates), then one module per technique: `guards`
(eager-only code, assertions, tensor logic), `where` (branches as `torch.where`), `scalars` (values kept as
0-d tensors), `buffers` (counters as buffers)."""
