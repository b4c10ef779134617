"""Grouping interaction patterns into superpatterns (Li & Neal; thesis §3.3–3.5, eq. 3.44–3.49).

A pattern fixes the values of some discrete inputs; its *expression* E is the set of
training cases that have those values. The coefficients of patterns with the same
expression enter the likelihood only through their sum (thesis eq. 3.9–3.10), so they
form one **group** and the model samples one compressed parameter s_g per group and
class. Patterns expressed by no training case do not enter the likelihood at all.

Everything here depends on the training **inputs** only (never on the responses), so the
grouping — and therefore the numbers of original and compressed parameters — is the same
for every class ("per class" counts). Each group records

* its expression, as CSR-like arrays ``case_indices[case_indptr[g]:case_indptr[g + 1]]``
  (sorted training-case indices, 0-based);
* ``order_counts[g, o]`` = n_{g,o}, the number of its patterns of order o, from which the
  compressed prior width is W_g = Σ_o n_{g,o} σ_o^α (α = 1: Cauchy scale, α = 2: Gaussian
  variance; thesis eq. 3.12, 3.49).

Sequences (:func:`group_sequence_patterns`, thesis §3.4.1, Fig. 3.5)
    Row i of X is a history in time order, **the last column the most recent symbol**
    (the paper's x_O). A pattern of order o fixes the o most recent symbols; the intercept
    is the order-0 pattern, so each history expresses one pattern of every order 0..O: its
    suffixes. The groups are the nodes of the compacted suffix trie of the histories read
    from the most recent symbol backwards: a group is a chain of patterns of consecutive
    orders o_lo..o_hi ("superpattern" [0⋯0 A_b⋯A_O]_f with o_lo = O − f + 1,
    o_hi = O − b + 1). Built level by level in O(N·O) time.

Classification (:func:`group_classification_patterns`, thesis §3.5.1, eq. 3.44–3.49)
    A pattern of order o fixes the values of any o of the p features (o ≤ O). The
    superpatterns come from the entropy-splitting recursion of thesis §3.5.1 (reconstructed: docs/interactions.md)
    (Fig. 3.16 of the thesis is lost), and superpatterns with the same expression are
    then merged into one group by hashing their (sorted) case sets.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from hdbayes._numba import jit
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

__all__ = [
    "ClassificationGrouping",
    "ExpressedGroups",
    "SequenceGrouping",
    "count_parameters",
    "group_classification_patterns",
    "group_sequence_patterns",
]


# ---------------------------------------------------------------------------
# Input checks and encoding
# ---------------------------------------------------------------------------


def _check_order(order, n_columns):
    if isinstance(order, bool) or not isinstance(order, numbers.Integral):
        raise TypeError(f"order must be an integer, got {type(order).__name__}")
    order = int(order)
    if order < 0:
        raise ValueError(f"order must be >= 0, got {order}")
    if order > n_columns:
        raise ValueError(f"order={order} exceeds the number of columns of X ({n_columns})")
    return order


def _check_no_missing(X, name):
    """Reject NaN/inf in float arrays and None/NaN in object arrays."""
    if X.dtype.kind in "fc":
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite values; codes must be finite")
    elif X.dtype.kind == "O":
        for value in X.flat:
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                raise ValueError(f"{name} contains missing values (None/NaN); codes must be given for every entry")


def _check_codes(X, name="X"):
    """A 2-D array of discrete codes with at least one row."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (cases × columns), got {X.ndim} dimension(s)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows (cases); at least one training case is needed")
    _check_no_missing(X, name)
    return X


def _unique_inverse(values, name):
    """np.unique(values, return_inverse=True) with a clear error for incomparable codes."""
    try:
        categories, inverse = np.unique(values, return_inverse=True)
    except TypeError as err:
        raise TypeError(f"{name} mixes codes of types that cannot be compared (e.g. strings and numbers)") from err
    return categories, inverse.reshape(values.shape).astype(np.int64)


