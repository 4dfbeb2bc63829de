"""The guard model: how Dynamo's guards react when a Python value that compiled code reads changes between
calls, per kind of value. The recompile rules report a change only where it recompiles on every new value
(until `recompile_limit` makes the function run eagerly); a value that recompiles once and then becomes
dynamic, or once per value of a pair, is the expected cost of compiling, not a hazard.

Measured on torch 2.13 by bench/guards.py (the table in docs/guards.md); tests/test_guards.py runs each
entry's probe under real Dynamo and checks the behaviour written here.
"""
from __future__ import annotations

EVERY_CHANGE = "every change"     # one recompile per new value, up to recompile_limit
ONCE = "once"                     # one recompile, then a dynamic value (or both values cached)
A_FEW = "a few"                   # more than once, bounded (once per branch of a condition)
NEVER = "never"

BEHAVIOUR = {
    "module int attribute": EVERY_CHANGE,      # `self.calls += 1` in forward, `model.step = i` in the loop
    "module float attribute": ONCE,
    "module bool attribute": ONCE,             # flipped: one graph per value, both kept
    "module list attribute": EVERY_CHANGE,     # appended to in forward, read or not
    "module attribute reset each call": NEVER,  # `self.mult = 1` before `self.mult *= 2`
    "object int attribute": ONCE,              # a plain object's counter: a sampler's `self.step_index += 1`
    "global int": EVERY_CHANGE,                # `global n; n += 1`
    "global list": EVERY_CHANGE,               # appended to, read or not
    "closure int": ONCE,                       # `nonlocal calls; calls += 1`
    "closure int in range": EVERY_CHANGE,      # `for _ in range(calls)`
    "int argument": ONCE,
    "int argument in range": EVERY_CHANGE,
    "str argument": EVERY_CHANGE,              # a new string each call
    "growing list argument": EVERY_CHANGE,     # a history list passed and iterated
}


def hazard(kind: str) -> bool:
    """Does a change of this kind of value recompile on every new value?"""
    return BEHAVIOUR[kind] == EVERY_CHANGE
