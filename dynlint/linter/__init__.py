"""The torch-free engine: reading sources, planning units, the worker pool, the walker, the index and project
view, findings, configuration, file discovery, the cache, suppressions, positions, the fixer (it applies
edits) and the rule contract with its registry. Nothing here knows torch; nothing here imports a package
above it (analysis, fixes, rules, report, runtime_check, the front ends)."""
