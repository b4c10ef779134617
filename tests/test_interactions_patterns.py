"""Superpattern grouping (thesis §3.4.1, §3.5.1; the classification recursion as reconstructed in
docs/interactions.md) against brute-force enumeration."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

from hdbayes.interactions.classification_patterns import _binomial_table, _superpattern_order_counts
from hdbayes.interactions.patterns import (
    ClassificationGrouping,
    SequenceGrouping,
    count_parameters,
    group_classification_patterns,
    group_sequence_patterns,
)

# ---------------------------------------------------------------------------
# brute-force oracles
# ---------------------------------------------------------------------------


def _sequence_patterns(x, order):
    """The patterns of one history: (order, suffix of length order), last entry most recent."""
    x = list(x)
    return [(o, tuple(x[len(x) - o :])) for o in range(order + 1)]


def _classification_patterns(x, order):
    p = len(x)
    return [
        (len(s), (s, tuple(x[t] for t in s))) for o in range(order + 1) for s in itertools.combinations(range(p), o)
    ]


def _brute(X, order, kind):
    """pattern → expression, and the group structure {(expression, order counts)}."""
    enumerate_ = _sequence_patterns if kind == "sequence" else _classification_patterns
    expression = defaultdict(set)
    order_of = {}
    for i, x in enumerate(np.asarray(X).tolist()):
        for o, key in enumerate_(x, order):
            expression[key].add(i)
            order_of[key] = o
    groups = defaultdict(lambda: np.zeros(order + 1, np.int64))
    for key, cases in expression.items():
        groups[frozenset(cases)][order_of[key]] += 1
    structure = {(cases, tuple(counts.tolist())) for cases, counts in groups.items()}
    return expression, structure


def _structure(grouping):
    return {
        (frozenset(grouping.cases(g).tolist()), tuple(grouping.order_counts[g].tolist()))
        for g in range(grouping.n_groups)
    }


def _brute_expressed(grouping, expression, x_test, order, kind):
    """{group: counts per order} and new counts of a test case, by enumeration."""
    enumerate_ = _sequence_patterns if kind == "sequence" else _classification_patterns
    group_of = {frozenset(grouping.cases(g).tolist()): g for g in range(grouping.n_groups)}
    touched = defaultdict(lambda: np.zeros(order + 1, np.int64))
    new = np.zeros(order + 1, np.int64)
    for o, key in enumerate_(list(x_test), order):
        cases = expression.get(key)
        if cases:
            touched[group_of[frozenset(cases)]][o] += 1
        else:
            new[o] += 1
    return {g: tuple(c.tolist()) for g, c in touched.items()}, tuple(new.tolist())


def _as_dict(expressed):
    assert np.all(np.diff(expressed.groups) > 0)
    assert np.all(expressed.counts.sum(axis=1) > 0)
    return {int(g): tuple(c.tolist()) for g, c in zip(expressed.groups, expressed.counts)}


def _check_csr(grouping):
    assert grouping.case_indptr[0] == 0
    assert grouping.case_indptr[-1] == grouping.case_indices.shape[0]
    for g in range(grouping.n_groups):
        cases = grouping.cases(g)
        assert cases.size > 0
        assert np.all(np.diff(cases) > 0)


# ---------------------------------------------------------------------------
# sequences
# ---------------------------------------------------------------------------


def test_worked_example_fig_3_4():
    """Thesis §3.4.1, Figure 3.4 (Li & Neal §3.4): histories (1,2,1), (2,1,2), (1,1,2), O = 3 → 8 patterns in 5
    superpatterns."""
    X = np.array([[1, 2, 1], [2, 1, 2], [1, 1, 2]])
    grouping = group_sequence_patterns(X, 3)
    assert isinstance(grouping, SequenceGrouping)
    assert grouping.n_groups == 5
    assert grouping.n_patterns == 8
    assert count_parameters(X, 3) == (8, 5)
    expected = {
        (frozenset({0, 1, 2}), (1, 0, 0, 0)),  # [000]
        (frozenset({0}), (0, 1, 1, 1)),  # [001], [021], [121]
        (frozenset({1, 2}), (0, 1, 1, 0)),  # [002], [012]
        (frozenset({2}), (0, 0, 0, 1)),  # [112]
        (frozenset({1}), (0, 0, 0, 1)),  # [212]
    }
    assert _structure(grouping) == expected
    # superpattern [121]_3 as codes, most recent first, lowest order 1
    g = next(g for g in range(5) if grouping.cases(g).tolist() == [0])
    codes, lowest = grouping.pattern(g)
    assert codes.tolist() == [1, 2, 1] and lowest == 1
    assert grouping.parent[0] == -1 and grouping.order_range[0].tolist() == [0, 0]


@pytest.mark.parametrize(
    "n, n_columns, n_symbols, order, seed",
    [(1, 4, 2, 4, 0), (20, 6, 2, 6, 1), (40, 8, 2, 5, 2), (30, 5, 3, 5, 3), (60, 7, 4, 7, 4), (25, 4, 2, 0, 5)],
)
def test_sequence_grouping_matches_brute_force(n, n_columns, n_symbols, order, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_symbols, size=(n, n_columns))
    if n > 4:
        X[1] = X[0]  # duplicated histories
    grouping = group_sequence_patterns(X, order)
    _check_csr(grouping)
    expression, structure = _brute(X[:, n_columns - order :], order, "sequence")
    assert _structure(grouping) == structure
    assert grouping.n_groups == len(structure)
    assert count_parameters(X, order) == (len(expression), len(structure))
    # each group is a chain of consecutive orders
    for g in range(grouping.n_groups):
        lo, hi = grouping.order_range[g]
        assert grouping.order_counts[g].tolist() == [int(lo <= o <= hi) for o in range(order + 1)]


def test_sequence_uses_last_columns():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(50, 9))
    a = group_sequence_patterns(X, 4)
    b = group_sequence_patterns(X[:, -4:], 4)
    assert _structure(a) == _structure(b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sequence_groups_expressed_by_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    order = 6
    X = rng.integers(0, 3, size=(40, 8))
    grouping = group_sequence_patterns(X, order)
    expression, _ = _brute(X[:, -order:], order, "sequence")
    tests = [rng.integers(0, 3, size=8) for _ in range(30)]
    tests += [X[i].copy() for i in range(5)]  # fully matched histories
    partial = X[5].copy()
    partial[2] = (partial[2] + 1) % 3  # matches up to order 5
    tests.append(partial)
    tests.append(np.r_[X[6, :-1], 9])  # unseen most recent symbol: only the intercept
    for x in tests:
        expressed = grouping.groups_expressed_by(x)
        touched, new = _brute_expressed(grouping, expression, x[-order:], order, "sequence")
        assert _as_dict(expressed) == touched
        assert tuple(expressed.new_counts.tolist()) == new
        assert expressed.new_orders.tolist() == [o for o in range(order + 1) if new[o]]
    assert grouping.groups_expressed_by(tests[-1]).new_orders.tolist() == list(range(1, order + 1))
    assert grouping.groups_expressed_by(X[0]).new_counts.sum() == 0


def test_sequence_arbitrary_codes():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(30, 5))
    names = np.array(["cat", "dog", "emu"])
    odd_ints = np.array([-7, 10, 3])
    reference = _structure(group_sequence_patterns(X, 5))
    strings = group_sequence_patterns(names[X], 5)
    assert _structure(strings) == reference
    assert _structure(group_sequence_patterns(odd_ints[X], 5)) == reference
    assert _structure(group_sequence_patterns(X.astype(float), 5)) == reference
    x = names[X[4]]
    assert _as_dict(strings.groups_expressed_by(x)) == _as_dict(group_sequence_patterns(X, 5).groups_expressed_by(X[4]))
    assert strings.groups_expressed_by(np.array(["cat", "dog", "emu", "yak", "cat"])).groups.size >= 1


# ---------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, p, n_values, order, seed",
    [
        (1, 3, 2, 3, 0),
        (12, 4, 2, 4, 1),
        (30, 5, 3, 3, 2),
        (30, 5, 3, 5, 3),
        (40, 6, 2, 6, 4),
        (25, 4, 4, 2, 5),
        (20, 3, 3, 0, 6),
        (50, 5, 5, 4, 7),
    ],
)
def test_classification_grouping_matches_brute_force(n, p, n_values, order, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, p))
    if n > 4:
        X[1] = X[0]
        X[2, 0] = 0  # a column with fewer values than others is fine either way
    grouping = group_classification_patterns(X, order)
    assert isinstance(grouping, ClassificationGrouping)
    _check_csr(grouping)
    expression, structure = _brute(X, order, "classification")
    assert _structure(grouping) == structure
    assert count_parameters(X, order, kind="classification") == (len(expression), len(structure))
    # the superpatterns' (3.49) counts add up to the groups' counts
    assert grouping.sp_group.max() == grouping.n_groups - 1
    assert grouping.n_superpatterns >= grouping.n_groups


def test_classification_single_value_columns_and_strings():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 3, size=(30, 4))
    X[:, 2] = 5  # constant feature
    reference = _structure(group_classification_patterns(X, 3))
    _, structure = _brute(X, 3, "classification")
    assert reference == structure
    labels = np.array(["lo", "mid", "hi", "x", "y", "z"])
    assert _structure(group_classification_patterns(labels[X], 3)) == reference


@pytest.mark.parametrize("seed, order", [(0, 3), (1, 5), (2, 2)])
def test_classification_groups_expressed_by_matches_brute_force(seed, order):
    rng = np.random.default_rng(seed)
    p = 5
    X = rng.integers(0, 3, size=(35, p))
    grouping = group_classification_patterns(X, order)
    expression, _ = _brute(X, order, "classification")
    tests = [rng.integers(0, 3, size=p) for _ in range(25)] + [X[i].copy() for i in range(5)]
    tests.append(np.r_[X[7, :-1], 8])  # an unseen value
    for x in tests:
        expressed = grouping.groups_expressed_by(x)
        touched, new = _brute_expressed(grouping, expression, x, order, "classification")
        assert _as_dict(expressed) == touched
        assert tuple(expressed.new_counts.tolist()) == new
    assert grouping.groups_expressed_by(X[0]).new_counts.sum() == 0


def test_superpattern_counts_eq_3_44():
    """(A = 1 2 3 0 4 over I = 1 0 0 1 0)_2^1 with O = 3: 1, 3, 3 patterns of orders 1, 2, 3."""
    counts = _superpattern_order_counts(np.array([1]), np.array([3]), 3, _binomial_table(5, 3))
    assert counts.tolist() == [[0, 1, 3, 3]]


def test_counts_identical_for_sequence_as_special_case():
    """Order-1 patterns are the same in both model kinds when there is one feature."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(30, 1))
    assert count_parameters(X, 1, "sequence") == count_parameters(X, 1, "classification")


