"""The rule catalog. Importing this package registers every rule family."""
from dynlint.rules import (  # noqa: F401
    control_flow, dynamic_shapes, host_sync, recompiles, setup, side_effects, untraceable,
)
from dynlint.rules.base import REGISTRY, Example, Rule, all_rules, register  # noqa: F401
