"""The rule catalog. Importing this package registers every rule family."""
from dynlint.rules import control_flow, dynamic_shapes, host_sync, recompiles, side_effects  # noqa: F401
from dynlint.rules.base import REGISTRY, Example, Rule, all_rules, register  # noqa: F401
