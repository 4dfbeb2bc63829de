"""An example file whose import fails."""
import module_that_does_not_exist  # noqa: F401

import dynlint


@dynlint.example
def never_built():
    raise AssertionError("unreachable: the import above fails first")
