"""pycparser helpers the rewrites share: copies, child replacement, the names an expression reads and the
names a region assigns, and what a pointer expression points to."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast, c_generator

GEN = c_generator.CGenerator()
# functions returning fresh memory: a pointer defined by one of them is an array of its own
ALLOCATORS = frozenset({"malloc", "calloc", "aligned_alloc", "memalign", "valloc", "_mm_malloc",
                        "__builtin_malloc", "__builtin_calloc", "xmalloc", "xcalloc"})


def text(node: c_ast.Node) -> str:
    return GEN.visit(node)


def clone(node):
    """A copy of a pycparser tree (lists of children copied, nodes not shared)."""
    if node is None:
        return None
    out = copy.copy(node)
    for slot in getattr(out, "__slots__", ()):
        if isinstance(getattr(out, slot, None), list):
            setattr(out, slot, list(getattr(out, slot)))
    for name, child in node.children():
        set_child(out, name, clone(child))
    return out


def set_child(node: c_ast.Node, name: str, value) -> None:
    """Replace the child that pycparser's children() calls *name* (`args`, `exprs[2]`)."""
    m = re.fullmatch(r"(\w+)\[(\d+)\]", name)
    if m:
        getattr(node, m.group(1))[int(m.group(2))] = value
    else:
        setattr(node, name, value)


def transform(node, fn):
    """*node* with every subtree for which fn(subtree) returns a node replaced by it (top-down: a replaced
    subtree is not visited again); fn returns None to look inside."""
    new = fn(node)
    if new is not None:
        return new
    for name, child in list(node.children()):
        set_child(node, name, transform(child, fn))
    return node


def walk(node):
    """Every node of the tree, parents first."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        yield n
        stack.extend(reversed([c for _, c in n.children()]))


def ids(node) -> set[str]:
    """The identifiers an expression reads (not struct member names, not called function names)."""
    out: set[str] = set()

    def visit(n):
        if n is None:
            return
        if isinstance(n, c_ast.ID):
            out.add(n.name)
        elif isinstance(n, c_ast.StructRef):
            visit(n.name)
        elif isinstance(n, c_ast.FuncCall):
            visit(n.args)
        elif isinstance(n, (c_ast.Typename, c_ast.Cast)):
            visit(n.expr if isinstance(n, c_ast.Cast) else None)
        else:
            for _, c in n.children():
                visit(c)

    visit(node)
    return out


def root(e) -> str | None:
    """The variable an lvalue or a member/element chain starts from (`a` of `a->b[i].c`, `*a`)."""
    while isinstance(e, (c_ast.ArrayRef, c_ast.StructRef, c_ast.UnaryOp, c_ast.Cast)):
        if isinstance(e, c_ast.UnaryOp) and e.op not in ("*", "&"):
            return None
        e = e.name if isinstance(e, (c_ast.ArrayRef, c_ast.StructRef)) else e.expr
    return e.name if isinstance(e, c_ast.ID) else None


def assigned(node, direct: bool = False) -> dict[str, list[c_ast.Node]]:
    """name -> the nodes that may change it inside *node*: assignments to it or (unless *direct*) through it
    (`a[i] = `, `s.n = `), ++/--, its address taken, a loop's init and step; declarations with an
    initializer are not counted (a declaration is the definition)."""
    out: dict[str, list[c_ast.Node]] = {}
    for n in walk(node):
        target = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            target = n.expr
        if direct and target is not None and not isinstance(target, c_ast.ID):
            continue
        if target is not None and (name := root(target)) is not None:
            out.setdefault(name, []).append(n)
    return out


def declarations(node) -> dict[str, list[c_ast.Decl]]:
    """name -> the declarations of that name inside *node* (function prototypes left out)."""
    out: dict[str, list[c_ast.Decl]] = {}
    for n in walk(node):
        if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
            out.setdefault(n.name, []).append(n)
    return out


def pointer_level(t) -> int:
    """How many subscripts a declared type takes (pointer and array levels)."""
    k = 0
    while isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        k += 1
        t = t.type
    return k


def base_type(t) -> list[str]:
    """The words of a declared type's base (`double` of `double *p[3]`); [] for structs and others."""
    while isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl, c_ast.TypeDecl)):
        t = t.type
    return list(t.names) if isinstance(t, c_ast.IdentifierType) else []


