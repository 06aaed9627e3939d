"""Store forwarding over the generated kernel text: a value stored and loaded again at the same
address in one program is reused from its register."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .expr import _canonical

_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) = (.*)$")
_STORE = re.compile(r"^(\s*)tl\.store\((p\d+), (.*), mask=MASK\)$")
_WORD = re.compile(r"[A-Za-z_]\w*")
_LITERAL = re.compile(r"-?\d+(\.\d*)?(e-?\d+)?")


def forward_stores(lines: list[str]) -> list[str]:
    """Store-to-load forwarding and dead-store elimination inside one program, on the kernel's text.

    A statement that writes an element and a later one that reads it back under the same mask (a stencil's
    `B[i][j] = 0` before its accumulation, softmax's `mx[i] = A[i][0]` before the max) go through global
    memory; here the read takes the stored value instead, and a store that the same lanes overwrite with
    nothing reading the array in between is dropped. An element that two statements of one block load,
    with no store to its array in between (fused statements that read the same neighbours), is loaded
    once into a named value (`ld3 = tl.load(...)`) that the second one reuses: Triton does not reuse a
    load across a store, which may alias it for all it knows. Values are tracked by the versions of every name
    they mention (a reassigned MASK, ZERO or index is another value); inside a loop only what the loop
    does not change survives, and nothing learnt inside a loop or an `if` is used after it."""
    return _flatten(_Forwarder().block(_nest(lines)))


def _nest(lines: list[str]) -> list:
    """Lines as a tree: a line ending in ':' owns the deeper-indented lines after it (`if True:` blocks are
    dissolved into the lines around them)."""
    out: list = []
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if line.rstrip().endswith(":"):
            depth = len(line) - len(line.lstrip())
            j = k
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > depth):
                j += 1
            if line.strip() == "if True:":  # a block only for the indentation (one chunk): straight-line code
                out += _nest([x[4:] for x in lines[k:j]])
            else:
                out.append((line, _nest(lines[k:j])))
            k = j
        else:
            out.append(line)
    return out


def _flatten(tree: list) -> list[str]:
    out: list[str] = []
    for item in tree:
        if isinstance(item, tuple):
            out.append(item[0])
            out += _flatten(item[1])
        else:
            out.append(item)
    return out


def _loads(text: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, address, mask) of every `tl.load(...)` in *text*; mask is None unless the load has the
    form `tl.load(address, mask=M, other=0)`."""
    out = []
    for m in re.finditer(r"tl\.load\(", text):
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        args = _split_args(text[m.end():k - 1])
        plain = len(args) == 3 and args[1].startswith("mask=") and args[2] == "other=0"
        out.append((m.start(), k, args[0], args[1][5:] if plain else None))
    return out


def _split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    parts.append(text[start:].strip())
    return parts


_IMPURE = ("tl.load", "tl.atomic", "tl.rand")


def _is_affine(text: str) -> bool:
    """Integer arithmetic of names and integer literals only (`8192 + lanes3`, `k5 - 1`)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    ok = (ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.USub)
    return all(isinstance(n, ok) or (isinstance(n, ast.Constant) and type(n.value) is int)
               for n in ast.walk(tree))


@dataclass
class _Fact:
    """What a program knows about one element: the value it stored there, under which mask."""

    value: str
    token: object  # the value's version when stored
    base: str  # the array
    names: frozenset  # every name the address, the mask and the value mention
    loaded: bool = False  # the value was loaded from there (0 where masked off), not stored


class _Forwarder:
    """Tracks values by version: every assignment gives its name a new version, except a copy of a name
    (`mask2 = MASK`, `MASK = mask2`: the same version) and a pure expression seen before over the same
    versions (value numbering: two chunks' `MASK = mask[:, None] & (lanes < 4096)` are one value).
    Addresses compare in a normal form where integer names (`r16 = 4096 + lanes3`) are inlined."""

    def __init__(self):
        self.version: dict[str, object] = {}
        self.defs: dict[str, tuple[object, str]] = {}  # affine name -> (its version, its tokenized text)
        self.addr: dict[str, tuple[str, str]] = {}  # pN -> (address text, its key where defined)
        self.known: dict[tuple, _Fact] = {}  # (address key, MASK version) -> fact
        self.ids: dict[object, int] = {}
        self.counter = 0
        self.fresh = 0

    def new(self) -> int:
        self.counter += 1
        return self.counter

    def ver(self, name: str) -> object:
        """The version of *name*'s current value (a name never assigned here is an argument: one value)."""
        if name not in self.version:
            self.version[name] = self.new()
        return self.version[name]

    def tokenize(self, text: str) -> str:
        def sub(m):
            w = m.group(0)
            d = self.defs.get(w)
            if d is not None and d[0] == self.ver(w):
                return f"({d[1]})"
            return f"_v{self.ids.setdefault(self.ver(w), len(self.ids))}"
        return re.sub(r"(?<![.\w])[A-Za-z_]\w*", sub, text)

    def key(self, text: str) -> str:
        if text in self.addr:
            return self.addr[text][1]
        return _canonical(self.tokenize(text))

    def base(self, text: str) -> str:
        return _WORD.findall(self.addr[text][0] if text in self.addr else text)[0]

    def assign(self, name: str, value: str | None) -> None:
        if value is not None and re.fullmatch(r"[A-Za-z_]\w*", value):
            self.version[name] = self.ver(value)
            d = self.defs.get(value)
            if d is not None and d[0] == self.ver(value):
                self.defs[name] = d
            return
        if value is None or any(x in value for x in _IMPURE):
            self.version[name] = self.new()
        else:
            self.version[name] = "=" + _canonical(self.tokenize(value))
        if value is not None and _is_affine(value):
            self.defs[name] = (self.version[name], self.tokenize(value))
        if value is not None and re.fullmatch(r"p\d+", name):
            self.addr[name] = (value, _canonical(self.tokenize(value)))

    def effects(self, tree: list) -> tuple[set[str], set[str]]:
        """What running *tree* does: the names it leaves changed (a name it restores, as MASK after an
        inner loop, does not count) and the arrays it stores to or loads from."""
        for line in _flatten(tree):
            for w in _WORD.findall(line):
                self.ver(w)
        saved = dict(self.version), dict(self.addr), dict(self.defs)
        assigned: set[str] = set()
        touched: set[str] = set()
        for line in _flatten(tree):
            if "tl.atomic" in line:
                touched.add("*")
            for _s, _e, a, _m in _loads(line):
                touched.add(self.base(a))
            if (st := _STORE.match(line)) or (st := re.match(r"(\s*)tl\.store\(([^,]+),", line)):
                touched.add(self.base(st.group(2)))
            if m := _ASSIGN.match(line):
                assigned.add(m.group(2))
                self.assign(m.group(2), m.group(3))
            elif m := re.match(r"\s*for (\w+) in", line):
                assigned.add(m.group(1))
                self.assign(m.group(1), None)
        changed = {n for n in assigned if self.version.get(n) != saved[0].get(n)}
        self.version, self.addr, self.defs = saved
        return changed, touched

    def block(self, tree: list) -> list:
        out: list = []
        pending: dict[tuple, tuple[int, str]] = {}  # fact key -> (index in out, array) of an unread store
        shared = _shared_loads(tree)
        for item in tree:
            if isinstance(item, tuple):
                header, body = item
                changed, touched = self.effects(body)
                header = self.rewrite(header)
                touched |= {self.base(a) for _s, _e, a, _m in _loads(header)}
                loop = header.lstrip().startswith(("for ", "while "))
                if loop:
                    # Iteration 2 starts from what iteration 1 left: what the body changes is unknown.
                    m = re.match(r"\s*for (\w+) in", header)
                    for n in changed | ({m.group(1)} if m else set()):
                        self.assign(n, None)
                    self.forget(changed, touched)
                pending = {k: v for k, v in pending.items() if v[1] not in touched and "*" not in touched}
                outer = dict(self.known)
                inner = self.block(body)
                for n in changed:
                    self.assign(n, None)  # the block may or may not have run
                self.known = outer
                self.forget(changed, touched)
                out.append((header, inner))
                continue
            if "tl.atomic" in item:
                self.known, pending = {}, {}
            line = self.rewrite(item)
            line = self.name_loads(line, shared, out)
            for _s, _e, a, _m in _loads(line):
                b = self.base(a)
                pending = {k: v for k, v in pending.items() if v[1] != b}
            st = _STORE.match(line)
            m = _ASSIGN.match(line)
            if st:
                indent, p, value = st.groups()
                if not (_LITERAL.fullmatch(value) or re.fullmatch(r"[A-Za-z_]\w*", value)):
                    name = f"fwd{self.fresh}"
                    self.fresh += 1
                    out.append(f"{indent}{name} = {value}")
                    self.assign(name, None)
                    value = name
                    line = f"{indent}tl.store({p}, {value}, mask=MASK)"
                b = self.base(p)
                k = (self.key(p), self.ver("MASK"))
                if k in pending:
                    out[pending[k][0]] = None  # the same lanes overwrite it and nobody read it in between
                self.forget(set(), {b})
                pending = {kk: v for kk, v in pending.items() if v[1] != b}
                names = set(_WORD.findall(self.addr[p][0] if p in self.addr else p)) | {"MASK", value}
                self.known[k] = _Fact(value, self.ver(value) if not _LITERAL.fullmatch(value) else value, b,
                                      frozenset(names))
                pending[k] = (len(out), b)
            elif re.match(r"\s*tl\.store\(", line):
                b = self.base(_split_args(line.strip()[len("tl.store("):-1])[0])
                self.forget(set(), {b})
                pending = {kk: v for kk, v in pending.items() if v[1] != b}
            elif m:
                self.assign(m.group(2), m.group(3))
            out.append(line)
        return [x for x in out if x is not None]

    def rewrite(self, line: str) -> str:
        """Replace each load of an element whose value this program stored, or loaded into a name, by
        that value."""
        for start, end, a, mask in reversed(_loads(line)):
            if mask != "MASK":
                continue
            fact = self.known.get((self.key(a), self.ver("MASK")))
            if fact and fact.token == (fact.value if _LITERAL.fullmatch(fact.value) else self.ver(fact.value)):
                value = fact.value if fact.loaded else \
                    f"tl.where(MASK, {fact.value}, 0).to({self.base(a)}.dtype.element_ty)"
                line = line[:start] + value + line[end:]
        return line

    def name_loads(self, line: str, shared: set[str], out: list) -> str:
        """Load each element of *shared* that *line* reads under MASK into a name of its own, on a line
        of *out* before it, and remember it (the next line that loads it takes the name)."""
        indent = line[:len(line) - len(line.lstrip())]
        for start, end, a, mask in reversed(_loads(line)):
            if mask != "MASK" or line[start:end] not in shared:
                continue
            k = (self.key(a), self.ver("MASK"))
            fact = self.known.get(k)
            if fact is None or not fact.loaded or fact.token != self.ver(fact.value):
                name = f"ld{self.fresh}"
                self.fresh += 1
                out.append(f"{indent}{name} = {line[start:end]}")
                self.assign(name, None)
                names = set(_WORD.findall(self.addr[a][0] if a in self.addr else a)) | {"MASK", name}
                fact = self.known[k] = _Fact(name, self.ver(name), self.base(a), frozenset(names), loaded=True)
            line = line[:start] + fact.value + line[end:]
        return line

    def forget(self, names: set[str], arrays: set[str]) -> None:
        """Drop what mentions *names* or lives in *arrays*."""
        self.known = {k: f for k, f in self.known.items()
                      if not (f.names & names or f.base in arrays or "*" in arrays)}


def _shared_loads(tree: list) -> set[str]:
    """The loads (as written, under MASK) that two or more straight-line lines of *tree* make."""
    seen: dict[str, set[int]] = {}
    for k, item in enumerate(tree):
        if isinstance(item, str):
            for start, end, _a, mask in _loads(item):
                if mask == "MASK":
                    seen.setdefault(item[start:end], set()).add(k)
    return {text for text, lines in seen.items() if len(lines) > 1}


def _barriers(lines: list[str]) -> list[str]:
    """A barrier after every store to an array the kernel also loads from: the elements of one tensor
    can live in other threads than those of the next tensor that reads them (another shape, another
    layout), and Triton orders global memory between the threads of a program only at a barrier."""
    base = {}
    for line in lines:
        m = re.match(r"\s*(p\d+) = (\w+) \+", line)
        if m:
            base[m.group(1)] = m.group(2)
    loaded = set()
    for line in lines:
        for _start, _end, address, _mask in _loads(line):
            head = re.match(r"\w+", address)
            if head:
                loaded.add(base.get(head.group(0), head.group(0)))
    out = []
    for line in lines:
        out.append(line)
        m = re.match(r"(\s*)tl\.store\((p\d+),", line)
        if m and base.get(m.group(2)) in loaded:
            out.append(f"{m.group(1)}tl.debug_barrier()")
    return out
