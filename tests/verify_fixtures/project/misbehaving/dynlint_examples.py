"""Examples that kill, hang or fail their worker; the verify run must report each and carry on."""
import ctypes
import subprocess
import sys
import time

import torch

import dynlint


@dynlint.example
def segfaults():
    ctypes.string_at(0)  # reads address 0: SIGSEGV


@dynlint.example(timeout=12)  # room for a slow `import torch` before it starts hanging
def hangs_forever():
    subprocess.Popen(["sleep", "987654"])  # a grandchild that must die with the worker's process group
    while True:
        time.sleep(1)


@dynlint.example
def calls_sys_exit():
    sys.exit(3)


@dynlint.example
def raises_in_user_code():
    def explode(x):
        raise ValueError("boom from user code")

    return explode, [(torch.ones(2),)]
