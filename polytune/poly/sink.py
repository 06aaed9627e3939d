"""Sinking a point loop below the bands inside it: where a tiled band's point band has bands below it (its
loops enclose other loops), a point member that carries no dependence and along which no access jumps across
rows is moved below every band inside, to the leaves, so that it runs innermost in each of them.

The case: applying Householder reflectors (LAPACK's dlarf pattern), `for k: for j: { w[j] = 0; for i: w[j] +=
V[i][k] * A[i][j]; for i: A[i][j] -= tau[k] * V[i][k] * w[j]; }`. isl's scheduler makes (j, k) the tiled band
and leaves i on a band of its own inside it, so the innermost loops walk A down its columns. With j sunk, each
sweep over i runs the 32 columns of the tile innermost: unit stride, vectorized (dev box: 1.4 s -> 0.074 s).

Legal: the member carries no dependence at its place (every dependence between instances that agree on the
loops outside it has distance 0 along it), so any loop order among the loops inside keeps every dependence
forward; the final schedule is checked anyway (legality.py).
"""
from __future__ import annotations

from .point_order import permute


def sink(point, m: int):
    """Point band *point* with member *m* moved below every band inside it. Returns the point band (without
    *m*; it has at least one other member)."""
    n = point.band_n_member()
    point = permute(point, [k for k in range(n) if k != m] + [m])
    return point.band_split(n - 1).child(0).band_sink().parent()
