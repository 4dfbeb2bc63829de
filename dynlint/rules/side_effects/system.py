"""Calls into the world outside the graph: the clock, the operating system, serialisation and hashing, the
debugger, files and buffers."""
from __future__ import annotations

from dynlint.linter.rule import Example, register
from dynlint.rules.common import NamedCallRule
from dynlint.rules.side_effects.common import BUILTIN, SKIPPED, UNSUPPORTED_METHOD


@register
class ClockReadInCompiledCode(NamedCallRule):
    """Checks for clock and calendar reads (`time.time()`, `time.perf_counter()`, `time.sleep()`,
    `datetime.datetime.now()`) inside traced code."""
    code = "DYN307"
    name = "clock-read-in-compiled-code"
    message = "`{call}()` reads the clock: Dynamo does not trace the `time` module and breaks the graph"
    fix = "Time the compiled call from outside (`t0 = time.perf_counter(); out = model(x)`), or use the torch profiler"
    gb_types = (SKIPPED, UNSUPPORTED_METHOD)
    why = """
        The `time` module's functions are C builtins Dynamo marks as skipped (`Attempted to call function
        marked as skipped`), and `datetime.now()` is an unsupported method call: the graph ends there and
        resumes afterwards. The float read there is a constant of the resumed graph, which is guarded on it,
        so the next call recompiles too. Timing inside a compiled function also measures tracing, not the
        kernels.
    """
    INVALID = [Example("""
        import time

        import torch

        @torch.compile
        def timed(x):
            start = time.perf_counter()
            y = x.relu() * 2
            return y, time.perf_counter() - start
    """, "timed(torch.ones(4))")]
    VALID = [Example("""
        import time

        import torch

        @torch.compile
        def step(x):
            return x.relu() * 2

        def timed(x):
            start = time.perf_counter()
            y = step(x)
            return y, time.perf_counter() - start
    """, "timed(torch.ones(4))")]
    prefixes = ("time.",)
    exact = frozenset({"datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
                       "datetime.date.today"})


@register
class SystemQueryInCompiledCode(NamedCallRule):
    """Checks for operating-system and process queries (`os.getpid()`, `os.path.exists()`, `os.listdir()`,
    `socket.gethostname()`, `threading.get_ident()`, `glob.glob()`) inside traced code."""
    code = "DYN309"
    name = "system-query-in-compiled-code"
    message = "`{call}()` asks the operating system: Dynamo skips it and breaks the graph"
    fix = "Query once outside the compiled code (at construction time) and keep the answer as a constant"
    gb_types = (SKIPPED,)
    why = """
        These are C functions (or Python wrappers around them) that Dynamo marks as skipped (`Attempted to
        call function marked as skipped`), so the graph ends at the call. Their answers rarely change
        between calls anyway. `os.environ.get` and `os.path.join` are traced and fine.
    """
    INVALID = [Example("""
        import os

        import torch

        @torch.compile
        def maybe_dump(x):
            y = x * 2
            if os.path.exists("/tmp/dump-activations"):
                y = y + 0
            return y
    """, "maybe_dump(torch.ones(4))")]
    VALID = [Example("""
        import os

        import torch

        DUMP = os.path.exists("/tmp/dump-activations")

        @torch.compile
        def maybe_dump(x):
            y = x * 2
            if DUMP or os.environ.get("DUMP_ACTIVATIONS"):
                y = y + 0
            return y
    """, "maybe_dump(torch.ones(4))")]
    exact = frozenset({
        "os.getpid", "os.getppid", "os.getcwd", "os.listdir", "os.scandir", "os.stat", "os.lstat", "os.urandom",
        "os.cpu_count", "os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rename", "os.walk",
        "os.getuid", "os.getlogin", "os.uname", "os.path.exists", "os.path.isfile", "os.path.isdir",
        "os.path.getsize", "os.path.getmtime", "os.path.realpath", "os.path.abspath", "os.path.islink",
        "shutil.which", "glob.glob", "socket.gethostname", "getpass.getuser", "threading.get_ident",
        "threading.current_thread", "threading.active_count", "resource.getrusage", "signal.getsignal",
        "locale.getlocale", "sys.getsizeof", "sys.getrefcount", "atexit.register",
    })


