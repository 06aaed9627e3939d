"""Values the region reads but never changes, read once before it into new locals: struct members (`s.rows`,
`cfg->n`, `l->weights`), array elements with subscripts the region does not change where bounds, conditions,
subscripts and scalar initializers read them (`dims[0]`), products of such values there (`w * h`: one
parameter where the bounds need only the product), divisions and remainders of elements (`dims[1] / 2`),
and conditions on a pointer or a floating-point value (`bias != NULL`, `beta != 0.0f`: a truth value).

A member or element is read once only where nothing in the region writes the variable it starts from
(`cfg` of `cfg->n`, `dims` of `dims[0]`) or anything its subscripts read. The new local has the value's own
type (`__typeof__`), so C computes with it what it computed before: an integer is a parameter of the model
(its C type known from the struct's declaration), a floating-point value a scalar, and a pointer member
an array that, like a pointer parameter, may overlap the others (`shared_params`)."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import Region, int_type
from ._ast import base_type, declarations, ids, root, set_child, text, transform, variables, walk
from ._ast import fresh_name as _fresh


def hoist_invariants(region: Region) -> Region:
    """*region* with its read-only members, elements and products in bounds read once (see the module)."""
    scope = region.scope
    members = scope.members if scope is not None else {}
    changing = variables(region.body)
    h = _Hoist(region, members, changing, set())
    h.written = _written_roots(region.body, h)
    h.guarded = _guarded(region.body)
    h.valid = _dereferenced(region.body, h.guarded)
    h.checked = {n for x in walk(region.body) if isinstance(x, (c_ast.If, c_ast.TernaryOp)) for n in _bare(x.cond)}
    body = region.body
    body = transform(body, h.member)  # members everywhere: extraction reads none
    for node, child in _affine_places(body):  # elements and products where the model needs affine values
        if child == "cond" and isinstance(node, (c_ast.If, c_ast.TernaryOp)) and h.condition(node.cond):
            set_child(node, child, h.hoist(node.cond, ("int", (32, False)), truth=True))
            continue
        set_child(node, child, transform(getattr(node, child), h.element))
    if not h.prelude:
        return region
    return replace(region, body=body, prelude=region.prelude + tuple(h.prelude),
                   int_types={**region.int_types, **h.ints}, float_scalars={**region.float_scalars, **h.floats},
                   shared_params=tuple(dict.fromkeys(region.shared_params + tuple(h.pointers))))


def _written_roots(body, h: _Hoist) -> set[str]:
    """The variables the region writes or writes into (`s.n = `, `s.a[i] = `, `f(&s)`); a write through a
    pointer member (`l->out[i] = `) writes the memory it points to, not the struct."""
    out = set()
    for n in walk(body):
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") else None
        if target is None or (name := root(target)) is None:
            continue
        chain = _chain(target)
        through = any(isinstance(x, c_ast.ArrayRef) and isinstance(x.name, c_ast.StructRef)
                      and isinstance(h.members.get(x.name.field.name), c_ast.PtrDecl) for x in chain)
        if not through:
            out.add(name)
    return out


def _bare(e) -> set[str]:
    """The names an expression reads as values (`p` of `p != NULL`), not as the start of a member or element
    chain (`p` of `p->n`)."""
    inside = {id(x.name) for x in walk(e) if isinstance(x, (c_ast.StructRef, c_ast.ArrayRef))}
    return {x.name for x in walk(e) if isinstance(x, c_ast.ID) and id(x) not in inside}


def _guarded(body) -> set[int]:
    """id() of every node under a branch of an `if` or `?:`: read only when a condition holds (`if (p)
    n = p->n;`), so not read before the region, where the condition has not been checked."""
    out: set[int] = set()
    for n in walk(body):
        if isinstance(n, (c_ast.If, c_ast.TernaryOp)):
            for branch in (n.iftrue, n.iffalse):
                out.update(id(x) for x in walk(branch) if branch is not None)
    return out


def _dereferenced(body, guarded: set[int]) -> set[str]:
    """The pointers (their text: `b`, `l->in`) the region dereferences by a member access outside any
    condition (`b->n` of a loop bound): the struct they point to may be read before the region."""
    return {text(n.name) for n in walk(body) if isinstance(n, c_ast.StructRef) and n.type == "->"
            and id(n) not in guarded}


def _affine_places(body) -> list[tuple[c_ast.Node, str]]:
    """(node, child name) of every loop bound, condition, subscript and scalar initializer of the region."""
    out = []
    for n in walk(body):
        if isinstance(n, c_ast.For):
            out += [(n, c) for c in ("init", "cond") if getattr(n, c) is not None]
        elif isinstance(n, (c_ast.If, c_ast.TernaryOp)):
            out.append((n, "cond"))
        elif isinstance(n, c_ast.ArrayRef):
            out.append((n, "subscript"))
        elif isinstance(n, c_ast.Decl) and n.init is not None and isinstance(n.type, c_ast.TypeDecl) \
                and not isinstance(n.init, c_ast.InitList):
            out.append((n, "init"))  # an index scalar's value (`int s = (c*dims[1] + y)*dims[2];`)
    return out


class _Hoist:
    def __init__(self, region: Region, members: dict, changing: set[str], written: set[str]):
        self.region, self.members, self.changing, self.written = region, members, changing, written
        scope = region.scope
        self.avoid = scope.avoid if scope is not None else frozenset()
        self.taken: set[str] = set()
        self.by_text: dict[str, str] = {}
        self.prelude: list[str] = []
        self.ints: dict = {}
        self.floats: dict = {}
        self.pointers: list[str] = []
        self.decls = _declared(region)
        self.guarded: set[int] = set()
        self.valid: set[str] = set()
        self.checked: set[str] = set()

    def invariant(self, e) -> bool:
        r = root(e)
        if (id(e) in self.guarded and not self.readable(e)) or \
                (r in self.checked and not isinstance(e, c_ast.BinaryOp)):
            return False  # read under a condition, or through a pointer the region tests (`if (p)`)
        return r is not None and r not in self.changing and r not in self.written and not (ids(e) & self.changing) \
            and not any(isinstance(x, (c_ast.FuncCall, c_ast.Assignment)) or
                        (isinstance(x, c_ast.UnaryOp) and x.op in ("++", "--", "p++", "p--")) for x in walk(e))

    def readable(self, e) -> bool:
        """Whether a member read under a condition (`b->x` of `if (j != i) ... b->x[j]`) may be read before the
        region all the same: the struct holding it is a local or parameter struct variable (`im.w`), or is
        reached through a pointer the region dereferences outside any condition (`b` of `i < b->n`)."""
        if not isinstance(e, c_ast.StructRef):
            return False  # an element (`dims[k]`): its subscript may be checked by the condition
        if e.type == ".":
            return isinstance(e.name, c_ast.ID) or (isinstance(e.name, c_ast.StructRef) and self.readable(e.name))
        return text(e.name) in self.valid

    def member(self, n):
        """A maximal member chain the region does not change -> its new local (else None: look inside)."""
        if not isinstance(n, (c_ast.StructRef, c_ast.ArrayRef)) or not any(isinstance(x, c_ast.StructRef)
                                                                            for x in _chain(n)):
            return None
        if not self.invariant(n):
            return None
        t = self.type_of(n)
        return self.hoist(n, t) if t is not None else None

    def element(self, n):
        """An element or a product in a bound, condition or subscript that the region does not change."""
        if isinstance(n, c_ast.ArrayRef) and isinstance(_chain(n)[-1], c_ast.ID) and self.invariant(n):
            t = self.type_of(n)
            if t is not None and t[0] == "int":
                return self.hoist(n, t)
            return None
        if isinstance(n, c_ast.BinaryOp) and n.op == "*" and not _constant(n.left) and not _constant(n.right) \
                and not (ids(n) & self.changing) and ids(n) and all(self.int_name(x) for x in ids(n)) \
                and not any(isinstance(x, (c_ast.FuncCall, c_ast.ArrayRef, c_ast.StructRef, c_ast.Assignment))
                            for x in walk(n)):
            types = [self.int_name(x) for x in sorted(ids(n))]
            return self.hoist(n, ("int", _convert(types)))
        if isinstance(n, c_ast.BinaryOp) and n.op in ("/", "%") and (t := self.quotient(n)) is not None:
            return self.hoist(n, ("int", t))
        return None

    def quotient(self, n: c_ast.BinaryOp) -> tuple[int, bool] | None:
        """Whether `dims[1] / 2` (a division or remainder of values the region does not change, one of them an
        element or member) is read once: a parameter, where the model could not read it (a quasi-affine
        expression of an element); a division of plain parameters is left to the model. Its integer type
        (bits, unsigned), or None where it is not read once."""
        chains = [x for x in walk(n) if isinstance(x, (c_ast.ArrayRef, c_ast.StructRef))]
        outer = [x for x in chains if not any(x is not y and any(z is x for z in walk(y)) for y in chains)]
        if not outer or ids(n) & self.changing or any(
                isinstance(x, (c_ast.FuncCall, c_ast.Assignment)) or
                (isinstance(x, c_ast.UnaryOp) and x.op in ("++", "--", "p++", "p--")) for x in walk(n)):
            return None
        types = [self.type_of(x) if self.invariant(x) else None for x in outer]
        if any(t is None or t[0] != "int" for t in types):
            return None
        inside = {id(z) for x in outer for z in walk(x)}
        names = [self.int_name(x.name) for x in walk(n) if isinstance(x, c_ast.ID) and id(x) not in inside]
        if any(t is None for t in names):
            return None
        return _convert([t[1] for t in types] + names)

    def condition(self, e) -> bool:
        """A condition the region does not change that the model cannot read as it is: it compares a pointer
        (`bias != NULL`) or a floating-point value. Read once as a truth value."""
        if ids(e) & self.changing or not ids(e) or any(
                isinstance(x, (c_ast.FuncCall, c_ast.ArrayRef, c_ast.Assignment, c_ast.StructRef)) or
                (isinstance(x, c_ast.UnaryOp) and x.op in ("++", "--", "p++", "p--")) for x in walk(e)):
            return False
        pointers = {n for n in ids(e) if (d := self.decls.get(n)) is not None and
                    isinstance(d.type, (c_ast.PtrDecl, c_ast.ArrayDecl))}
        return bool(pointers or ids(e) & set(self.region.float_scalars))

    def int_name(self, name: str):
        if name in self.region.float_scalars:
            return None
        return self.region.int_types.get(name, (32, False))

    def type_of(self, e):
        """("int", (bits, unsigned)) | ("float", "fp32"/"fp64") | ("pointer", None) of a member or element
        chain, or None where its type is not known."""
        chain = _chain(e)
        t = None
        for x in reversed(chain):  # from the root outwards
            if isinstance(x, c_ast.ID):
                decl = self.decls.get(x.name)
                t = decl.type if decl is not None else None
            elif isinstance(x, c_ast.StructRef):
                t = self.members.get(x.field.name)
            elif isinstance(x, c_ast.ArrayRef):
                t = t.type if isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)) else None
            if t is None:
                return None
        if isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            return ("pointer", None)
        words = base_type(t)
        if not words:
            return None
        if "double" in words or "float" in words:
            return ("float", "fp64" if "double" in words else "fp32")
        it = int_type(words)
        return ("int", it) if it is not None else None

    def hoist(self, e, t, truth: bool = False):
        key = text(e)
        if key in self.by_text:
            return c_ast.ID(self.by_text[key], coord=e.coord)
        name = _fresh(key, self.avoid, self.taken)
        self.by_text[key] = name
        kind, detail = t
        if kind == "pointer":
            self.prelude.append(f"__typeof__(&({key})[0]) const {name} = {key};")
            self.pointers.append(name)
        elif truth:
            self.prelude.append(f"const int {name} = ({key}) != 0;")
            self.ints[name] = detail
        else:
            self.prelude.append(f"const __typeof__({key}) {name} = {key};")
            if kind == "int":
                self.ints[name] = detail
            else:
                self.floats[name] = detail
        return c_ast.ID(name, coord=e.coord)


def _chain(e) -> list:
    """The nodes of a member/element chain from the outside in (`a->b[i]`: ArrayRef, StructRef, ID)."""
    out = [e]
    while isinstance(e, (c_ast.ArrayRef, c_ast.StructRef)):
        e = e.name
        out.append(e)
    return out


def _constant(e) -> bool:
    return isinstance(e, c_ast.Constant) or (isinstance(e, c_ast.UnaryOp) and isinstance(e.expr, c_ast.Constant))


def _convert(types: list) -> tuple[int, bool]:
    """C's usual arithmetic conversions of integer types (bits, unsigned), after promotion to int."""
    out = (32, False)
    for t in types:
        if out[1] == t[1]:
            out = (max(out[0], t[0]), out[1])
        else:
            u, s = (out, t) if out[1] else (t, out)
            out = u if u[0] >= s[0] else s
    return out


def _declared(region: Region) -> dict:
    """name -> its declaration: in the region, in the function around it, a parameter, or at file scope."""
    out = dict(region.scope.globals) if region.scope is not None else {}
    func = region.scope.function if region.scope is not None else None
    if func is not None:
        args = getattr(func.decl.type, "args", None)
        for p in (args.params if args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                out[p.name] = p
        for name, ds in declarations(func.body).items():
            out[name] = ds[0] if len(ds) == 1 else None
    for name, ds in declarations(region.body).items():
        out[name] = ds[0] if len(ds) == 1 else None
    return out
