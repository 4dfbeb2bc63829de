import io
import random
import unittest

import torch

from . import test_recompiles


def main():
    torch.manual_seed(0)
    random.seed(0)
    suite = unittest.defaultTestLoader.loadTestsFromModule(test_recompiles)
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    if result.errors or result.failures:
        raise RuntimeError("\n".join(tb for _, tb in result.errors + result.failures))
    return result.testsRun
