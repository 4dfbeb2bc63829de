"""Write dynlint/analysis/torch_returns.py: what each torch callable returns, read from torch's own signatures.

    python bench/torch_signatures.py            # the torch installed here (the static pass never imports it)
    python bench/torch_signatures.py --check    # exit 1 if the committed table differs from this torch's

The static pass must know that `torch.nonzero(x)` is a tensor, `torch.numel(x)` an int and `x.size()` a Size
without importing torch. Rather than lists written by hand, the table is generated from the declarations torch
ships: the stubs of its C functions and tensor methods (`torch/_C/_VariableFunctions.pyi`, class `TensorBase`
in `torch/_C/__init__.pyi`), `torch/nn/functional.pyi`, and the annotated Python of `torch/_tensor.py` and
`torch/functional.py`. Each overload's return annotation becomes a kind; a name whose overloads return
different kinds gets them all (`tensor|tensors` for `nonzero(as_tuple=...)`). `torch.linalg`, `torch.fft` and
`torch.special` are C functions without stubs: every public callable of theirs returns tensors (or a named
tuple of them), so they are listed from the imported modules.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterable, Set

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dynlint" / "analysis" / "torch_returns.py"

_SCALARS = {"_bool": "bool", "bool": "bool", "_int": "int", "int": "int", "SymInt": "int", "_float": "float",
            "float": "float", "Number": "number", "_complex": "number", "complex": "number", "Size": "size",
            "_size": "size", "_dtype": "dtype", "dtype": "dtype", "_device": "device", "device": "device",
            "str": "str", "_str": "str", "None": "none", "_layout": "layout", "layout": "layout",
            "Tensor": "tensor", "Self": "tensor", "Parameter": "tensor", "TensorBase": "tensor"}


def kind_of(annotation: ast.expr) -> Set[str]:
    """The kinds an annotation allows: tensor, tensors (a tuple, list or named tuple of tensors), int, float,
    bool, number, size, ints, list, dtype, device, str, none, other."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return kind_of(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return {"other"}
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return kind_of(annotation.left) | kind_of(annotation.right)
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return {"none"}
    text = ast.unparse(annotation)
    if isinstance(annotation, ast.Subscript):
        head = ast.unparse(annotation.value)
        if head in ("Union", "typing.Union", "Optional", "typing.Optional"):
            inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            kinds = set().union(*(kind_of(e) for e in inner))
            return kinds | ({"none"} if "Optional" in head else set())
        if head in ("tuple", "list", "Tuple", "List", "Sequence", "typing.Tuple", "typing.List"):
            inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            inner_kinds = set().union(*(kind_of(e) for e in inner if not isinstance(e, ast.Constant)))
            if "tensor" in inner_kinds and inner_kinds <= {"tensor", "none"}:        # (Tensor, Tensor | None)
                return {"tensors"}
            if inner_kinds <= {"int", "size"}:
                return {"ints"}
            return {"list"} if head.lower() == "list" else {"other"}
        if head.rsplit(".", 1)[-1].lstrip("_") in ("TypeIs", "TypeGuard"):
            return {"bool"}
        if head in ("Literal", "typing.Literal"):
            return {"other"}
    if text.startswith("torch.return_types."):
        return {"tensors"}
    if text in ("list", "List"):
        return {"list"}
    return {_SCALARS.get(text.rsplit(".", 1)[-1], "other")}


def _defs(body: Iterable[ast.stmt]):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("__"):
            yield node


def _is_property(fn: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in ("property", "_C._TensorBase.property") or ast.unparse(d).endswith(".getter")
               for d in fn.decorator_list)


def _collect(defs, into: Dict[str, Set[str]], props: Dict[str, Set[str]] = None, prefix: str = "") -> None:
    for fn in defs:
        if fn.name.startswith("_") or fn.returns is None:
            continue
        target = props if props is not None and _is_property(fn) else into
        target.setdefault(prefix + fn.name, set()).update(kind_of(fn.returns))


def _annotated(body, into: Dict[str, Set[str]]) -> None:
    """`shape: Size`, `grad: Tensor | None`: a stub's attributes."""
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                not node.target.id.startswith("_"):
            into.setdefault(node.target.id, set()).update(kind_of(node.annotation))


def _class_body(tree: ast.Module, name: str):
    return next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def _exported(module) -> Set[str]:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    return {n for n in names if callable(getattr(module, n, None))}