def is_single_pointer(decl: c_ast.Decl) -> bool:
    """`T *p` with T not a pointer or array (the one kind of pointer the rewrites resolve)."""
    return isinstance(decl.type, c_ast.PtrDecl) and isinstance(decl.type.type, c_ast.TypeDecl)


@dataclass(frozen=True, eq=False)
class Target:
    """Where a pointer points: element `base[rows...][offset]` (offset None: 0)."""

    base: str
    rows: tuple
    offset: c_ast.Node | None

    def key(self) -> str:
        return f"{self.base}|{'|'.join(text(r) for r in self.rows)}|{text(self.offset) if self.offset else ''}"

    def names(self) -> set[str]:
        out = set()
        for e in (*self.rows, self.offset):
            out |= ids(e) if e is not None else set()
        return out

    def access(self, subscript: c_ast.Node, coord=None) -> c_ast.Node:
        """`base[rows...][offset + subscript]`."""
        node: c_ast.Node = c_ast.ID(self.base, coord=coord)
        for r in self.rows:
            node = c_ast.ArrayRef(node, clone(r), coord=coord)
        last = subscript if self.offset is None else c_ast.BinaryOp("+", clone(self.offset), subscript)
        return c_ast.ArrayRef(node, last, coord=coord)


FRESH = "fresh"


def target_of(e, is_array) -> Target | str | None:
    """What pointer expression *e* points into: a Target, FRESH (an allocation), or None (not known).
    *is_array(name)*: the name is declared as an array or a pointer (so `B + k` points into B, not k)."""
    if isinstance(e, c_ast.Cast):
        inner = e.expr
        if isinstance(inner, c_ast.FuncCall) and isinstance(inner.name, c_ast.ID) and inner.name.name in ALLOCATORS:
            return FRESH
        return None
    if isinstance(e, c_ast.FuncCall):
        return FRESH if isinstance(e.name, c_ast.ID) and e.name.name in ALLOCATORS else None
    if isinstance(e, c_ast.ID):
        return Target(e.name, (), None) if is_array(e.name) else None
    if isinstance(e, c_ast.ArrayRef):  # a row: A[i] of a two-dimensional A
        subs, node = [], e
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        if isinstance(node, c_ast.ID) and is_array(node.name):
            return Target(node.name, tuple(reversed(subs)), None)
        return None
    if isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ArrayRef):
        row = target_of(e.expr.name, is_array) if isinstance(e.expr.name, c_ast.ArrayRef) else \
            target_of(e.expr.name, is_array) if isinstance(e.expr.name, c_ast.ID) else None
        if isinstance(row, Target) and row.offset is None:
            zero = isinstance(e.expr.subscript, c_ast.Constant) and e.expr.subscript.value == "0"
            return Target(row.base, row.rows, None if zero else e.expr.subscript)
        return None
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
        left = target_of(e.left, is_array)
        right = target_of(e.right, is_array) if e.op == "+" else None
        if isinstance(left, Target) and right is None and not _pointerish(e.right, is_array):
            off = e.right if e.op == "+" else c_ast.UnaryOp("-", e.right)
            return Target(left.base, left.rows, off if left.offset is None else c_ast.BinaryOp(e.op, left.offset,
                                                                                               e.right))
        if isinstance(right, Target) and left is None and not _pointerish(e.left, is_array):
            return Target(right.base, right.rows, e.left if right.offset is None else
                          c_ast.BinaryOp("+", right.offset, e.left))
        return None
    return None


def _pointerish(e, is_array) -> bool:
    return any(is_array(n) for n in ids(e)) or any(isinstance(n, (c_ast.FuncCall, c_ast.StructRef, c_ast.ArrayRef))
                                                   for n in walk(e))