def test_prior_widths():
    X = np.array([[1, 2, 1], [2, 1, 2], [1, 1, 2]])
    grouping = group_sequence_patterns(X, 3)
    sigma = np.array([5.0, 1.0, 0.5, 0.25])
    widths = grouping.prior_widths(sigma, 1)
    np.testing.assert_allclose(widths, grouping.order_counts @ sigma)
    np.testing.assert_allclose(grouping.prior_widths(np.stack([sigma, sigma]), 2)[1], grouping.order_counts @ sigma**2)
    with pytest.raises(ValueError, match="entries"):
        grouping.prior_widths(sigma[:2], 1)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("func", [group_sequence_patterns, group_classification_patterns])
def test_validation(func):
    X = np.array([[0, 1, 1], [1, 0, 1]])
    with pytest.raises(ValueError, match=">= 0"):
        func(X, -1)
    with pytest.raises(ValueError, match="exceeds"):
        func(X, 4)
    with pytest.raises(TypeError, match="integer"):
        func(X, 2.0)
    with pytest.raises(ValueError, match="NaN"):
        func(np.array([[0.0, np.nan], [1.0, 0.0]]), 1)
    with pytest.raises(ValueError, match="missing"):
        func(np.array([[0, None], [1, 0]], dtype=object), 1)
    with pytest.raises(ValueError, match="no rows"):
        func(np.empty((0, 3)), 1)
    with pytest.raises(ValueError, match="2-D"):
        func(np.array([0, 1, 1]), 1)
    with pytest.raises(TypeError, match="compared"):
        func(np.array([[0, "a"], [1, 0]], dtype=object), 2)


