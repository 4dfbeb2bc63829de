"""The graph-break types (Dynamo's `gb_type`) that several side-effect rules predict."""

BUILTIN = "Failed to trace builtin operator"
SKIPPED = "Attempted to call function marked as skipped"
UNSUPPORTED_METHOD = "Unsupported method call"