def array_uses(node) -> dict[str, list[c_ast.ArrayRef]]:
    """name -> the outermost subscripts `p[e]` (the first subscript of a chain) whose base is the variable."""
    out: dict[str, list[c_ast.ArrayRef]] = {}
    for n in walk(node):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID):
            out.setdefault(n.name.name, []).append(n)
    return out


def bare_uses(node, name: str) -> list[c_ast.ID]:
    """The uses of *name* other than as the base of a subscript (`p` passed, compared, assigned)."""
    inside = {id(n.name) for n in walk(node) if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID)}
    return [n for n in walk(node) if isinstance(n, c_ast.ID) and n.name == name and id(n) not in inside]


def line_of(node, default: int) -> int:
    coord = getattr(node, "coord", None)
    return coord.line if coord is not None and coord.line else default


def variables(body) -> set[str]:
    """The names whose values may change inside a region: assigned, incremented, address taken, or declared
    in it (loop iterators among them); not the arrays written through (`A[i] = ` leaves `A` as it is)."""
    return set(assigned(body, direct=True)) | set(declarations(body))


def prelude_pointers(region) -> set[str]:
    """The pointers the rewrites read once before the region (rewrite/members.py's declarations)."""
    return {m.group(1) for d in region.prelude if (m := re.match(r"__typeof__\(&\(.*\)\[0\]\) const (\w+) =", d))}


def iterators_around(body) -> dict[int, set[str]]:
    """id(node) -> the iterators of the `for` loops that enclose the node inside *body*."""
    out: dict[int, set[str]] = {}

    def visit(n, iters: set[str]) -> None:
        if n is None:
            return
        out[id(n)] = iters
        if isinstance(n, c_ast.For):
            mine = set()
            if isinstance(n.init, c_ast.DeclList):
                mine = {d.name for d in n.init.decls}
            elif isinstance(n.init, c_ast.Assignment) and isinstance(n.init.lvalue, c_ast.ID):
                mine = {n.init.lvalue.name}
            for name, c in n.children():
                visit(c, iters | mine if name == "stmt" else iters)
            return
        for _, c in n.children():
            visit(c, iters)

    visit(body, set())
    return out


def in_block(body, decl: c_ast.Decl) -> c_ast.Compound | None:
    """The compound statement whose items include *decl* (None: a loop's init, say)."""
    for n in walk(body):
        if isinstance(n, c_ast.Compound) and n.block_items and any(x is decl for x in n.block_items):
            return n
    return None


def take_out(block: c_ast.Compound, decl: c_ast.Decl) -> c_ast.Compound:
    """*decl* taken out of *block*; the items after it (its scope) as a compound that shares them."""
    k = next(j for j, x in enumerate(block.block_items) if x is decl)
    scope = c_ast.Compound(block.block_items[k + 1:])
    block.block_items = block.block_items[:k]
    return scope


def put_back(block: c_ast.Compound, scope: c_ast.Compound) -> None:
    block.block_items = block.block_items + (scope.block_items or [])


def fresh_name(wanted: str, avoid: frozenset[str], taken: set[str]) -> str:
    """`pt_` + *wanted* (made an identifier), not among *avoid* or *taken*; added to *taken*."""
    stem = "pt_" + (re.sub(r"\W+", "_", wanted).strip("_") or "v")[:40]
    name, k = stem, 1
    while name in avoid or name in taken:
        name, k = f"{stem}_{k}", k + 1
    taken.add(name)
    return name


def replace_uses(body, name: str, new) -> None:
    """Every read of identifier *name* in *body* replaced by a copy of expression *new* (*body*: the
    declaration's scope, so that another variable of the name elsewhere is left alone)."""
    def fn(n):
        if isinstance(n, c_ast.ID) and n.name == name:
            return clone(new)
        return None

    for child_name, child in list(body.children()):
        set_child(body, child_name, transform(child, fn))


def note(region, node, message: str) -> str:
    return f"{region.file}:{line_of(node, region.begin_line)}: note: {message}"
