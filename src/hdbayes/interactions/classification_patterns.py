"""Grouping the patterns of a classification model over discrete features (Li & Neal; thesis §3.5.1,
eq. 3.44–3.49).

A pattern of order o fixes the values of any o of the p features (o ≤ O). The
superpatterns come from the entropy-splitting recursion of thesis §3.5.1 (reconstructed: docs/interactions.md)
(Fig. 3.16 of the thesis is lost), and superpatterns with the same expression are
then merged into one group by hashing their (sorted) case sets.

The shared input checks and results are those of :mod:`hdbayes.interactions._grouping`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._numba import jit
from hdbayes.exceptions import InputValueError
from hdbayes.interactions import _grouping
from hdbayes.interactions._grouping import ExpressedGroups, _Grouping

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ClassificationGrouping", "group_classification_patterns"]


@jit
def _grow_rows(a, rows):
    out = np.empty((rows,) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    return out


@jit
def _classification_superpatterns(C, n_values, order):
    """The entropy-splitting recursion (thesis §3.5.1; reconstructed in docs/interactions.md) with an explicit stack.

    C[i, t] ∈ 0..n_values[t] − 1. A frame is (lo, hi, o, A, U, kind): its expression is
    perm[lo:hi], A[t] the value fixed at feature t (−1 = fixed at 0, "absent"), U the
    unconsidered features, o the order of the base pattern. kind 0 = DIVERGE_CLS, kind 1 =
    emit the superpattern whose unfixed positions are U (with their constant values A).
    Returns the emitted superpatterns: values, unfixed mask, lowest order and their
    expressions as CSR (sorted case indices).
    """
    n, p = C.shape
    max_k = 1
    for t in range(p):
        max_k = max(max_k, n_values[t])
    perm = np.arange(n)
    buf = np.empty(n, np.int64)
    counts = np.zeros(max_k, np.int64)
    starts = np.zeros(max_k, np.int64)

    # DFS stack; each pop pushes ≤ 1 + max_k frames and removes one feature from U
    cap = (p + 2) * (max_k + 1) + 2
    st_lo = np.empty(cap, np.int64)
    st_hi = np.empty(cap, np.int64)
    st_o = np.empty(cap, np.int64)
    st_kind = np.empty(cap, np.int64)
    st_A = np.empty((cap, p), np.int64)
    st_U = np.empty((cap, p), np.bool_)
    st_lo[0], st_hi[0], st_o[0], st_kind[0] = 0, n, 0, 0
    st_A[0, :] = -1
    st_U[0, :] = True
    top = 1

    sp_cap = 256
    sp_A = np.empty((sp_cap, p), np.int64)
    sp_U = np.empty((sp_cap, p), np.bool_)
    sp_o = np.empty(sp_cap, np.int64)
    sp_ptr = np.zeros(sp_cap + 1, np.int64)
    idx_cap = 4 * n + 16
    sp_idx = np.empty(idx_cap, np.int64)
    n_sp = 0

    A = np.empty(p, np.int64)
    U = np.empty(p, np.bool_)
    while top > 0:
        top -= 1
        lo, hi, o, kind = st_lo[top], st_hi[top], st_o[top], st_kind[top]
        A[:] = st_A[top]
        U[:] = st_U[top]
        if kind == 0 and o == order:
            U[:] = False  # no higher-order pattern allowed: the base pattern alone
            kind = 1
        if kind == 0:
            best = -1
            best_h = -1.0
            size = hi - lo
            for t in range(p):
                if not U[t]:
                    continue
                for k in range(n_values[t]):
                    counts[k] = 0
                for k in range(lo, hi):
                    counts[C[perm[k], t]] += 1
                h = 0.0
                distinct = 0
                for k in range(n_values[t]):
                    if counts[k] > 0:
                        distinct += 1
                        q = counts[k] / size
                        h -= q * np.log(q)
                if distinct > 1 and h > best_h + 1e-12:  # ties → smaller index
                    best = t
                    best_h = h
            if best == -1:
                # every unconsidered feature is constant on E: they become unfixed
                for t in range(p):
                    if U[t]:
                        A[t] = C[perm[lo], t]
                kind = 1
        if kind == 1:
            if n_sp == sp_cap:
                sp_cap *= 2
                sp_A = _grow_rows(sp_A, sp_cap)
                sp_U = _grow_rows(sp_U, sp_cap)
                sp_o = _grow_rows(sp_o, sp_cap)
                sp_ptr = _grow_rows(sp_ptr, sp_cap + 1)
            start = sp_ptr[n_sp]
            if start + hi - lo > idx_cap:
                idx_cap = max(2 * idx_cap, start + hi - lo)
                sp_idx = _grow_rows(sp_idx, idx_cap)
            sp_idx[start : start + hi - lo] = np.sort(perm[lo:hi])
            sp_ptr[n_sp + 1] = start + hi - lo
            sp_A[n_sp] = A
            sp_U[n_sp] = U
            sp_o[n_sp] = o
            n_sp += 1
            continue

        # split on the most diverse feature
        U[best] = False
        remaining = False
        for t in range(p):
            if U[t]:
                remaining = True
                break
        # branch a: feature `best` stays absent, same expression (pushed first → popped
        # after the children, which only reorder perm inside their own sub-ranges)
        st_lo[top], st_hi[top], st_o[top] = lo, hi, o
        st_A[top] = A
        st_U[top] = U
        st_kind[top] = 0 if remaining else 1
        top += 1
        # branch b: one child per value of `best` present in E (here o < order)
        for k in range(n_values[best]):
            counts[k] = 0
        for k in range(lo, hi):
            counts[C[perm[k], best]] += 1
        pos = lo
        for k in range(n_values[best]):
            starts[k] = pos
            pos += counts[k]
        for k in range(lo, hi):
            v = C[perm[k], best]
            buf[starts[v]] = perm[k]
            starts[v] += 1
        for k in range(lo, hi):
            perm[k] = buf[k]
        pos = lo
        child_kind = 0 if remaining and o + 1 < order else 1
        for v in range(n_values[best]):
            if counts[v] == 0:
                continue
            st_lo[top], st_hi[top], st_o[top], st_kind[top] = pos, pos + counts[v], o + 1, child_kind
            st_A[top] = A
            st_A[top, best] = v
            if child_kind == 1:
                st_U[top, :] = False
            else:
                st_U[top] = U
            top += 1
            pos += counts[v]
    return sp_A[:n_sp], sp_U[:n_sp], sp_o[:n_sp], sp_ptr[: n_sp + 1], sp_idx[: sp_ptr[n_sp]]


@functools.lru_cache(maxsize=16)
def _binomial_table(n, max_k):
    """C(a, b) for a = 0..n and b = 0..max_k (0 for b > a), int64, read-only.

    Only orders up to the model's O are needed, so the table has O + 1 columns; it is
    cached because every test case of a fitted model uses the same one. Counts beyond
    int64 (C(p, O) > 2^62, e.g. O ≥ 6 with p = 10⁴ features) are refused, since the
    parameter counts per group are kept as integers.
    """
    max_k = min(max_k, n)
    if math.comb(n, min(max_k, n // 2)) > 2**62:  # the largest entry: C(n, b) grows up to b = n/2
        raise InputValueError(
            f"order {max_k} with {n} features gives more than 2^62 interaction patterns of one order; "
            "use a smaller order"
        )
    table = np.zeros((n + 1, max_k + 1), np.int64)
    for a in range(n + 1):
        for b in range(min(a, max_k) + 1):
            table[a, b] = math.comb(a, b)
    table.setflags(write=False)
    return table


def _superpattern_order_counts(lowest, n_unfixed, order, binom):
    """(3.49): a superpattern with lowest order o and u unfixed positions has C(u, d)
    patterns of order o + d, d = 0..min(order − o, u)."""
    orders = np.arange(order + 1)
    d = orders[None, :] - lowest[:, None]
    ok = (d >= 0) & (d <= n_unfixed[:, None])
    return np.where(ok, binom[n_unfixed[:, None], np.clip(d, 0, binom.shape[1] - 1)], 0)


@dataclass(frozen=True, eq=False)
class ClassificationGrouping(_Grouping):
    """Groups of interaction patterns of a classification model (thesis §3.5.1).

    A group is a list of superpatterns with the same expression. Superpattern j
    (thesis notation (A over I)_f^o) is stored in encoded form: ``sp_values[j, t]`` is the
    index into ``categories[t]`` of the value at feature t or −1 for 0 ("absent");
    ``sp_unfixed[j, t]`` marks the unfixed positions (I_t = 0), whose value may be absent
    or ``sp_values[j, t]``; ``sp_order[j]`` is o, its lowest order; it belongs to group
    ``sp_group[j]``.

    Attributes
    ----------
    order, n_cases : int
    n_features : int
        p.
    case_indptr, case_indices, order_counts : ndarray
        As for :class:`SequenceGrouping`; ``order_counts[g, o]`` = Σ over the group's
        superpatterns of (3.49).
    categories : tuple of ndarray
        Sorted distinct codes of each feature.
    sp_values, sp_unfixed, sp_order, sp_group : ndarray
        The superpatterns (S of them).
    """

    n_features: int
    categories: tuple
    sp_values: np.ndarray
    sp_unfixed: np.ndarray
    sp_order: np.ndarray
    sp_group: np.ndarray

    @property
    def n_superpatterns(self) -> int:
        """S, the number of superpatterns (rows of ``sp_values``)."""
        return int(self.sp_order.shape[0])

    def groups_expressed_by(self, x_test: ArrayLike) -> ExpressedGroups:
        """The groups (and members) expressed by a test case (thesis §3.5.1).

        Parameters
        ----------
        x_test : array_like of shape (p,)
            Feature codes of one case; codes unseen in training match nothing.

        Returns
        -------
        ExpressedGroups
            ``new_counts[o]`` = C(p, o) − Σ_g t_{g,o}, the number of order-o patterns of
            x_test that no training case expresses.

        Notes
        -----
        A superpattern contributes nothing if a fixed non-absent value differs from
        x_test; otherwise its unfixed positions that differ become absent and (3.49)
        counts its expressed members. Cost O(S · p) (compiled, see :meth:`expressed_by_all`).
        """
        x = _grouping._check_test_input(x_test, 1, self.n_features, "this classification model", exact=True)
        _, groups, counts, new_counts = self._expressed_all(x[None, :])
        return ExpressedGroups(groups, counts, new_counts[0])

    def expressed_by_all(self, X_test: ArrayLike) -> tuple[np.ndarray, ...]:
        """:meth:`groups_expressed_by` for every row of ``X_test`` at once (compiled).

        Parameters
        ----------
        X_test : array_like of shape (T, p)
            The test cases, coded as the training features.

        Returns
        -------
        tuple of four int64 ndarrays
            ``ptr``, ``groups``, ``counts`` and ``new_counts``, as for :meth:`SequenceGrouping.expressed_by_all`.
        """
        return self._expressed_all(_grouping._check_test_input(X_test, 2, self.n_features, "this classification model",
                                                     exact=True))  # fmt: skip

    def _expressed_all(self, X):
        """:meth:`expressed_by_all` for test cases already checked."""
        codes = np.empty(X.shape, np.int64)
        for t, cat in enumerate(self.categories):
            codes[:, t] = _grouping._encode_test_codes(X[:, t], cat)
        binom = _binomial_table(self.n_features, self.order)
        return _classification_expressed_all(
            codes, self.order, self.sp_values, self.sp_unfixed, self.sp_order, self.sp_group, self.n_groups,
            np.ascontiguousarray(binom),
        )  # fmt: skip


@jit
def _classification_expressed_all(codes, order, sp_values, sp_unfixed, sp_order, sp_group, n_groups, binom):
    """:meth:`ClassificationGrouping.groups_expressed_by` for every row of ``codes``.

    Per case: a superpattern matches when every fixed non-absent value equals the case's;
    its unfixed positions that differ become absent, and (3.49) with u = the kept unfixed
    positions counts its expressed members, added to its group's row. The touched groups
    are reported in increasing order. Cost O(S · p) per case.
    """
    T, p = codes.shape
    S = sp_order.shape[0]
    n_orders = order + 1
    totals = np.zeros((n_groups, n_orders), np.int64)
    seen = np.zeros(n_groups, np.bool_)
    touched = np.empty(n_groups, np.int64)
    ptr = np.zeros(T + 1, np.int64)
    cap = max(16, T)
    groups = np.empty(cap, np.int64)
    counts = np.empty((cap, n_orders), np.int64)
    new_counts = np.empty((T, n_orders), np.int64)
    n_out = 0
    for t in range(T):
        n_touched = 0
        for j in range(S):
            kept = 0
            match = True
            for f in range(p):
                value = sp_values[j, f]
                if sp_unfixed[j, f]:
                    if value == codes[t, f]:
                        kept += 1
                elif value >= 0 and value != codes[t, f]:
                    match = False
                    break
            if not match:
                continue
            g = sp_group[j]
            lowest = sp_order[j]
            for o in range(lowest, min(order, lowest + kept) + 1):
                totals[g, o] += binom[kept, o - lowest]
            if not seen[g]:
                seen[g] = True
                touched[n_touched] = g
                n_touched += 1
        ordered = np.sort(touched[:n_touched])
        if n_out + n_touched > cap:
            cap = max(2 * cap, n_out + n_touched)
            groups = _grow_rows(groups, cap)
            counts = _grow_rows(counts, cap)
        for o in range(n_orders):
            new_counts[t, o] = binom[p, o]
        for i in range(n_touched):
            g = ordered[i]
            nonzero = False
            for o in range(n_orders):
                c = totals[g, o]
                if c != 0:
                    nonzero = True
                new_counts[t, o] -= c
            if nonzero:
                groups[n_out] = g
                counts[n_out] = totals[g]
                n_out += 1
            totals[g] = 0
            seen[g] = False
        ptr[t + 1] = n_out
    return ptr, groups[:n_out].copy(), counts[:n_out].copy(), new_counts


def group_classification_patterns(X: ArrayLike, order: int) -> ClassificationGrouping:
    """Group the interaction patterns of a classification model (thesis §3.5.1).

    Parameters
    ----------
    X : array_like of shape (N, p)
        Discrete features; each column's codes (integers, strings, …) are mapped to
        0..K_t−1 by their sorted order.
    order : int
        Highest interaction order O ≤ p.

    Returns
    -------
    ClassificationGrouping
        Groups with pairwise distinct non-empty expressions, covering every pattern of
        order ≤ O expressed by a training case exactly once.

    Notes
    -----
    Superpatterns come from the recursion of thesis §3.5.1 as reconstructed in docs/interactions.md (the thesis's Fig.
    3.16 is lost; reconstructed): split E on the unconsidered feature of largest entropy
    (ties → smaller index) into the branch where it stays absent (same E) and one branch
    per present value (E restricted, order + 1); when every unconsidered feature is
    constant on E they become unfixed positions of one superpattern. The branches
    partition the expressed patterns, and every pattern of an emitted superpattern has
    exactly its E. Superpatterns with equal expressions are then merged by hashing the
    sorted case-index arrays (a dict lookup per superpattern instead of the pairwise
    comparison of [R]). Correctness was checked against brute-force enumeration; the
    cost is not polynomially bounded in general (thesis: "slow for … a large number of
    cases and … very high order").
    """
    X = _grouping._check_codes(X)
    order = _grouping._check_order(order, X.shape[1])
    n, p = X.shape
    _binomial_table(p, order)  # refuses, before any work, counts beyond int64
    categories = []
    C = np.empty((n, p), np.int64)
    for t in range(p):
        cat, inv = _grouping._unique_inverse(X[:, t], f"column {t} of X")
        categories.append(cat)
        C[:, t] = inv
    n_values = np.array([cat.size for cat in categories], np.int64)
    sp_values, sp_unfixed, sp_order, sp_ptr, sp_idx = _classification_superpatterns(C, n_values, order)

    # merge superpatterns with identical expressions
    group_of = {}
    sp_group = np.empty(sp_order.shape[0], np.int64)
    first_sp = []
    for j in range(sp_order.shape[0]):
        key = sp_idx[sp_ptr[j] : sp_ptr[j + 1]].tobytes()
        g = group_of.get(key)
        if g is None:
            g = len(first_sp)
            group_of[key] = g
            first_sp.append(j)
        sp_group[j] = g
    first_sp = np.asarray(first_sp, np.int64)
    sizes = sp_ptr[first_sp + 1] - sp_ptr[first_sp]
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    indices = (
        np.concatenate([sp_idx[sp_ptr[j] : sp_ptr[j + 1]] for j in first_sp])
        if first_sp.size
        else np.empty(0, np.int64)
    )

    binom = _binomial_table(p, order)
    per_sp = _superpattern_order_counts(sp_order, sp_unfixed.sum(axis=1), order, binom)
    order_counts = np.zeros((first_sp.size, order + 1), np.int64)
    np.add.at(order_counts, sp_group, per_sp)
    return ClassificationGrouping(
        order=order,
        n_cases=n,
        case_indptr=indptr,
        case_indices=indices.astype(np.int64),
        order_counts=order_counts,
        n_features=p,
        categories=tuple(categories),
        sp_values=sp_values,
        sp_unfixed=sp_unfixed,
        sp_order=sp_order,
        sp_group=sp_group,
    )
