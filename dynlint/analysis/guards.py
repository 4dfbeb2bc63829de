"""The guard model: how Dynamo's guards react when a Python value that compiled code reads changes between
calls, per kind of value. The recompile rules report state that code changes (an attribute, a global, a
closure cell, an argument) wherever the change recompiles at all, and say how often: on every new value
(until `recompile_limit` makes the function run eagerly: a hazard) or once (then the value is dynamic, or
both values are cached). Where Dynamo installs each guard, and so where a finding stands, is
analysis/guard_lines.py's.

Measured on torch 2.13 by bench/guards.py (the table in docs/guards.md); tests/test_guards.py runs each
entry's probe under real Dynamo and checks the behaviour written here.
"""
from __future__ import annotations

import re

EVERY_CHANGE = "every change"     # one recompile per new value, up to recompile_limit
ONCE = "once"                     # one recompile, then a dynamic value (or both values cached)
A_FEW = "a few"                   # more than once, bounded (once per branch of a condition)
NEVER = "never"

BEHAVIOUR = {
    "module int attribute": EVERY_CHANGE,      # `self.calls += 1` in forward, `model.step = i` in the loop
    "module int attribute, unspecialised": ONCE,   # with `allow_unspec_int_on_nn_module = True`
    "module float attribute": ONCE,
    "module bool attribute": ONCE,             # flipped: one graph per value, both kept
    "module str attribute": EVERY_CHANGE,      # `model.mode = "eval"`: guarded on the string
    "module enum attribute": EVERY_CHANGE,     # `model.pooling = Pooling.MAX`: by identity, a graph per member
    "module list attribute": EVERY_CHANGE,     # appended to in forward, read or not
    "module attribute reset each call": NEVER,  # `self.mult = 1` before `self.mult *= 2`
    "module dict cache": ONCE,                 # `self.cache[key] = ...` in forward: once per new key
    "module lazy submodule": ONCE,             # `self.proj = nn.Linear(...)` on the first forward
    "lazily set attribute": ONCE,              # `if self.scales is None: self.scales = ...`: set by the first call
    "object int attribute": ONCE,              # a plain object's counter: a sampler's `self.step_index += 1`
    "object list attribute": EVERY_CHANGE,     # appended to in a compiled method
    "global int": EVERY_CHANGE,                # `global n; n += 1`
    "global float": ONCE,                      # `global SCALE; SCALE = 0.5 + i` between calls
    "global bool": ONCE,                       # `global DEBUG; DEBUG = on` between calls: one graph per value
    "object bool attribute set between calls": ONCE,   # `cfg.use_bias = True`: one graph per value
    "object float attribute set between calls": ONCE,  # `cfg.scale = 0.5 + i` on a module-level config
    "object int attribute set between calls": EVERY_CHANGE,  # `cfg.step += 1`: a global object, specialised
    "object str attribute set between calls": EVERY_CHANGE,  # `cfg.activation = "gelu"`: guarded on the string
    "global str": EVERY_CHANGE,                # `MODE = "fast"` between calls
    "global list": EVERY_CHANGE,               # appended to, read or not
    "global dict store": ONCE,                 # `CACHE["last"] = y`: empty, then not
    "closure int": ONCE,                       # `nonlocal calls; calls += 1`
    "closure float": ONCE,                     # `nonlocal w; w = v` in a setter, between calls
    "closure bool": ONCE,                      # `nonlocal flag; flag = on` between calls: one graph per value
    "closure str": EVERY_CHANGE,               # `nonlocal mode; mode = name` between calls
    "closure int in range": EVERY_CHANGE,      # `for _ in range(calls)`
    "class made at each call": EVERY_CHANGE,   # an instance of a class a function defines, one class per call
    "int argument": ONCE,
    "float argument": ONCE,
    "bool argument": ONCE,                     # one graph per value, both kept
    "None or tensor argument": ONCE,           # one graph each
    "dtype argument": ONCE,                    # one graph per dtype
    "tensor dtype argument": ONCE,             # a tensor argument made with another dtype: one graph each
    "tensor requires_grad argument": ONCE,     # `requires_grad` flipped: one graph each
    "tensor rank argument": ONCE,              # a tensor of another rank: one graph each
    "dict argument": ONCE,                     # an int value in it: then dynamic
    "tuple argument": ONCE,                    # an int item of it: then dynamic
    "int argument in range": EVERY_CHANGE,
    # a dynamic number specialised again: `table[n]` of a Python list, `math.exp(-n / tau)`
    "number argument specialised again": EVERY_CHANGE,
    "int argument in condition": A_FEW,        # `if n > 4`: dynamic after one change, guarded on the test
    "str argument": EVERY_CHANGE,              # a new string each call
    "enum argument": ONCE,                     # an Enum member, guarded by identity: one graph per member
    "growing list argument": EVERY_CHANGE,     # a history list passed and iterated
    "0-d tensor index argument": EVERY_CHANGE,  # `self.alphas[t]`, `t` from `for t in timesteps`: `t.item() == 900`
    # a function compiled as a frame of its own (a graph break inside it), entered once per layer
    "frame int attribute per instance": EVERY_CHANGE,   # `self.layer_idx`: a new value for every layer
    "frame bool attribute per instance": ONCE,          # a flag that differs between layers
    "frame value attribute per instance": EVERY_CHANGE,  # a string or a config entry picked per layer
    "frame None or tensor": ONCE,                       # None for the first layer, a tensor for the others
    "frame requires_grad per entry": ONCE,              # the input, then outputs (analysis/grad_entries.py)
    "frame int argument": ONCE,                         # `shift=2` at one call, the default 1 at another
    "frame str argument": EVERY_CHANGE,                 # `log("loss", v)`, `log("acc", a)`: each string its own
    "frame data-dependent size": A_FEW,                 # rows kept by a mask: a new size, then 0 or 1 rows
    "frame flag it sets": ONCE,                         # `if not state.ready: ...; state.ready = True`
    "frame item flag it sets": EVERY_CHANGE,            # each layer's own item of a shared cache: every layer
    "values after a break": ONCE,
    "int local carried across a loop's break": ONCE,    # `steps += 1` in `while x.norm() > tol:`                       # `sizes = t.tolist()` read by the resumed code
    "flag set by compiled code": ONCE,                  # `if not self.ready: ...; self.ready = True`
    "wrapper around frames": EVERY_CHANGE,              # one wrapper's code compiled per function it wraps
}


