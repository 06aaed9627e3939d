"""Search spaces: named parameters over finite domains, and their neighbourhoods.

A parameter is ordinal (an increasing integer domain: tile sizes, an unroll factor) or categorical (an
unordered set of named alternatives: the scheduler variant, the fusion policy, the OpenMP loop, the point-loop
order). A configuration is a tuple of ints either way: a categorical coordinate holds the index of its
category (:meth:`SearchSpace.decode` gives the names), so configurations stay hashable, JSON-able and
comparable, and the evaluator, the cache and the replay records need not know the difference.

A coordinate's one-step moves: ordinal, the next smaller and the next larger value of its domain (Def. 3.7
of the hill-climbing paper); categorical, every other category (there is no order, so all are one step away).
Neighbourhood of degree d (Def. 3.7 extended to d > 1): every configuration that changes between 1 and d
coordinates, each changed coordinate by one of its one-step moves, so a degree-2 neighbourhood combines any
move of one coordinate with any move of another. In 2-D ordinal, degree 2 is the 3x3 box around an interior
point minus its centre (8 neighbours); degree 3 in 3-D is the 3x3x3 cube minus the centre (26); a categorical
coordinate of k categories beside an interior ordinal one gives (k - 1) + 2 + 2 (k - 1) at degree 2.

Neighbours are listed in a fixed order (first-fit search relies on it): by the number of changed
parameters, then by which parameters (``itertools.combinations`` order, i.e. parameter order), then by
moves (``itertools.product`` order), the smaller value before the larger one and categories in their
order. For degree 1 this is: parameter 0 smaller, parameter 0 larger, parameter 1 smaller, ...

Values outside an ordinal domain are allowed in configurations (a seed such as Pluto's default tile 32, or a
shortest-hop result): their adjacent values are still the nearest domain values below and above. A
categorical coordinate holds one of its indices, nothing else. Shortest-hop moves (+- the domain's smallest
gap) apply to ordinal coordinates only; they leave categorical coordinates alone.
"""
from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from polytune.errors import UsageError
from polytune.measure.measurement import Config

Value = int | str  # what a coordinate means: an ordinal value, or a categorical coordinate's category