def _encode_test_codes(x, categories):
    """Map codes of a test case to indices into ``categories``; unseen codes become −2."""
    x = np.asarray(x)
    out = np.full(x.shape, -2, np.int64)
    if categories.size == 0:
        return out
    try:
        idx = np.clip(np.searchsorted(categories, x), 0, categories.size - 1)
    except TypeError as err:
        raise TypeError("x_test holds codes that cannot be compared with the training codes") from err
    known = categories[idx] == x
    out[known] = idx[known]
    return out


def _check_test_input(X_test, ndim, n_columns, what, exact=False):
    """One test case (``ndim`` 1, ``x_test``) or a matrix of them (``ndim`` 2, ``X_test``) with at least
    ``n_columns`` codes each (exactly ``n_columns`` features if ``exact``), none missing."""
    X = np.asarray(X_test)
    name, shape, unit = ("x_test", "a 1-D array (one case)", "entries") if ndim == 1 else (
        "X_test", "a 2-D array (cases × columns)", "columns")  # fmt: skip
    if X.ndim != ndim:
        raise ValueError(f"{name} must be {shape}, got {X.ndim} dimension(s)")
    if X.shape[-1] < n_columns:
        raise ValueError(f"{name} has {X.shape[-1]} {unit} but {what} needs at least {n_columns}")
    _check_no_missing(X, name)
    if exact and X.shape[-1] != n_columns:
        raise ValueError(f"{name} has {X.shape[-1]} features, the training data had {n_columns}")
    return X


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class ExpressedGroups(NamedTuple):
    """The training groups a test case touches (thesis §3.4.2 and §3.5.1).

    Attributes
    ----------
    groups : ndarray of shape (T,)
        Ids of the groups containing at least one pattern expressed by the test case
        (increasing).
    counts : ndarray of shape (T, order + 1)
        ``counts[j, o]`` = t_{g,o}, the number of order-o patterns of group ``groups[j]``
        that the test case expresses. The width of its share s_g^t is Σ_o t_{g,o} σ_o^α.
    new_counts : ndarray of shape (order + 1,)
        Number of order-o patterns expressed by the test case but by no training case
        (the "extra" coefficients of eq. 3.25, drawn from their prior).
    """

    groups: np.ndarray
    counts: np.ndarray
    new_counts: np.ndarray

    @property
    def new_orders(self):
        """Orders with at least one new pattern (for sequences: each such order has one)."""
        return np.flatnonzero(self.new_counts)


@dataclass(frozen=True, eq=False)
class _Grouping:
    order: int
    n_cases: int
    case_indptr: np.ndarray
    case_indices: np.ndarray
    order_counts: np.ndarray

    @property
    def n_groups(self):
        """G, the number of groups = compressed parameters per class."""
        return int(self.order_counts.shape[0])

    @property
    def n_patterns(self):
        """Number of distinct patterns of order ≤ ``order`` expressed by ≥ 1 training case."""
        return int(self.order_counts.sum())

    @property
    def group_sizes(self):
        """n_g = Σ_o n_{g,o}, the number of patterns in each group."""
        return self.order_counts.sum(axis=1)

    def cases(self, g: int) -> np.ndarray:
        """Sorted indices of the training cases expressing group ``g`` (its expression E_g).

        Parameters
        ----------
        g : int
            A group, 0 <= g < ``n_groups``.

        Returns
        -------
        ndarray of int
            The indices into the training cases, increasing (a view of ``case_indices``).
        """
        return self.case_indices[self.case_indptr[g] : self.case_indptr[g + 1]]

    def prior_widths(self, sigma: ArrayLike, alpha: float) -> np.ndarray:
        """W_g = Σ_o n_{g,o} σ_o^α (thesis eq. 3.12, 3.49).

        Parameters
        ----------
        sigma : array-like of shape (order + 1,) or (..., order + 1)
            σ_o, the prior width of an interaction of each order 0..``order`` (a leading batch
            shape, e.g. one row per draw, is kept).
        alpha : float
            The exponent α: 1 gives the Cauchy scale of s_g, 2 the Gaussian **variance**.

        Returns
        -------
        ndarray of shape (n_groups,) or (..., n_groups)
            W_g for every group.
        """
        sigma = np.asarray(sigma, dtype=np.float64)
        if sigma.shape[-1] != self.order + 1:
            raise ValueError(
                f"sigma must have {self.order + 1} entries (orders 0..{self.order}), got {sigma.shape[-1]}"
            )
        return (sigma[..., None, :] ** alpha * self.order_counts).sum(axis=-1)


