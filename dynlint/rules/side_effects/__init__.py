"""DYN3xx: Python side effects — printing, logging, I/O and other calls Dynamo cannot put in a graph. One module
per kind: `output` (print, logging, warnings, stream writes, tensors formatted as text), `state` (global,
closure and module attributes mutated), `system` (clock, operating system, serialisation, debugger, files),
`randomness` (Python's `random`, RNG state), `tensor_state` (deep copies, `requires_grad`, backward, new
parameters)."""