def _as_int(value: object, what: str) -> int:
    if isinstance(value, bool):
        raise UsageError(f"{what}: expected an integer, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(f"{what}: expected an integer, got {value!r}") from None


@dataclass(frozen=True)
class Parameter:
    """One tunable parameter: a name and its strictly increasing, non-empty integer domain; or, with
    ``categories``, a categorical parameter whose values are the indices ``0 .. len(categories) - 1``
    (build one with :meth:`categorical`)."""

    name: str
    values: tuple[int, ...] = ()
    hop: int | None = None  # step of shortest-hop moves; None: the smallest gap of the domain; 0: none
    categories: tuple[str, ...] | None = None  # names of a categorical parameter's alternatives, in order

    def __post_init__(self) -> None:
        if not self.name:
            raise UsageError("parameter name must not be empty")
        if self.categories is not None:
            if isinstance(self.categories, str):
                raise UsageError(f"parameter {self.name}: categories must be a sequence of names, not one string")
            categories = tuple(self.categories)
            if not categories:
                raise UsageError(f"parameter {self.name}: no categories")
            if not all(isinstance(c, str) and c for c in categories) or len(set(categories)) != len(categories):
                raise UsageError(f"parameter {self.name}: categories {categories} are not distinct names")
            if self.values and tuple(self.values) != tuple(range(len(categories))):
                raise UsageError(f"parameter {self.name}: a categorical parameter's values are its indices")
            if self.hop:
                raise UsageError(f"parameter {self.name}: a categorical parameter has no hop")
            object.__setattr__(self, "categories", categories)
            object.__setattr__(self, "values", tuple(range(len(categories))))
            return
        values = tuple(_as_int(v, f"parameter {self.name}") for v in self.values)
        if not values:
            raise UsageError(f"parameter {self.name}: empty domain")
        if any(a >= b for a, b in itertools.pairwise(values)):
            raise UsageError(f"parameter {self.name}: domain {values} is not sorted and unique")
        object.__setattr__(self, "values", values)

    @classmethod
    def categorical(cls, name: str, categories: Sequence[str]) -> Parameter:
        """A parameter choosing one of ``categories`` (its first is index 0, the origin's choice)."""
        return cls(name, categories=categories)  # type: ignore[arg-type]  # __post_init__ makes it a tuple

    @property
    def is_categorical(self) -> bool:
        return self.categories is not None

    def label(self, value: int) -> Value:
        """What ``value`` means: a categorical parameter's category name, an ordinal parameter's value."""
        if self.categories is None:
            return value
        if not 0 <= value < len(self.categories):
            raise UsageError(f"parameter {self.name}: no category {value} (0 .. {len(self.categories) - 1})")
        return self.categories[value]

    def encode(self, value: object) -> int:
        """The configuration value for ``value``: a category name or index (categorical), an integer (ordinal)."""
        if self.categories is not None:
            if isinstance(value, str):
                if value not in self.categories:
                    raise UsageError(f"parameter {self.name}: unknown category {value!r} "
                                     f"(known: {', '.join(self.categories)})")
                return self.categories.index(value)
            index = _as_int(value, f"parameter {self.name}")
            self.label(index)  # range check
            return index
        return _as_int(value, f"parameter {self.name}")

    def moves(self, value: int, hop: bool = False) -> tuple[int, ...]:
        """The one-step moves from ``value`` (see the module docstring), in neighbourhood order."""
        if self.categories is not None:
            return () if hop else tuple(v for v in self.values if v != value)
        below, above = self.hop_adjacent(value) if hop else self.adjacent(value)
        return tuple(v for v in (below, above) if v is not None)

    @property
    def lo(self) -> int:
        return self.values[0]

    @property
    def hi(self) -> int:
        return self.values[-1]

    @property
    def shortest_hop(self) -> int | None:
        """Smallest gap between consecutive domain values (or the hop given); None for a single-value domain
        and for a categorical parameter."""
        if self.categories is not None:
            return None
        if self.hop is not None:
            return self.hop or None
        if len(self.values) < 2:
            return None
        return min(b - a for a, b in itertools.pairwise(self.values))

    def adjacent(self, value: int) -> tuple[int | None, int | None]:
        """The next smaller and next larger domain values around ``value`` (None past an end)."""
        lower = bisect.bisect_left(self.values, value)
        upper = bisect.bisect_right(self.values, value)
        return (
            self.values[lower - 1] if lower > 0 else None,
            self.values[upper] if upper < len(self.values) else None,
        )

    def hop_adjacent(self, value: int) -> tuple[int | None, int | None]:
        """``value -+ shortest_hop``, kept within [lo, hi] of the domain (values between domain points)."""
        hop = self.shortest_hop
        if hop is None:
            return None, None
        down, up = value - hop, value + hop
        return (
            down if self.lo <= down <= self.hi else None,
            up if self.lo <= up <= self.hi else None,
        )

    def nearest(self, value: int) -> int:
        """The domain value closest to ``value`` (the smaller one on a tie); a categorical value stays."""
        if self.categories is not None:
            return self.encode(value)
        below, above = self.adjacent(value)
        if value in self.values:
            return value
        if below is None:
            return above  # type: ignore[return-value]
        if above is None:
            return below
        return below if value - below <= above - value else above


@dataclass(frozen=True)
class SearchSpace:
    """The Cartesian product of the parameters' domains; configurations are int tuples in param order
    (a categorical coordinate holds its category's index)."""

    params: tuple[Parameter, ...]

    def __post_init__(self) -> None:
        params = tuple(self.params)
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise UsageError(f"duplicate parameter names in {names}")
        object.__setattr__(self, "params", params)

    @classmethod
    def from_domains(cls, domains: Mapping[str, Sequence[int] | Sequence[str]]) -> SearchSpace:
        """Build from ``{name: values}`` in insertion order; a domain of strings is a categorical parameter."""
        params = []
        for name, values in domains.items():
            values = tuple(values)
            if values and all(isinstance(v, str) for v in values):
                params.append(Parameter.categorical(name, values))
            else:
                params.append(Parameter(name, values))
        return cls(tuple(params))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def size(self) -> int:
        return math.prod(len(p.values) for p in self.params)

    @property
    def origin(self) -> Config:
        """The configuration of every parameter's smallest value (the paper's default start)."""
        return tuple(p.lo for p in self.params)

    def check(self, config: Sequence[Value]) -> Config:
        """Normalize ``config`` to an int tuple of the right length (ordinal values may lie outside their
        domains; a categorical coordinate may be given by its category's name)."""
        if len(config) != len(self.params):
            raise UsageError(f"configuration {tuple(config)} has {len(config)} values, expected "
                             f"{len(self.params)} ({', '.join(self.names)})")
        return tuple(p.encode(v) for p, v in zip(self.params, config))

    def decode(self, config: Sequence[int]) -> dict[str, Value]:
        """``{name: value}``, a categorical coordinate by its category's name (what a caller builds from)."""
        return {p.name: p.label(v) for p, v in zip(self.params, self.check(config))}

    def encode(self, values: Mapping[str, Value]) -> Config:
        """The configuration of ``{name: value}`` (inverse of :meth:`decode`); every parameter must be named."""
        unknown = set(values) - set(self.names)
        missing = [n for n in self.names if n not in values]
        if unknown or missing:
            raise UsageError(f"configuration {dict(values)}: expected exactly the parameters {', '.join(self.names)}")
        return self.check([values[n] for n in self.names])

    def contains(self, config: Sequence[int]) -> bool:
        return len(config) == len(self.params) and all(v in p.values for p, v in zip(self.params, config))

    def index_of(self, config: Sequence[int]) -> int:
        """Row-major position of ``config`` in the grid (the last parameter varies fastest)."""
        if not self.contains(config):
            raise UsageError(f"configuration {tuple(config)} is not in the search space")
        index = 0
        for p, v in zip(self.params, config):
            index = index * len(p.values) + p.values.index(v)
        return index

    def config_at(self, index: int) -> Config:
        """Inverse of :meth:`index_of`."""
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} outside a space of {self.size} configurations")
        values = []
        for p in reversed(self.params):
            index, pos = divmod(index, len(p.values))
            values.append(p.values[pos])
        return tuple(reversed(values))

    def configs(self) -> Iterator[Config]:
        """Every configuration in row-major order."""
        return itertools.product(*(p.values for p in self.params))

    def nearest(self, config: Sequence[int]) -> Config:
        """Snap each value to its nearest domain value (to turn an arbitrary seed into a grid point)."""
        return tuple(p.nearest(v) for p, v in zip(self.params, self.check(config)))

    def neighbours(self, config: Sequence[int], degree: int = 1, hop: bool = False) -> tuple[Config, ...]:
        """The neighbourhood of ``config`` (see the module docstring for the definition and order).

        With ``hop``, each changed ordinal parameter moves by its domain's shortest hop instead of to the
        adjacent domain value (shortest-hop exploration, Example 3.10); categorical ones stay.
        """
        config = self.check(config)
        moves = [p.moves(v, hop) for p, v in zip(self.params, config)]
        result = []
        for count in range(1, degree + 1):
            for which in itertools.combinations(range(len(config)), count):
                for values in itertools.product(*(moves[i] for i in which)):
                    neighbour = list(config)
                    for i, v in zip(which, values):
                        neighbour[i] = v
                    result.append(tuple(neighbour))
        return tuple(result)