# ---------------------------------------------------------------------------
# Sequence models: the compacted suffix trie (thesis §3.4.1, Fig. 3.5)
# ---------------------------------------------------------------------------


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
        x = _check_test_input(x_test, 1, self.order, "a sequence model of this order")
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
        return self._expressed_all(_check_test_input(X_test, 2, self.order, "a sequence model of this order"))

    def _expressed_all(self, X):
        """:meth:`expressed_by_all` for test cases already checked."""
        order = self.order
        used = X[:, X.shape[1] - order :][:, ::-1] if order else X[:, :0]
        r = np.ascontiguousarray(_encode_test_codes(used, self.symbols))
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
    X = _check_codes(X)
    order = _check_order(order, X.shape[1])
    used = X[:, X.shape[1] - order :] if order else X[:, :0]
    symbols, codes = _unique_inverse(used, "X")
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


# ---------------------------------------------------------------------------
# Classification models (thesis §3.5.1, eq. 3.44–3.49)
# ---------------------------------------------------------------------------


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
        x = _check_test_input(x_test, 1, self.n_features, "this classification model", exact=True)
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
        return self._expressed_all(_check_test_input(X_test, 2, self.n_features, "this classification model",
                                                     exact=True))  # fmt: skip

    def _expressed_all(self, X):
        """:meth:`expressed_by_all` for test cases already checked."""
        codes = np.empty(X.shape, np.int64)
        for t, cat in enumerate(self.categories):
            codes[:, t] = _encode_test_codes(X[:, t], cat)
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
    X = _check_codes(X)
    order = _check_order(order, X.shape[1])
    n, p = X.shape
    _binomial_table(p, order)  # refuses, before any work, counts beyond int64
    categories = []
    C = np.empty((n, p), np.int64)
    for t in range(p):
        cat, inv = _unique_inverse(X[:, t], f"column {t} of X")
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


# ---------------------------------------------------------------------------
# Parameter counts (thesis §3.4.3, §3.5.2)
# ---------------------------------------------------------------------------


def count_parameters(
        X: ArrayLike, order: int, kind: Literal["sequence", "classification"] = "sequence") -> tuple[int, int]:
    """The numbers of original and compressed parameters **per class** (as counted in thesis §3.4.3).

    Parameters
    ----------
    X : array_like of shape (N, O) or (N, p)
        Training inputs (see :func:`group_sequence_patterns` /
        :func:`group_classification_patterns`).
    order : int
        Highest order of the patterns.
    kind : {"sequence", "classification"}
        Suffix patterns of histories, or patterns over any ≤ ``order`` features.

    Returns
    -------
    n_original : int
        Distinct patterns of order ≤ ``order`` (intercept included) expressed by at least
        one training case.
    n_compressed : int
        Number of distinct non-empty expressions = groups = compressed parameters.

    Notes
    -----
    The grouping uses the inputs only, so both counts are the same for every class; a
    model with K sampled coefficient sets has K times as many in total (K ≥ 3; one set
    for K = 2).
    """
    if kind == "sequence":
        grouping = group_sequence_patterns(X, order)
    elif kind == "classification":
        grouping = group_classification_patterns(X, order)
    else:
        raise ValueError(f"kind must be 'sequence' or 'classification', got {kind!r}")
    return grouping.n_patterns, grouping.n_groups
