"""The guard probes of bench/guards.py (data): one small program per guard kind, each a compiled function or
module and `run(i)`, one call with the i-th value of whatever the probe varies. bench/guards.py measures them
under real Dynamo; bench/releases.py under each torch release; tests/test_guards.py checks the guard model
against them."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional

CALLS = 10


@dataclass
class Probe:
    kind: str                     # the guard kind, as the table groups them
    change: str                   # what changes between calls, in the user's words
    source: str                   # its imports, then (indented) the code that defines run(i)
    distinct: int = CALLS         # how many distinct values the calls pass
    config: Dict[str, object] = field(default_factory=dict)     # torch._dynamo.config for this probe
    model: Optional[str] = None   # the entry of dynlint/analysis/guards.py's BEHAVIOUR it measures
    expected: bool = False        # its recompile is what a first new input costs (new sizes)


FN = "import torch\n"
MOD = "import torch\nfrom torch import nn\n"

# module probes run twice, with one thing changed (a config flag, `dynamic=True`)
COUNTER = MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                return x * 2

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """
STEP_SET_BY_LOOP = MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.step = 0

            def forward(self, x):
                return x * self.step

        model = M()
        m = torch.compile(model)

        def run(i):
            model.step = i
            m(torch.ones(3))
    """

def closure_setter(first: str, body: str, value: str) -> str:
    """A compiled closure that reads the cell `w` (bound to `first`, read by `body`) and a setter of the same
    closure (`nonlocal w; w = v`) that `run(i)` calls with `value` before each call."""
    return FN + f"""

        def make():
            w = {first}

            @torch.compile
            def f(x):
{textwrap.indent(body, " " * 16)}
                return x * 2

            def set_w(v):
                nonlocal w
                w = v
            return f, set_w

        f, set_w = make()

        def run(i):
            set_w({value})
            f(torch.ones(3))
    """


def layers(init: str, body: str, outer: str = "for layer in self.layers:\n    x = layer(x)") -> str:
    """A model of 10 layers whose forward breaks the graph (a print), so Dynamo compiles each layer's
    forward as a frame of its own, entered once per layer: `init` sets up a layer (it gets its index `i`),
    `body` runs before the break, `outer` is the model's forward. Run under `no_grad` so that the layers'
    inputs all agree on `requires_grad` (the first layer's input is the user's, the others' are outputs)."""
    def indent(text: str, n: int) -> str:
        return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * n)
    return MOD + f"""

        class Layer(nn.Module):
            def __init__(self, i):
                super().__init__()
{indent(init, 16)}

            def forward(self, x, bias=None, state=None):
{indent(body, 16)}
                print("layer")
                return x * 2

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer(i) for i in range(10)])

            def forward(self, x):
{indent(outer, 16)}
                return x

        m = torch.compile(M())

        def run(i):
            with torch.no_grad():
                m(torch.ones(3))
    """