@register
class SerialisationInCompiledCode(NamedCallRule):
    """Checks for serialisation, encoding and hashing calls (`json.dumps`, `pickle.dumps`, `hashlib.md5`,
    `base64.b64encode`, `zlib.crc32`) inside traced code."""
    code = "DYN310"
    name = "serialisation-in-compiled-code"
    message = "`{call}()` cannot be traced by Dynamo: it breaks the graph"
    fix = "Serialise outside the compiled function: return tensors and encode them in the caller"
    gb_types = (UNSUPPORTED_METHOD, SKIPPED)
    why = """
        `json` runs a C encoder whose methods Dynamo does not support (`Unsupported method call`); `pickle`,
        `hashlib`, `base64`, `binascii`, `zlib` and `csv` are C extensions Dynamo skips (`Attempted to call
        function marked as skipped`). Either way the graph ends at the call.
    """
    INVALID = [Example("""
        import json

        import torch

        @torch.compile
        def described(x, meta: dict):
            y = x * 2
            tag = json.dumps(meta)
            return y, tag
    """, "described(torch.ones(4), {'step': 1})")]
    VALID = [Example("""
        import json

        import torch

        @torch.compile
        def scaled(x):
            return x * 2

        def described(x, meta: dict):
            return scaled(x), json.dumps(meta)
    """, "described(torch.ones(4), {'step': 1})")]
    prefixes = ("json.", "pickle.", "base64.", "binascii.", "zlib.", "hashlib.", "csv.")
    exact = frozenset({"codecs.encode", "codecs.decode"})


@register
class DebuggerInCompiledCode(NamedCallRule):
    """Checks for debugger entry points (`breakpoint()`, `pdb.set_trace()`) inside traced code."""
    code = "DYN312"
    name = "debugger-in-compiled-code"
    message = "`{call}()` stops in the debugger: Dynamo breaks the graph there"
    fix = "Remove it, or debug the eager function (`torch.compiler.disable`, or `TORCH_COMPILE_DISABLE=1`)"
    gb_types = (BUILTIN, SKIPPED)
    why = """
        A debugger needs a real Python frame; Dynamo cannot trace `breakpoint()` (`Failed to trace builtin
        operator`) or `pdb.set_trace()` (`Attempted to call function marked as skipped`) and breaks the
        graph, so the code you step through afterwards is a resume function, not your original frame.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def inspect_me(x):
                y = x * 2
                breakpoint()
                return y + 1
        """, "inspect_me(torch.ones(4))"),
        Example("""
            import pdb

            import torch

            @torch.compile
            def inspect_me(x):
                y = x * 2
                pdb.set_trace()
                return y + 1
        """),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def inspect_me(x):
            y = x * 2
            return y + 1
    """, "inspect_me(torch.ones(4))")]
    exact = frozenset({"breakpoint", "pdb.set_trace", "pdb.post_mortem", "pdb.pm", "pdb.run", "ipdb.set_trace",
                       "pudb.set_trace"})


@register
class FileIOInCompiledCode(NamedCallRule):
    """Checks for file and buffer I/O (`open()`, `io.BytesIO()`, `torch.save()`, `torch.load()`) inside
    traced code."""
    code = "DYN313"
    name = "file-io-in-compiled-code"
    message = "`{call}()` does I/O Dynamo cannot trace: it breaks the graph"
    fix = "Do I/O outside the compiled function: return the tensors and save them from the caller"
    gb_types = (BUILTIN, "Unsupported context manager", UNSUPPORTED_METHOD, SKIPPED)
    why = """
        `open()` is a builtin Dynamo cannot trace (`Failed to trace builtin operator`); used as a context
        manager it also makes Dynamo skip the whole function (`Unsupported context manager`). In-memory
        buffers (`io.BytesIO`) and `torch.save`/`torch.load` break the same way (`Unsupported method call`).
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def logged(x):
                y = x.relu()
                with open("/dev/null", "a") as f:
                    f.write("ok\\n")
                return y * 2
        """, "logged(torch.ones(4))"),
        Example("""
            import io

            import torch

            @torch.compile
            def checkpointed(x):
                y = x.relu()
                torch.save(y, io.BytesIO())
                return y * 2
        """, "checkpointed(torch.ones(4))"),
    ]
    VALID = [Example("""
        import io

        import torch

        @torch.compile
        def step(x):
            return x.relu() * 2

        def checkpointed(x):
            y = step(x)
            torch.save(y, io.BytesIO())
            return y
    """, "checkpointed(torch.ones(4))")]
    exact = frozenset({"open", "io.open", "io.BytesIO", "io.StringIO", "io.FileIO", "torch.save", "torch.load",
                       "numpy.save", "numpy.load", "numpy.savetxt", "numpy.loadtxt"})
