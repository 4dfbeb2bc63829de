"""DYN5xx: recompile hazards — Python values that change between calls of a compiled function.

Dynamo specialises a graph on the Python values it sees (ints, floats, bools, strings, module flags, grad
mode) and guards on them; a call that fails the guards compiles again. These rules find the call sites and
code shapes that make the guarded values change. One module per kind: `scalars` (scalar arguments that vary:
loop variables, `range()` bounds), `constants` (constants that differ between call sites), `call_sites` (what set-up code
changes between calls: the argument set, module attributes), `growing` (a list argument whose length changes), `state_set` (globals, config
attributes and the state of objects the compiled code reads),
`tensor_args` (tensors of another dtype, rank or `requires_grad` from call to call),
`modes` (train/eval, grad mode, autocast around a compiled call), `frames` (values that differ between the
entries of a frame Dynamo compiles on its own, flags compiled code sets for the next call), `wrappers` (a
decorator's wrapper shared by several frames), `host_values` (Python values made at a graph break and read by
the resumed code), `loop_state` (a counter carried across the break in a loop's condition), `caches` (a dict the caller keeps that the compiled code fills); `common` holds what several of them, and other families, share.
"""
