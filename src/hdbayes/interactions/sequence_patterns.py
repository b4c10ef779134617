"""Grouping the patterns of a logistic sequence prediction model (Li & Neal; thesis §3.4.1, Fig. 3.5).

Row i of X is a history in time order, **the last column the most recent symbol**
(the paper's x_O). A pattern of order o fixes the o most recent symbols; the intercept
is the order-0 pattern, so each history expresses one pattern of every order 0..O: its
suffixes. The groups are the nodes of the compacted suffix trie of the histories read
from the most recent symbol backwards: a group is a chain of patterns of consecutive
orders o_lo..o_hi ("superpattern" [0⋯0 A_b⋯A_O]_f with o_lo = O − f + 1,
o_hi = O − b + 1). Built level by level in O(N·O) time.

The shared input checks and results are those of :mod:`hdbayes.interactions._grouping`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._numba import jit
from hdbayes.interactions import _grouping
from hdbayes.interactions._grouping import ExpressedGroups, _Grouping

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["SequenceGrouping", "group_sequence_patterns"]


@jit
def _sequence_trie(R):
    """Compacted suffix trie of the rows of R, level by level.

    R[i, d] is the symbol d + 1 steps back in history i (column 0 = most recent).
    Returns per group: lo, hi (range in the final case permutation), lowest and highest
    order, parent, first child id and number of children, and the permutation. Children
    of a node are created consecutively in increasing order of their key symbol.
    """
    n, order = R.shape
    max_groups = 2 * n  # a compacted trie with ≤ n leaves has ≤ 2n − 1 nodes
    g_lo = np.empty(max_groups, np.int64)
    g_hi = np.empty(max_groups, np.int64)
    g_olo = np.empty(max_groups, np.int64)
    g_ohi = np.empty(max_groups, np.int64)
    g_parent = np.empty(max_groups, np.int64)
    g_child0 = np.full(max_groups, -1, np.int64)
    g_nchild = np.zeros(max_groups, np.int64)
    perm = np.arange(n)
    buf = np.empty(n, np.int64)
    n_symbols = 0
    for i in range(n):
        for d in range(order):
            if R[i, d] + 1 > n_symbols:
                n_symbols = R[i, d] + 1
    counts = np.zeros(max(n_symbols, 1), np.int64)
    touched = np.empty(n, np.int64)

    g_lo[0], g_hi[0], g_olo[0], g_ohi[0], g_parent[0] = 0, n, 0, 0, -1
    n_groups = 1
    active = np.empty(n, np.int64)
    next_active = np.empty(n, np.int64)
    active[0] = 0
    n_active = 1
    for d in range(order):
        n_next = 0
        for a in range(n_active):
            g = active[a]
            lo, hi = g_lo[g], g_hi[g]
            if hi - lo == 1:  # a single history: the chain runs to the full order
                g_ohi[g] = order
                continue
            first = R[perm[lo], d]
            same = True
            for k in range(lo + 1, hi):
                if R[perm[k], d] != first:
                    same = False
                    break
            if same:  # one child with non-empty expression: the chain continues
                g_ohi[g] = d + 1
                next_active[n_next] = g
                n_next += 1
                continue
            # the node splits: stable counting sort of perm[lo:hi] by the symbol at depth d
            n_touched = 0
            for k in range(lo, hi):
                s = R[perm[k], d]
                if counts[s] == 0:
                    touched[n_touched] = s
                    n_touched += 1
                counts[s] += 1
            keys = np.sort(touched[:n_touched])
            pos = lo
            g_child0[g] = n_groups
            g_nchild[g] = n_touched
            for j in range(n_touched):
                s = keys[j]
                c = counts[s]
                counts[s] = pos
                g_lo[n_groups], g_hi[n_groups] = pos, pos + c
                g_olo[n_groups], g_ohi[n_groups], g_parent[n_groups] = d + 1, d + 1, g
                next_active[n_next] = n_groups
                n_next += 1
                n_groups += 1
                pos += c
            for k in range(lo, hi):
                s = R[perm[k], d]
                buf[counts[s]] = perm[k]
                counts[s] += 1
            for k in range(lo, hi):
                perm[k] = buf[k]
            for j in range(n_touched):
                counts[keys[j]] = 0
        active, next_active = next_active, active
        n_active = n_next
    return (
        g_lo[:n_groups],
        g_hi[:n_groups],
        g_olo[:n_groups],
        g_ohi[:n_groups],
        g_parent[:n_groups],
        g_child0[:n_groups],
        g_nchild[:n_groups],
        perm,
    )


@jit
def _ranges_to_csr(lo, hi, perm):
    """Concatenate sorted perm[lo[g]:hi[g]] for every g (the expressions as CSR)."""
    n_groups = lo.shape[0]
    indptr = np.zeros(n_groups + 1, np.int64)
    for g in range(n_groups):
        indptr[g + 1] = indptr[g] + hi[g] - lo[g]
    indices = np.empty(indptr[-1], np.int64)
    for g in range(n_groups):
        indices[indptr[g] : indptr[g + 1]] = np.sort(perm[lo[g] : hi[g]])
    return indptr, indices


@dataclass(frozen=True, eq=False)
class SequenceGrouping(_Grouping):
    """Superpatterns of a logistic sequence prediction model (thesis §3.4.1).

    Group g is a node of the compacted suffix trie: it holds the patterns of orders
    ``order_range[g, 0]`` … ``order_range[g, 1]`` (one per order, so ``order_counts[g]``
    is 1 on that range and 0 elsewhere) that fix the most recent symbols of any case in
    its expression to ``histories[representative[g]]``.

    Attributes
    ----------
    order, n_cases : int
    case_indptr, case_indices : ndarray
        Expression of group g: ``case_indices[case_indptr[g]:case_indptr[g + 1]]``.
    order_counts : ndarray of shape (G, order + 1)
        n_{g,o}.
    symbols : ndarray
        The sorted distinct codes of the used columns; code ``symbols[k]`` is encoded as k.
    histories : ndarray of shape (N, order)
        Encoded training histories, **most recent symbol first** (column d = d + 1 steps
        back).
    order_range : ndarray of shape (G, 2)
        Lowest and highest order of the patterns of each group (root: lowest order 0).
    parent : ndarray of shape (G,)
        Parent node in the trie (−1 for the root, group 0).
    first_child, n_children : ndarray of shape (G,)
        The children of g are ``first_child[g] … first_child[g] + n_children[g] − 1``, in
        increasing order of their key ``histories[representative[c], order_range[c, 0] − 1]``.
    representative : ndarray of shape (G,)
        A training case expressing the group (its symbols define the group's patterns).
    """

    symbols: np.ndarray
    histories: np.ndarray
    order_range: np.ndarray
    parent: np.ndarray
    first_child: np.ndarray
    n_children: np.ndarray
    representative: np.ndarray

    def pattern(self, g: int) -> tuple[np.ndarray, int]:
        """The longest pattern of group g and the order of its shortest member.

        Parameters
        ----------
        g : int
            A group index.

        Returns
        -------
        codes : ndarray
            The original codes of the pattern's fixed symbols, **most recent first**.
        lowest_order : int
            The order of the group's shortest member.
        """
        lo, hi = self.order_range[g]
        return self.symbols[self.histories[self.representative[g], :hi]], int(lo)

    def groups_expressed_by(self, x_test: ArrayLike) -> ExpressedGroups:
        """The groups (and members) expressed by a test history (thesis §3.4.2).

        Parameters
        ----------
        x_test : array_like of shape (O',)
            One history in time order (last entry most recent), O' ≥ ``order``; only the
            last ``order`` symbols are used. Codes unseen in training match nothing.

        Returns
        -------
        ExpressedGroups
            The groups along the trie path of x_test, the orders of their members that it
            expresses, and its new patterns: one for every order above the longest suffix
            shared with a training history (``new_orders``).

        Notes
        -----
        Walks the trie from the root: O(order · log A) per test case (compiled, see
        :meth:`expressed_by_all`).
        """
        x = _grouping._check_test_input(x_test, 1, self.order, "a sequence model of this order")
        _, groups, counts, new_counts = self._expressed_all(x[None, :])
        return ExpressedGroups(groups, counts, new_counts[0])

    def expressed_by_all(self, X_test: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`groups_expressed_by` for every row of ``X_test`` at once (compiled trie walk).

        Parameters
        ----------
        X_test : array_like of shape (T, O')
            Test histories in time order (last column most recent), O' ≥ ``order``.

        Returns
        -------
        ptr : int64 ndarray of shape (T + 1,)
            Case t's entries in ``groups`` and ``counts`` are rows ``ptr[t]:ptr[t + 1]``.
        groups : int64 ndarray of shape (P,)
            The groups of every case, case after case, as ``groups_expressed_by(X_test[t]).groups`` gives them.
        counts : int64 ndarray of shape (P, order + 1)
            Their counts t_{g,o}, as ``groups_expressed_by(X_test[t]).counts`` gives them.
        new_counts : int64 ndarray of shape (T, order + 1)
            Row t is ``groups_expressed_by(X_test[t]).new_counts``.
        """
        return self._expressed_all(_grouping._check_test_input(X_test, 2, self.order, "a sequence model of this order"))

    def _expressed_all(self, X):
        """:meth:`expressed_by_all` for test cases already checked."""
        order = self.order
        used = X[:, X.shape[1] - order :][:, ::-1] if order else X[:, :0]
        r = np.ascontiguousarray(_grouping._encode_test_codes(used, self.symbols))
        child_keys = np.full(self.n_groups, -1, np.int64)
        children = np.flatnonzero(self.order_range[:, 0] > 0)
        child_keys[children] = self.histories[self.representative[children], self.order_range[children, 0] - 1]
        return _sequence_expressed_all(
            r, order, self.order_range, self.histories, self.representative, self.first_child, self.n_children,
            child_keys,
        )  # fmt: skip


@jit
def _sequence_expressed_all(r, order, order_range, histories, representative, first_child, n_children, child_keys):
    """The trie walk of :meth:`SequenceGrouping.groups_expressed_by` for every row of ``r``.

    ``r[t, d]`` is the encoded symbol d + 1 steps back in test case t (−2 if unseen);
    ``child_keys[c]`` is the symbol that leads from c's parent to c. A path visits at most
    order + 1 groups, so the output is sized T · (order + 1) and trimmed.
    """
    T = r.shape[0]
    n_orders = order + 1
    ptr = np.zeros(T + 1, np.int64)
    groups = np.empty(T * n_orders, np.int64)
    counts = np.zeros((T * n_orders, n_orders), np.int64)
    new_counts = np.zeros((T, n_orders), np.int64)
    p = 0
    for t in range(T):
        g = 0
        while True:
            lo, hi = order_range[g, 0], order_range[g, 1]
            rep = representative[g]
            matched = lo
            while matched < hi and r[t, matched] == histories[rep, matched]:
                matched += 1
            groups[p] = g
            for o in range(lo, matched + 1):
                counts[p, o] = 1
            p += 1
            if matched < hi or hi == order:
                for o in range(matched + 1, n_orders):
                    new_counts[t, o] = 1
                break
            # all members matched: descend to the child keyed by the next symbol back (keys increase)
            key = r[t, hi]
            a, b = first_child[g], first_child[g] + n_children[g]
            while a < b:
                mid = (a + b) // 2
                if child_keys[mid] < key:
                    a = mid + 1
                else:
                    b = mid
            if a == first_child[g] + n_children[g] or child_keys[a] != key:
                for o in range(hi + 1, n_orders):
                    new_counts[t, o] = 1
                break
            g = a
        ptr[t + 1] = p
    return ptr, groups[:p].copy(), counts[:p].copy(), new_counts


def group_sequence_patterns(X: ArrayLike, order: int) -> SequenceGrouping:
    """Group the suffix patterns of a sequence model into superpatterns (thesis Fig. 3.5).

    Parameters
    ----------
    X : array_like of shape (N, O)
        Training histories, one per row, in time order: **the last column is the most
        recent symbol** (x_O in the paper). Any comparable codes (integers, strings) are
        accepted; they are mapped to 0..A−1 by their sorted order.
    order : int
        Highest order O' ≤ O of the patterns; only the last ``order`` columns are used.

    Returns
    -------
    SequenceGrouping
        G groups with pairwise distinct non-empty expressions; every pattern of order
        ≤ ``order`` expressed by a training case is in exactly one group.

    Notes
    -----
    Equivalent to the depth-first construction of thesis §3.4.1 but breadth-first: at each depth every active
    node either continues its chain (its cases agree on the next symbol back) or splits
    into one child per symbol by a stable counting sort of its cases. The cases of the
    nodes at one depth are disjoint, so the cost is O(N · order) plus sorting the distinct
    symbols at each split.
    """
    X = _grouping._check_codes(X)
    order = _grouping._check_order(order, X.shape[1])
    used = X[:, X.shape[1] - order :] if order else X[:, :0]
    symbols, codes = _grouping._unique_inverse(used, "X")
    R = np.ascontiguousarray(codes[:, ::-1])
    lo, hi, olo, ohi, parent, child0, nchild, perm = _sequence_trie(R)
    indptr, indices = _ranges_to_csr(lo, hi, perm)
    orders = np.arange(order + 1)
    order_counts = ((orders[None, :] >= olo[:, None]) & (orders[None, :] <= ohi[:, None])).astype(np.int64)
    return SequenceGrouping(
        order=order,
        n_cases=X.shape[0],
        case_indptr=indptr,
        case_indices=indices,
        order_counts=order_counts,
        symbols=symbols,
        histories=R,
        order_range=np.stack([olo, ohi], axis=1),
        parent=parent,
        first_child=child0,
        n_children=nchild,
        representative=perm[lo],
    )