def generate() -> str:
    import torch

    base = Path(torch.__file__).parent
    parse = lambda rel: ast.parse((base / rel).read_text(encoding="utf-8"))     # noqa: E731
    functions: Dict[str, Set[str]] = {}
    methods: Dict[str, Set[str]] = {}
    attributes: Dict[str, Set[str]] = {}
    top = set(dir(torch))
    for rel in ("_C/_VariableFunctions.pyi", "functional.py", "__init__.py"):
        _collect(_defs(parse(rel).body), functions, prefix="torch.")
    functions = {k: v for k, v in functions.items() if k[len("torch."):] in top}
    nn_functional = set(dir(importlib.import_module("torch.nn.functional")))
    for rel in ("nn/functional.pyi", "nn/functional.py", "_C/_nn.pyi"):
        found: Dict[str, Set[str]] = {}
        _collect(_defs(parse(rel).body), found, prefix="torch.nn.functional.")
        for k, v in found.items():
            if k.rsplit(".", 1)[1] in nn_functional and k not in functions:
                functions[k] = v
    tensor_base = _class_body(parse("_C/__init__.pyi"), "TensorBase")
    _collect(_defs(tensor_base), methods, attributes)
    _annotated(tensor_base, attributes)
    _collect(_defs(_class_body(parse("_tensor.py"), "Tensor")), methods, attributes)
    for name in ("linalg", "fft", "special"):
        module = importlib.import_module(f"torch.{name}")
        for fn in _exported(module):
            functions.setdefault(f"torch.{name}.{fn}", {"tensor"})
    # the fields of torch's named-tuple returns (`x.topk(k).values`, `torch.linalg.slogdet(a).logabsdet`)
    import torch.return_types
    fields = {f for t in torch.return_types.all_return_types for f in getattr(t, "__match_args__", ())}
    version = torch.__version__.split("+")[0]
    return render(version, functions, methods, attributes, fields)


def _table(name: str, entries: Dict[str, Set[str]], doc: str) -> str:
    by_kind: Dict[str, list] = {}
    for key, kinds in sorted(entries.items()):
        by_kind.setdefault("|".join(sorted(kinds)), []).append(key)
    lines = [f"# {doc}", f"{name} = {{"]
    for kind in sorted(by_kind):
        lines.append(f"    {kind!r}: frozenset({{")
        line = "       "
        for key in by_kind[kind]:
            item = f" {key!r},"
            if len(line) + len(item) > 118:
                lines.append(line)
                line = "       "
            line += item
        lines += [line, "    }),"]
    return "\n".join(lines + ["}", ""])


def render(version: str, functions, methods, attributes, fields) -> str:
    return "\n".join([
        f'"""What torch {version}\'s callables return, generated by bench/torch_signatures.py from torch\'s own',
        "signatures (stubs and annotations): do not edit by hand. Keys of each table are kinds (`tensor`, `tensors`",
        "for a tuple, list or named tuple of them, `int`, `float`, `bool`, `number`, `size`, `ints`, `list`, `dtype`,",
        '`device`, `str`, `none`, `other`), joined with `|` where overloads differ."""',
        "",
        f"TORCH_VERSION = {version!r}",
        "",
        _table("FUNCTIONS", functions, "torch.*, torch.nn.functional.*, torch.linalg/fft/special.*, by kind returned"),
        _table("TENSOR_METHODS", methods, "Tensor methods, by kind returned"),
        _table("TENSOR_ATTRIBUTES", attributes, "Tensor properties, by kind"),
        "# The fields of the named tuples torch returns (torch.return_types: topk, sort, max(dim), slogdet, ...)",
        "RETURN_FIELDS = frozenset({",
        *textwrap.wrap(" ".join(f"{f!r}," for f in sorted(fields)), 114, initial_indent="    ",
                       subsequent_indent="    "),
        "})",
        "",
        "",
        "def returns(table: dict) -> dict:",
        '    """name -> kind, from a table of kind -> names."""',
        "    return {name: kind for kind, names in table.items() for name in names}",
        "",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    args = ap.parse_args()
    text = generate()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT.relative_to(ROOT)} differs from this torch's signatures")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    counts = re.findall(r"^(\w+) = \{", text, re.M)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text.splitlines())} lines: {', '.join(counts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