_UNSPEC = re.compile(r"allow_unspec_int_on_nn_module\s*=\s*True")


def module_int(source: str) -> str:
    """The kind of a module's int attribute in a file: unspecialised when the file turns on Dynamo's
    `allow_unspec_int_on_nn_module` (config assignment or `config.patch`)."""
    return "module int attribute, unspecialised" if _UNSPEC.search(source) else "module int attribute"


def hazard(kind: str) -> bool:
    """Does a change of this kind of value recompile on every new value?"""
    return BEHAVIOUR[kind] == EVERY_CHANGE


def recompiles(kind: str) -> bool:
    """Does a change of this kind of value recompile at all?"""
    return BEHAVIOUR[kind] != NEVER


EFFECT = {
    EVERY_CHANGE: "every new value recompiles, up to the recompile limit",
    ONCE: "the first change recompiles, then the value is dynamic or both graphs are kept",
    A_FEW: "it recompiles a few times (once per branch it takes)",
}


KIND_EFFECT = {
    "module dict cache": "each new key recompiles once",
    "frame value attribute per instance": "each distinct value compiles the frame again",
    "values after a break": "the first new values recompile the resumed code, then they are dynamic",
    "module lazy submodule": "the call that creates it recompiles once",
    "module enum attribute": "each new member recompiles once (guarded by identity): a graph per member",
    "lazily set attribute": "the call after the one that sets it compiles again, once",
    "flag set by compiled code": "once: then both values have a graph",
    "wrapper around frames": "each wrapped function compiles it again, up to the recompile limit",
    "frame item flag it sets": "every layer's entry compiles the frame again, up to the recompile limit, after "
                               "which the remaining layers run eagerly",
    "frame data-dependent size": "the first new size compiles the frame again with a dynamic size, and an entry "
                                 "with 0 or 1 rows (Dynamo's dynamic sizes assume at least 2) compiles it once more",
    "frame requires_grad per entry": "the second layer's entry recompiles once (in training); both graphs are kept",
}


def effect(kind: str) -> str:
    """How a change of this kind of value recompiles, in the words of a finding's message."""
    return KIND_EFFECT.get(kind) or EFFECT[BEHAVIOUR[kind]]