def pow2_domain(extent: int | None, cap: int = 512) -> tuple[int, ...]:
    """Powers of two from 1 up to ``min(extent, cap)``; at least ``(1,)``."""
    limit = cap if extent is None else min(extent, cap)
    values = [1]
    while values[-1] * 2 <= limit:
        values.append(values[-1] * 2)
    return tuple(values)


def parse_domain(spec: str, extent: int | None = None) -> tuple[int, ...]:
    """Parse a domain spec: ``"lo:hi:pow2"``, ``"lo:hi:step"``, ``"lo:hi"`` (step 1) or ``"a,b,c"``.

    Values must be positive integers. When the loop ``extent`` is known, values above it are dropped (a
    tile larger than the loop behaves like one equal to it); if none survive, the smallest value is kept.
    """
    text = spec.strip()

    def bad(why: str) -> UsageError:
        return UsageError(f"bad domain '{spec}': {why} (expected 'lo:hi:pow2', 'lo:hi:step' or 'a,b,c')")

    def number(s: str) -> int:
        s = s.strip()
        if not (s.isascii() and s.isdigit()):
            raise bad(f"'{s}' is not a positive integer")
        value = int(s)
        if value < 1:
            raise bad("values must be >= 1")
        return value

    if not text:
        raise bad("empty")
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise bad("a range has two or three ':'-separated fields")
        lo, hi = number(parts[0]), number(parts[1])
        if lo > hi:
            raise bad(f"lo {lo} > hi {hi}")
        step = parts[2].strip() if len(parts) == 3 else "1"
        if step == "pow2":
            values = [v for v in pow2_domain(hi, cap=hi) if v >= lo]
            if not values:
                raise bad(f"no power of two in [{lo}, {hi}]")
        elif step.isascii() and step.isdigit() and int(step) >= 1:
            values = list(range(lo, hi + 1, int(step)))
        else:
            raise bad(f"step '{step}' is neither 'pow2' nor a positive integer")
    else:
        values = sorted({number(s) for s in text.split(",")})
    if extent is not None:
        values = [v for v in values if v <= extent] or values[:1]
    return tuple(values)