PROBES: List[Probe] = [
    # ---- arguments
    Probe("int argument", "an int argument, a new value each call", FN + """

        @torch.compile
        def f(x, n):
            return x * n

        def run(i):
            f(torch.ones(3), i + 1)
    """, model="int argument"),
    Probe("int argument", "an int argument used as `range(n)`", FN + """

        @torch.compile
        def f(x, n):
            for _ in range(n):
                x = x + 1
            return x

        def run(i):
            f(torch.ones(3), i + 1)
    """, model="int argument in range"),
    Probe("int argument", "an int argument indexing a Python list (`table[n]`), read first elsewhere", FN + """

        TABLE = [0.5 ** k for k in range(16)]

        @torch.compile
        def f(x, n):
            y = x * n
            return y + TABLE[n]

        def run(i):
            f(torch.ones(3), i + 1)
    """, model="number argument specialised again"),
    Probe("float argument", "a float argument handed to `math.exp`, read first elsewhere", FN + """

        import math

        @torch.compile
        def f(x, t):
            y = x * t
            return y * math.exp(-t / 4.0)

        def run(i):
            f(torch.ones(3), 0.5 * (i + 1))
    """, model="number argument specialised again"),
    Probe("int argument", "an int argument indexing a tensor (`x[n]`)", FN + """

        @torch.compile
        def f(x, n):
            return x[n] * 2

        def run(i):
            f(torch.ones(16, 3), i)
    """),
    Probe("int argument", "an int argument in a Python condition (`if n > 4`)", FN + """

        @torch.compile
        def f(x, n):
            if n > 4:
                return x + n
            return x - n

        def run(i):
            f(torch.ones(3), i + 1)
    """, model="int argument in condition"),
    Probe("int argument", "an int argument, `automatic_dynamic_shapes=False`", FN + """

        @torch.compile
        def f(x, n):
            return x * n

        def run(i):
            f(torch.ones(3), i + 1)
    """, config={"automatic_dynamic_shapes": False}),
    Probe("int argument", "an int argument, `torch.compile(dynamic=True)`", FN + """

        def g(x, n):
            return x * n

        f = torch.compile(g, dynamic=True)

        def run(i):
            f(torch.ones(3), i + 1)
    """),
    Probe("int argument", "an int argument that never changes", FN + """

        @torch.compile
        def f(x, n):
            return x * n

        def run(i):
            f(torch.ones(3), 4)
    """, distinct=1),
    Probe("float argument", "a float argument, a new value each call", FN + """

        @torch.compile
        def f(x, t):
            return x * t

        def run(i):
            f(torch.ones(3), 0.5 + i)
    """, model="float argument"),
    Probe("float argument", "a float argument in a Python condition (`if t > 2.0`)", FN + """

        @torch.compile
        def f(x, t):
            if t > 4.0:
                return x * t
            return x / t

        def run(i):
            f(torch.ones(3), 0.5 + i)
    """),
    Probe("bool argument", "a bool argument, alternating", FN + """

        @torch.compile
        def f(x, skip):
            return x + 1 if skip else x * 2

        def run(i):
            f(torch.ones(3), i % 2 == 0)
    """, distinct=2, model="bool argument"),
    Probe("str argument", "a str argument, two values alternating", FN + """

        @torch.compile
        def f(x, act):
            return torch.relu(x) if act == "relu" else torch.tanh(x)

        def run(i):
            f(torch.ones(3), ("relu", "tanh")[i % 2])
    """, distinct=2),
    Probe("str argument", "a str argument, a new value each call", FN + """

        @torch.compile
        def f(x, name):
            return x * len(name)

        def run(i):
            f(torch.ones(3), "n" * (i + 1))
    """, model="str argument"),
    Probe("None or tensor", "an argument that is None, then a tensor, alternating", FN + """

        @torch.compile
        def f(x, mask):
            return x + 1 if mask is None else x * mask

        def run(i):
            f(torch.ones(3), None if i % 2 else torch.ones(3))
    """, distinct=2, model="None or tensor argument"),
    Probe("dtype argument", "a dtype argument, two values alternating", FN + """

        @torch.compile
        def f(x, dtype):
            return x.to(dtype) * 2

        def run(i):
            f(torch.ones(3), (torch.float32, torch.float64)[i % 2])
    """, distinct=2, model="dtype argument"),
    Probe("dict argument", 'a dict argument whose key set changes (`opts.get("clip")`)', FN + """

        @torch.compile
        def f(x, opts):
            clip = opts.get("clip")
            return x.clamp(max=clip) if clip is not None else x * 2

        def run(i):
            f(torch.ones(3), {"clip": 1.0} if i % 2 else {})
    """, distinct=2),
    Probe("dict argument", "an int value of a dict argument, a new value each call", FN + """

        @torch.compile
        def f(x, opts):
            return x * opts["scale"]

        def run(i):
            f(torch.ones(3), {"scale": i + 1})
    """, model="dict argument"),
    Probe("list argument", "a list argument that grows by one each call, iterated", FN + """

        history = []

        @torch.compile
        def f(x, past):
            for p in past:
                x = x + p
            return x

        def run(i):
            history.append(torch.ones(3))
            f(torch.ones(3), history)
    """, model="growing list argument"),
    Probe("tuple argument", "an int item of a tuple argument, a new value each call", FN + """

        @torch.compile
        def f(x, size):
            return x * size[0]

        def run(i):
            f(torch.ones(3), (i + 1, 2))
    """, model="tuple argument"),
    Probe("tensor argument", "a tensor argument whose first size changes", FN + """

        @torch.compile
        def f(x):
            return x * 2

        def run(i):
            f(torch.ones(i + 2, 3))
    """, expected=True),
    Probe("tensor argument", "a first size that changes, with `torch._dynamo.mark_dynamic(x, 0)`", FN + """

        @torch.compile
        def f(x):
            return x * 2

        def run(i):
            x = torch.ones(i + 2, 3)
            torch._dynamo.mark_dynamic(x, 0)
            f(x)
    """),
    Probe("tensor argument", "a tensor argument's dtype, two values alternating", FN + """

        @torch.compile
        def f(x):
            return x * 2

        def run(i):
            f(torch.ones(3, dtype=(torch.float32, torch.float64)[i % 2]))
    """, distinct=2, model="tensor dtype argument"),
    Probe("enum argument", "an Enum member argument, two members alternating", FN + """

        import enum

        class Reduction(enum.Enum):
            MEAN = "mean"
            SUM = "sum"

        @torch.compile
        def f(x, how):
            return x.mean() if how is Reduction.MEAN else x.sum()

        def run(i):
            f(torch.ones(3), (Reduction.MEAN, Reduction.SUM)[i % 2])
    """, distinct=2, model="enum argument"),
    Probe("tensor argument", "a tensor argument's rank, two values alternating", FN + """

        @torch.compile
        def f(x):
            return x.sum() * 2

        def run(i):
            f(torch.ones(*(3,) * (1 + i % 2)))
    """, distinct=2, model="tensor rank argument"),
    Probe("tensor argument", "`requires_grad` of a tensor argument, alternating", FN + """

        @torch.compile
        def f(x):
            return x * 2

        def run(i):
            f(torch.ones(3, requires_grad=bool(i % 2)))
    """, distinct=2, model="tensor requires_grad argument"),
    # ---- module state
    Probe("module attribute", "an int attribute of an nn.Module, `self.calls += 1` in forward", COUNTER, model="module int attribute"),
    Probe("module attribute", "an int attribute of an nn.Module, `self.calls += 1`, "
          "`allow_unspec_int_on_nn_module=True`", COUNTER, config={"allow_unspec_int_on_nn_module": True}, model="module int attribute, unspecialised"),
    Probe("module attribute", "an int attribute of an nn.Module set by the training loop (`model.step = i`), "
          "read in forward", STEP_SET_BY_LOOP, model="module int attribute"),
    Probe("module attribute", "an int attribute of an nn.Module set by the training loop, read in forward, "
          "`torch.compile(dynamic=True)`", STEP_SET_BY_LOOP.replace("torch.compile(model)", "torch.compile(model, dynamic=True)")),
    Probe("module attribute", "an int attribute of an nn.Module set by the training loop, never read in forward",
          MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.step = 0

            def forward(self, x):
                return x * 2

        model = M()
        m = torch.compile(model)

        def run(i):
            model.step = i
            m(torch.ones(3))
    """),
    Probe("module attribute", "a float attribute of an nn.Module set between calls, read in forward", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 1.0

            def forward(self, x):
                return x * self.scale

        model = M()
        m = torch.compile(model)

        def run(i):
            model.scale = 0.5 + i
            m(torch.ones(3))
    """, model="module float attribute"),
    Probe("module attribute", "a bool attribute of an nn.Module flipped between calls", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.use_bias = True

            def forward(self, x):
                return x + 1 if self.use_bias else x * 2

        model = M()
        m = torch.compile(model)

        def run(i):
            model.use_bias = bool(i % 2)
            m(torch.ones(3))
    """, distinct=2, model="module bool attribute"),
    Probe("module attribute", "a str attribute of an nn.Module set between calls, a mode forward tests", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.mode = "train"

            def forward(self, x):
                return x + 1 if self.mode == "train" else x * 2

        model = M()
        m = torch.compile(model)

        def run(i):
            model.mode = f"mode{i}"
            m(torch.ones(3))
    """, model="module str attribute"),
    Probe("module attribute", "an Enum member attribute of an nn.Module set between calls, three members in turn",
          MOD + """

        import enum

        class Pooling(enum.Enum):
            MEAN = "mean"
            MAX = "max"
            LAST = "last"

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.pooling = Pooling.MEAN

            def forward(self, x):
                if self.pooling is Pooling.MEAN:
                    return x.mean(0)
                return x.amax(0) if self.pooling is Pooling.MAX else x[-1]

        model = M()
        m = torch.compile(model)

        def run(i):
            model.pooling = (Pooling.MEAN, Pooling.MAX, Pooling.LAST)[i % 3]
            m(torch.ones(2, 3))
    """, distinct=3, model="module enum attribute"),
    Probe("module attribute", "a plain tensor attribute of an nn.Module replaced between calls (same shape)",
          MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.offset = torch.zeros(3)

            def forward(self, x):
                return x + self.offset

        model = M()
        m = torch.compile(model)

        def run(i):
            model.offset = torch.full((3,), float(i))
            m(torch.ones(3))
    """),
    Probe("module attribute", "an int attribute reset before it is read, each call "
          "(`self.mult = 1` then `self.mult *= 2`)", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.mult = None

            def forward(self, x):
                self.mult = 1
                self.mult *= 2
                return x * self.mult

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """, distinct=1, model="module attribute reset each call"),
    Probe("module attribute", "a list attribute appended to in forward, never read", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.norms = []

            def forward(self, x):
                self.norms.append(x.sum())
                return x * 2

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """, model="module list attribute"),
    Probe("module attribute", "a dict cache on the module filled in forward, keyed by a size", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}

            def forward(self, x):
                n = x.shape[0]
                if n not in self.cache:
                    self.cache[n] = torch.arange(n)
                return x + self.cache[n][:, None]

        m = torch.compile(M())

        def run(i):
            m(torch.ones(4, 3))
    """, distinct=1, model="module dict cache"),
    Probe("module attribute", "a submodule created lazily on the first forward", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = None

            def forward(self, x):
                if self.proj is None:
                    self.proj = nn.Linear(x.shape[-1], 3)
                return self.proj(x)

        m = torch.compile(M())

        def run(i):
            m(torch.ones(2, 3))
    """, distinct=1, model="module lazy submodule"),
    Probe("module attribute", "an attribute set by forward on its first call, tested for None", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.scales = None

            def forward(self, x):
                if self.scales is None:
                    self.scales = [0.5, 0.25]
                return x * self.scales[0]

        m = torch.compile(M())

        def run(i):
            m(torch.ones(2, 3))
    """, distinct=1, model="lazily set attribute"),
    Probe("module training", "`model.train()` / `model.eval()` alternating", MOD + """

        model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1))
        m = torch.compile(model)

        def run(i):
            model.train(bool(i % 2))
            m(torch.ones(2, 3))
    """, distinct=2),
    Probe("module identity", "another instance of the same module class each call (its own weights)", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                return self.lin(x) * 2

        @torch.compile
        def f(mod, x):
            return mod(x)

        def run(i):
            f(M(), torch.ones(3))
    """),
    Probe("module identity", "a forward hook registered after the first call", MOD + """

        model = nn.Linear(3, 3)
        m = torch.compile(model)

        def run(i):
            if i == 1:
                model.register_forward_hook(lambda mod, args, out: out * 2)
            m(torch.ones(2, 3))
    """, distinct=2),
    # ---- objects other than modules (a sampler, a scheduler)
    Probe("object attribute", "an int attribute of a plain object, `self.step_index += 1` in a compiled method",
          FN + """

        class Sampler:
            def __init__(self):
                self.sigmas = torch.linspace(1, 0, 20)
                self.step_index = 0

            def step(self, x):
                sigma = self.sigmas[self.step_index]
                self.step_index += 1
                return x * sigma

        s = Sampler()
        step = torch.compile(s.step)

        def run(i):
            step(torch.ones(3))
    """, model="object int attribute"),
    Probe("object attribute", "an int attribute of a plain object, `self.count += 1`, never read otherwise",
          FN + """

        class Counter:
            def __init__(self):
                self.count = 0

            def step(self, x):
                self.count += 1
                return x * 2

        c = Counter()
        step = torch.compile(c.step)

        def run(i):
            step(torch.ones(3))
    """, model="object int attribute"),
    Probe("object attribute", "a list attribute of a plain object appended to in a compiled method", FN + """

        class Recorder:
            def __init__(self):
                self.seen = []

            def step(self, x):
                self.seen.append(x.sum())
                return x * 2

        r = Recorder()
        step = torch.compile(r.step)

        def run(i):
            step(torch.ones(3))
    """, model="object list attribute"),
    Probe("object attribute", "an int attribute of a plain object that starts as None (`if self.i is None`)",
          FN + """

        class Sampler:
            def __init__(self):
                self.sigmas = torch.linspace(1, 0, 20)
                self.index = None

            def step(self, x):
                if self.index is None:
                    self.index = 0
                sigma = self.sigmas[self.index]
                self.index += 1
                return x * sigma

        s = Sampler()
        step = torch.compile(s.step)

        def run(i):
            step(torch.ones(3))
    """),
    Probe("object attribute", "a float attribute of a config object set between calls", FN + """

        class Config:
            scale = 1.0

        cfg = Config()

        @torch.compile
        def f(x):
            return x * cfg.scale

        def run(i):
            cfg.scale = 0.5 + i
            f(torch.ones(3))
    """, model="object float attribute set between calls"),
    Probe("object attribute", "an int attribute of a config object counted up between calls", FN + """

        class Config:
            step = 0

        cfg = Config()

        @torch.compile
        def f(x):
            return x * cfg.step

        def run(i):
            cfg.step += 1
            f(torch.ones(3))
    """, model="object int attribute set between calls"),
    Probe("object attribute", "a string attribute of a config object set between calls, compared in an `if`",
          FN + """

        class Config:
            mode = "mode0"

        cfg = Config()

        @torch.compile
        def f(x):
            if cfg.mode == "mode0":
                return x * 2
            return x * 3

        def run(i):
            cfg.mode = f"mode{i}"
            f(torch.ones(3))
    """, model="object str attribute set between calls"),
    Probe("argument", "a 0-d tensor from a loop over a 1-d tensor, indexing a tensor", FN + """

        alphas = torch.linspace(1.0, 0.1, 20)

        @torch.compile
        def f(x, t):
            return x * alphas[t]

        def run(i):
            f(torch.ones(3), torch.arange(20)[i])
    """, model="0-d tensor index argument"),
    Probe("global", "a global string set between calls, compared in an `if`", FN + """

        MODE = "mode0"

        @torch.compile
        def f(x):
            if MODE == "mode0":
                return x * 2
            return x * 3

        def run(i):
            global MODE
            MODE = f"mode{i}"
            f(torch.ones(3))
    """, model="global str"),
    # ---- globals, closures
    Probe("global", "a global int, `global n; n += 1` in the compiled function", FN + """

        n = 0

        @torch.compile
        def f(x):
            global n
            n += 1
            return x * 2

        def run(i):
            f(torch.ones(3))
    """, model="global int"),
    Probe("global", "a global float set between calls, read in the compiled function", FN + """

        SCALE = 1.0

        @torch.compile
        def f(x):
            return x * SCALE

        def run(i):
            global SCALE
            SCALE = 0.5 + i
            f(torch.ones(3))
    """, model="global float"),
    Probe("global", "a global bool flag set between calls, read in an `if` of the compiled function", FN + """

        DEBUG = False

        @torch.compile
        def f(x):
            if DEBUG:
                x = x.clamp(-1, 1)
            return x * 2

        def run(i):
            global DEBUG
            DEBUG = i % 2 == 1
            f(torch.ones(3))
    """, model="global bool"),
    Probe("global", "a bool attribute of a module-level config set between calls, read in an `if`", FN + """

        class Config:
            use_bias = False

        cfg = Config()

        @torch.compile
        def f(x):
            if cfg.use_bias:
                x = x + 1
            return x * 2

        def run(i):
            cfg.use_bias = i % 2 == 1
            f(torch.ones(3))
    """, model="object bool attribute set between calls"),
    Probe("global", "a global list appended to in the compiled function, never read", FN + """

        SEEN = []

        @torch.compile
        def f(x):
            SEEN.append(x.sum())
            return x * 2

        def run(i):
            f(torch.ones(3))
    """, model="global list"),
    Probe("global", "a global dict that the compiled function stores a tensor in, the same key each call", FN + """

        CACHE = {}

        @torch.compile
        def f(x):
            CACHE["last"] = x * 2
            return x + 1

        def run(i):
            f(torch.ones(3))
    """, model="global dict store"),
    Probe("closure", "a closure int, `nonlocal calls; calls += 1` in the compiled function", FN + """

        def make():
            calls = 0

            @torch.compile
            def f(x):
                nonlocal calls
                calls += 1
                return x * 2
            return f

        f = make()

        def run(i):
            f(torch.ones(3))
    """, model="closure int"),
    Probe("closure", "a closure int used as `range(calls)`, changed in the compiled function", FN + """

        def make():
            calls = 1

            @torch.compile
            def f(x):
                nonlocal calls
                for _ in range(calls):
                    x = x + 1
                calls += 1
                return x
            return f

        f = make()

        def run(i):
            f(torch.ones(3))
    """, model="closure int in range"),
    Probe("closure", "a closure float that a setter of the closure sets between calls (`nonlocal w; w = v`)",
          closure_setter("0.5", "x = x * w", "0.5 + i"), model="closure float"),
    Probe("closure", "a closure bool flag that a setter sets between calls, alternating, read in an `if`",
          closure_setter("False", "if w:\n    x = x + 1", "i % 2 == 1"), model="closure bool"),
    Probe("closure", "a closure string that a setter sets between calls, a new value each call, compared in an "
          "`if`", closure_setter('"m0"', 'if w == "m0":\n    x = x + 1', '"m%d" % i'), model="closure str"),
    Probe("closure", "an instance of a class a function defines, made at each call (`class Box: ...; return "
          "Box(x)`), read by the compiled function", FN + """

        def wrap(x):
            class Box:
                def __init__(self, v):
                    self.v = v
            return Box(x)

        @torch.compile
        def f(b):
            return b.v + 1

        def run(i):
            f(wrap(torch.ones(3)))
    """, model="class made at each call"),
    # ---- frames of their own: a layer whose forward breaks the graph is compiled once per layer entry
    Probe("frame", "a layer index (`self.index = i`) read by a layer whose forward breaks the graph",
          layers("self.index = i", "x = x * self.index"), model="frame int attribute per instance"),
    Probe("frame", "a flag that differs between layers (`self.flag = i % 2 == 1`), the forward breaks",
          layers("self.flag = i % 2 == 1", "if self.flag:\n    x = x + 1"), distinct=2,
          model="frame bool attribute per instance"),
    Probe("frame", "a string picked per layer (`self.kind = ('a', 'b', 'c')[i % 3]`), the forward breaks",
          layers("self.kind = ('a', 'b', 'c')[i % 3]", "if self.kind == 'a':\n    x = x + 1"), distinct=3,
          model="frame value attribute per instance"),
    Probe("frame", "an argument None for the first layer, a tensor for the others, the forward breaks",
          layers("pass", "if bias is None:\n    bias = x\nx = x + bias",
                 "bias = None\nfor layer in self.layers:\n    x = layer(x, bias)\n    bias = x"), distinct=2,
          model="frame None or tensor"),
    Probe("frame", "a flag the layer sets on an object all layers share (`state.ready = True`), the forward "
          "breaks", layers("pass", "if not state.ready:\n    x = x + 1\nstate.ready = True",
                           "import types\ns = types.SimpleNamespace(ready=False)\nfor layer in self.layers:\n"
                           "    x = layer(x, state=s)"), distinct=2, model="frame flag it sets"),
    Probe("frame", "a flag the layer sets on its own item of an object all layers share "
          "(`cache.items[i].ready = True`, a lazily started KV cache), the forward breaks",
          layers("self.i = i", "item = state.items[self.i]\nif not item.ready:\n    x = x + 1\nitem.ready = True",
                 "import types\nitems = [types.SimpleNamespace(ready=False) for _ in self.layers]\n"
                 "s = types.SimpleNamespace(items=items)\nfor layer in self.layers:\n    x = layer(x, state=s)"),
          model="frame item flag it sets"),
    Probe("frame", "the layers' input: the user's tensor at the first layer, the layer before's output (which "
          "requires grad) at the others, grad mode on, the forward breaks", MOD + """

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                h = self.lin(x)
                print("layer")
                return h.relu()

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer() for _ in range(4)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x

        m = torch.compile(M())

        def run(i):
            m(torch.ones(2, 3))
    """, distinct=2, model="frame requires_grad per entry"),
    Probe("frame", "an int argument 1 at one call and 2 at another of a helper that breaks the graph", MOD + """

        class M(nn.Module):
            def helper(self, x, shift=1):
                print("helper")
                return x * shift

            def forward(self, x):
                return self.helper(x) + self.helper(x, shift=2)

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """, distinct=2, model="frame int argument"),
    Probe("frame", "a str argument of a helper that breaks the graph, another string at each of three calls",
          MOD + """

        class M(nn.Module):
            def log(self, name, x):
                key = "train/" + name
                print(key)
                return x * len(key)

            def forward(self, x):
                return self.log("loss", x) + self.log("acc", x) + self.log("lr", x)

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """, distinct=3, model="frame str argument"),
    Probe("frame", "rows picked by `torch.where(levels == level)` in a loop that breaks the graph, handed to a "
          "helper: 4, 2, 1 and 3 rows", FN + """

        def pool(feats, rois):
            return feats.sum() * rois[:, 1:].mean(1)

        def per_level(feats, rois, levels):
            out = []
            for level in range(4):
                idx = torch.where(levels == level)[0]
                out.append(pool(feats, rois[idx]))
            return out

        f = torch.compile(per_level)

        def run(i):
            f(torch.ones(2, 3), torch.ones(10, 5), torch.tensor([0, 0, 0, 0, 1, 1, 2, 3, 3, 3]))
    """, model="frame data-dependent size"),
    Probe("loop", "a counter `n = n + 1` in a `while` loop whose condition is a tensor's value (the body is "
          "resumed at every iteration)", FN + """

        @torch.compile
        def settle(v):
            n = 0
            while v.abs().sum() > 1.0:
                v = v / 3
                n = n + 1
            return v, n

        def run(i):
            settle(torch.full((2,), 5.0))
    """, model="int local carried across a loop's break"),
    Probe("flag set by compiled code", "`if not self.ready: ...; self.ready = True` in `forward` (a lazy first "
          "call)", MOD + """

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.ready = False

            def forward(self, x):
                if not self.ready:
                    self.ready = True
                    return x * 0
                return x * 2

        m = torch.compile(M())

        def run(i):
            m(torch.ones(3))
    """, distinct=2, model="flag set by compiled code"),
    Probe("wrapper around frames", "a decorator's wrapper around a different function at each call, each "
          "compiled as a frame", "import functools\n" + FN + """

        def deco(func):
            @functools.wraps(func)
            def wrapper(x):
                return func(x)
            return wrapper
""" + "".join(f"""
        @deco
        def g{j}(x):
            return x + {j}
""" for j in range(CALLS)) + """
        compiled = [""" + ", ".join(f"torch.compile(g{j})" for j in range(CALLS)) + """]

        def run(i):
            compiled[i](torch.ones(3))
    """, model="wrapper around frames"),
    Probe("values after a break", "`sizes = counts.tolist()` (a break) read by `x.split(sizes)`, new counts "
          "each call", FN + """

        @torch.compile
        def f(x, route):
            sizes = torch.bincount(route, minlength=4).tolist()
            return [part.sum() for part in x.split(sizes)]

        def run(i):
            torch.manual_seed(i)
            f(torch.ones(16, 2), torch.randint(0, 4, (16,)))
    """, model="values after a break"),
    # ---- global state of torch
    Probe("grad mode", "`torch.no_grad()` around every other call", FN + """

        @torch.compile
        def f(x):
            return x * 2

        def run(i):
            with torch.set_grad_enabled(bool(i % 2)):
                f(torch.ones(3, requires_grad=True))
    """, distinct=2),
    Probe("autocast", '`torch.autocast("cpu")` around every other call', FN + """

        @torch.compile
        def f(x, w):
            return x @ w

        def run(i):
            with torch.autocast("cpu", enabled=bool(i % 2)):
                f(torch.ones(2, 3), torch.ones(3, 3))
    """, distinct=2),
]
