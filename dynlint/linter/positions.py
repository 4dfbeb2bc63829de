"""Where a reported node stands, without position metadata for its whole unit.

libcst computes positions by generating the code of the whole module (a big function: tens of ms), for
the sake of one finding. Here only a skeleton is generated: the statement that holds the node, inside its
enclosing compound statements with every other block cut down to `pass`. The skeleton keeps every column
(the same indentation tokens), and the statement's real line comes from Python's own parser (`ast`, in C),
by following the same path of blocks. Where this does not apply (a compound statement reported as a whole,
a node outside the statement being visited, a block `_blocks` does not map) it returns None, and the caller
computes positions the slow way.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_PASS = cst.SimpleStatementLine(body=[cst.Pass()])
Span = Tuple[int, int, int, int]          # start line, start column, end line, end column (unit coordinates)


def _is_statement(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement))


def _blocks(lib: cst.CSTNode, tree: ast.AST) -> List[Tuple[Sequence[cst.CSTNode], list]]:
    """(libcst statements, ast statements) of each block of a module or compound statement, paired."""
    if isinstance(lib, cst.Module):
        return [(lib.body, tree.body)]
    out = []
    body = getattr(lib, "body", None)
    if isinstance(body, cst.IndentedBlock):
        out.append((body.body, tree.body))
    orelse = getattr(lib, "orelse", None)
    if isinstance(orelse, cst.If):                     # elif: the If is the one statement of ast's orelse
        out.append(((orelse,), tree.orelse))
    elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        out.append((orelse.body.body, tree.orelse))
    for lh, th in zip(getattr(lib, "handlers", ()), getattr(tree, "handlers", ())):
        if isinstance(lh.body, cst.IndentedBlock):
            out.append((lh.body.body, th.body))
    final = getattr(lib, "finalbody", None)
    if final is not None and isinstance(final.body, cst.IndentedBlock):
        out.append((final.body.body, tree.finalbody))
    for lc, tc in zip(getattr(lib, "cases", ()), getattr(tree, "cases", ())):
        if isinstance(lc.body, cst.IndentedBlock):
            out.append((lc.body.body, tc.body))
    return out


def _ast_child(lib: cst.CSTNode, tree: ast.AST, child: cst.CSTNode) -> Optional[ast.AST]:
    """The ast statement where `child`, a statement in one of lib's blocks, begins."""
    for stmts, trees in _blocks(lib, tree):
        i = 0
        for s in stmts:
            if s is child:
                return trees[i] if i < len(trees) else None
            i += len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
    return None


def _cut(block, keep: Optional[cst.CSTNode], new: Optional[cst.CSTNode]):
    """A block holding only `new` where it held `keep`, else only `pass`."""
    if not isinstance(block, cst.IndentedBlock):
        return block
    return block.with_changes(body=[new if any(s is keep for s in block.body) else _PASS])


def _skeleton(stmt: cst.CSTNode, keep: Optional[cst.CSTNode] = None, new: Optional[cst.CSTNode] = None):
    """`stmt` with each block cut to `pass`, except the one holding `keep`, which holds `new` instead."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return stmt
    changes = {}
    if hasattr(stmt, "body"):
        changes["body"] = _cut(stmt.body, keep, new)
    orelse = getattr(stmt, "orelse", None)
    if orelse is not None:
        if orelse is keep:
            changes["orelse"] = new
        elif isinstance(orelse, cst.Else) and any(s is keep for s in getattr(orelse.body, "body", ())):
            changes["orelse"] = orelse.with_changes(body=_cut(orelse.body, keep, new))
        else:
            changes["orelse"] = None
    if getattr(stmt, "handlers", ()):
        changes["handlers"] = [h.with_changes(body=_cut(h.body, keep, new)) for h in stmt.handlers]
    if getattr(stmt, "finalbody", None) is not None:
        changes["finalbody"] = stmt.finalbody.with_changes(body=_cut(stmt.finalbody.body, keep, new))
    if getattr(stmt, "cases", ()):
        changes["cases"] = [c.with_changes(body=_cut(c.body, keep, new)) for c in stmt.cases]
    return stmt.with_changes(**changes)


def fast_position(module: cst.Module, tree: ast.Module, chain: Sequence[cst.CSTNode],
                  node: cst.CSTNode) -> Optional[Span]:
    """The node's span in unit coordinates, or None where this shortcut does not apply.
    chain: the walk's path from the module down to the node being visited (the reported node is that one or
    below it). tree: `ast.parse` of the same text."""
    if isinstance(node, cst.BaseCompoundStatement):
        return None                          # its span ends with its last block: the skeleton has cut that
    path = [n for n in chain if _is_statement(n)]
    if not path:
        return None
    parent, t = module, tree
    for stmt in path:                        # the ast statement where the innermost one begins
        t = _ast_child(parent, t, stmt)
        if t is None:
            return None
        parent = stmt
    inner = skeleton = _skeleton(path[-1])
    for stmt, outer in zip(reversed(path), reversed(path[:-1])):
        skeleton = _skeleton(outer, stmt, skeleton)
    positions = MetadataWrapper(module.with_changes(body=[skeleton], header=[], footer=[]),
                                unsafe_skip_copy=True).resolve(PositionProvider)
    r = positions.get(node)
    if r is None:
        return None                          # not inside the innermost statement (a rule reported elsewhere)
    # the real line of the innermost statement (of its first small statement) against the skeleton's
    s = positions.get(inner.body[0] if isinstance(inner, cst.SimpleStatementLine) else inner)
    if s is None:
        return None
    shift = t.lineno - s.start.line
    return r.start.line + shift, r.start.column, r.end.line + shift, r.end.column