def test_validation_misc():
    X = np.array([[0, 1, 1], [1, 0, 1]])
    with pytest.raises(ValueError, match="kind"):
        count_parameters(X, 2, kind="tree")
    with pytest.raises(ValueError, match="at least 3"):
        group_sequence_patterns(X, 3).groups_expressed_by([0, 1])
    with pytest.raises(ValueError, match="features"):
        group_classification_patterns(X, 3).groups_expressed_by([0, 1, 1, 0])
    with pytest.raises(ValueError, match="1-D"):
        group_sequence_patterns(X, 3).groups_expressed_by(X)


@pytest.mark.parametrize(
    "p, n_values, expected",
    [
        (7, 3, [(22, 22), (211, 211), (1156, 1155), (3732, 3002), (6604, 3256), (7837, 3256), (8028, 3256)]),
        (7, 2, [(15, 15), (99, 99), (379, 379), (939, 939), (1609, 1599), (2044, 1919), (2148, 1936)]),
    ],
)
def test_classification_counts_thesis_3_5_2(p, n_values, expected):
    """Brute-force reference counts (every pattern enumerated; not the thesis's numbers) for the setting of
    thesis §3.5.2 (N = 200 uniform features, seed 0, O = 1..7); the data are drawn by
    ``np.random.default_rng(0).integers(0, K, (200, p))``."""
    X = np.random.default_rng(0).integers(0, n_values, size=(200, p))
    assert [count_parameters(X, o, kind="classification") for o in range(1, 8)] == expected
