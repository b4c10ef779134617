"""Prediction structure of the compressed models, built for all test cases at once (issue 12).

The oracle below is the per-case implementation that preceded the compiled one (one
``groups_expressed_by`` call per test case, and with ``compress=False`` a unit vector per
pattern); the compiled structure must equal it exactly, and so must ``predict_proba``.
"""

from __future__ import annotations

import numpy as np
import pytest

from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.interactions._grouping import _encode_test_codes
from hdbayes.interactions.classification_patterns import _binomial_table, _superpattern_order_counts
from hdbayes.interactions.models import CompressedInteractionClassifier, CompressedSequenceModel, expand_grouping
from hdbayes.interactions.patterns import SequenceGrouping, group_classification_patterns, group_sequence_patterns
from hdbayes.interactions.sampler import chain_arguments, predict_kernel
from hdbayes.mcmc import Schedule


def _oracle_sequence_case(grouping, x):
    """The per-case trie walk that preceded the compiled one: (groups, counts, new counts)."""
    order = grouping.order
    r = _encode_test_codes(x[x.shape[0] - order :][::-1], grouping.symbols)
    groups, counts = [], []
    new_counts = np.zeros(order + 1, np.int64)
    g = 0
    while True:
        lo, hi = grouping.order_range[g]
        rep = grouping.histories[grouping.representative[g]]
        matched = lo
        while matched < hi and r[matched] == rep[matched]:
            matched += 1
        row = np.zeros(order + 1, np.int64)
        row[lo : matched + 1] = 1
        groups.append(g)
        counts.append(row)
        if matched < hi or hi == order:
            new_counts[matched + 1 :] = 1
            break
        c0, nc = grouping.first_child[g], grouping.n_children[g]
        keys = grouping.histories[grouping.representative[c0 : c0 + nc], hi]
        j = int(np.searchsorted(keys, r[hi]))
        if j == nc or keys[j] != r[hi]:
            new_counts[hi + 1 :] = 1
            break
        g = int(c0 + j)
    return np.asarray(groups, np.int64), np.asarray(counts, np.int64).reshape(-1, order + 1), new_counts


def _oracle_classification_case(grouping, x):
    """The per-case numpy version that preceded the compiled one: (groups, counts, new counts)."""
    codes = np.array([_encode_test_codes(x[t : t + 1], cat)[0] for t, cat in enumerate(grouping.categories)])
    equal = grouping.sp_values == codes[None, :]
    fixed_present = ~grouping.sp_unfixed & (grouping.sp_values >= 0)
    matches = np.all(equal | ~fixed_present, axis=1)
    n_kept = np.sum(grouping.sp_unfixed & equal, axis=1)
    binom = _binomial_table(grouping.n_features, grouping.order)
    per_sp = _superpattern_order_counts(grouping.sp_order[matches], n_kept[matches], grouping.order, binom)
    totals = np.zeros((grouping.n_groups, grouping.order + 1), np.int64)
    np.add.at(totals, grouping.sp_group[matches], per_sp)
    touched = np.flatnonzero(totals.any(axis=1))
    new_counts = binom[grouping.n_features, : grouping.order + 1] - totals.sum(axis=0)
    return touched.astype(np.int64), totals[touched], new_counts.astype(np.int64)


def _oracle_case(grouping, x):
    if isinstance(grouping, SequenceGrouping):
        return _oracle_sequence_case(grouping, np.asarray(x))
    return _oracle_classification_case(grouping, np.asarray(x))


def _oracle_translate(expanded, groups, counts):
    """The per-pattern translation of compressed groups to expanded ones (the old implementation)."""
    out_groups, out_counts = [], []
    n_orders = expanded.order_counts.shape[1]
    for g, row in zip(groups, counts):
        for o in np.flatnonzero(row):
            first = expanded.start[g, o]
            for c in range(int(row[o])):
                out_groups.append(first + c)
                unit = np.zeros(n_orders, np.int64)
                unit[o] = 1
                out_counts.append(unit)
    return np.asarray(out_groups, np.int64), np.asarray(out_counts, np.int64).reshape(-1, n_orders)


def _oracle_structure(grouping, expanded, X):
    """The old ``_test_structure``: a Python loop over the test cases."""
    T = X.shape[0]
    ptr = [0]
    groups, counts = [], []
    new = np.zeros((T, grouping.order + 1), np.int64)
    for t in range(T):
        g, c, new[t] = _oracle_case(grouping, X[t])
        if expanded is not None:
            g, c = _oracle_translate(expanded, g, c)
        groups.append(g)
        counts.append(c)
        ptr.append(ptr[-1] + g.shape[0])
    n_orders = grouping.order + 1
    return (
        np.asarray(ptr, np.int64),
        np.concatenate(groups).astype(np.int64) if groups else np.empty(0, np.int64),
        np.concatenate(counts).astype(np.float64) if counts else np.empty((0, n_orders)),
        new.astype(np.float64),
    )


def _oracle_log_proba(model, X):
    """The prediction kernel on the oracle's structure, with the model's saved draws and seed."""
    ptr, groups, counts, new = _oracle_structure(model.grouping_, model.expanded_, np.asarray(X))
    return predict_kernel(
        np.ascontiguousarray(model.trace_.flat("s")), np.ascontiguousarray(model.trace_.flat("sigma")),
        model._order_counts, ptr, groups, counts, new, model.classes_.shape[0], model.index_,
        np.random.default_rng(model._predict_seed),
    )  # fmt: skip


def _assert_same_structure(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("prior", ["cauchy", "gaussian"])
def test_sequence_prediction_equals_the_per_case_oracle(prior, compress):
    d = simulate_hmm(n_samples=120, n_test=150, random_state=3)
    model = CompressedSequenceModel(
        order=12, prior=prior, compress=compress, n_iter=30, burn_in=10, thin=5, random_state=1
    ).fit(d.X, d.y)
    X = np.asarray(d.X_test).copy()
    X[:5, -1] = 7  # a symbol never seen in training: matches nothing beyond the intercept
    X[5:10] = np.asarray(d.X)[:5]  # training histories: no new pattern
    _assert_same_structure(model._test_structure(X), _oracle_structure(model.grouping_, model.expanded_, X))
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), _oracle_log_proba(model, X))


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("prior", ["cauchy", "gaussian"])
def test_classification_prediction_equals_the_per_case_oracle(prior, compress):
    d = simulate_cauchy_classification(n_samples=80, n_test=120, n_features=5, order=3, random_state=2)
    model = CompressedInteractionClassifier(
        order=3, prior=prior, compress=compress, n_iter=30, burn_in=10, thin=5, random_state=1
    ).fit(d.X, d.y)
    X = np.asarray(d.X_test).copy()
    X[:4, 0] = 9  # an unseen code
    X[4:8] = np.asarray(d.X)[:4]
    _assert_same_structure(model._test_structure(X), _oracle_structure(model.grouping_, model.expanded_, X))
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), _oracle_log_proba(model, X))


@pytest.mark.parametrize("seed", range(3))
def test_batch_structure_with_string_codes_and_many_classes(seed):
    """String codes, three classes, a longer history than the order, and a classifier of order p."""
    rng = np.random.default_rng(seed)
    X = rng.choice(["a", "b", "c"], size=(40, 6))
    y = rng.choice(["x", "y", "z"], size=40)
    tests = rng.choice(["a", "b", "c", "d"], size=(25, 6))
    for model in (
        CompressedSequenceModel(order=4, compress=False, n_iter=8, burn_in=2, thin=2, random_state=0),
        CompressedInteractionClassifier(order=6, n_iter=8, burn_in=2, thin=2, random_state=0),
    ):
        model.fit(X, y)
        _assert_same_structure(model._test_structure(tests), _oracle_structure(model.grouping_, model.expanded_, tests))
        np.testing.assert_array_equal(model.predict_joint_log_proba(tests), _oracle_log_proba(model, tests))


def test_groupings_expressed_by_all_equals_per_case():
    """``expressed_by_all`` of both groupings against the old per-case code and ``groups_expressed_by``."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(60, 5))
    tests = rng.integers(0, 4, size=(30, 5))
    for grouping in (group_sequence_patterns(X, 4), group_classification_patterns(X, 3)):
        ptr, groups, counts, new = grouping.expressed_by_all(tests)
        assert ptr.shape == (31,) and new.shape == (30, grouping.order + 1)
        for t in range(30):
            one = grouping.groups_expressed_by(tests[t])
            oracle = _oracle_case(grouping, tests[t])
            for got in ((groups[ptr[t] : ptr[t + 1]], counts[ptr[t] : ptr[t + 1]], new[t]), tuple(one)):
                for a, b in zip(got, oracle):
                    assert a.dtype == b.dtype
                    np.testing.assert_array_equal(a, b)
        empty = grouping.expressed_by_all(tests[:0])
        assert empty[0].tolist() == [0] and empty[1].size == 0 and empty[3].shape == (0, grouping.order + 1)


def test_expanded_translation_equals_the_per_pattern_oracle():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 2, size=(50, 5))
    grouping = group_classification_patterns(X, 3)
    expanded = expand_grouping(grouping)
    ptr, groups, counts, _ = grouping.expressed_by_all(rng.integers(0, 2, size=(20, 5)))
    new_ptr, new_groups, new_counts = expanded.translate_all(ptr, groups, counts)
    for t in range(20):
        g, c = _oracle_translate(expanded, groups[ptr[t] : ptr[t + 1]], counts[ptr[t] : ptr[t + 1]])
        np.testing.assert_array_equal(new_groups[new_ptr[t] : new_ptr[t + 1]], g)
        np.testing.assert_array_equal(new_counts[new_ptr[t] : new_ptr[t + 1]], c)
    assert new_ptr[-1] == counts.sum()


def test_chain_arguments_build_the_sampler_input():
    """Width classes group equal order counts; order lists hold the groups of each order, by class."""
    rng = np.random.default_rng(0)
    grouping = group_sequence_patterns(rng.integers(0, 2, size=(30, 4)), 4)
    y = rng.integers(0, 2, size=30)
    args = chain_arguments(
        grouping, y, 2, index=1, sigma0=5.0, alpha_o=0.25, w_o_scale=0.1, schedule=Schedule(10, 2, 3),
        coef_width=20.0, sigma_width=1.0, max_steps=50, n_sigma_updates=10,
    )  # fmt: skip
    indptr, indices, order_counts, codes, _, _, _, alpha, w_o, order_ptr, order_groups, width_class = args[:12]
    np.testing.assert_array_equal(order_counts, grouping.order_counts)
    assert order_counts.dtype == np.float64 and codes.dtype == np.int64
    np.testing.assert_allclose(w_o, [1.0, 0.1, 0.05, 0.1 / 3, 0.025])
    for g in range(grouping.n_groups):
        for h in range(grouping.n_groups):
            same = np.array_equal(grouping.order_counts[g], grouping.order_counts[h])
            assert (width_class[g] == width_class[h]) == same
    for o in range(5):
        members = order_groups[order_ptr[o] : order_ptr[o + 1]]
        assert sorted(members) == np.flatnonzero(grouping.order_counts[:, o]).tolist()
        assert np.all(np.diff(width_class[members]) >= 0)
    # the schedule: iterations 5 and 8 (1-based) are saved, the first two are burn-in
    slots, n_saved, burn_in = args[12:15]
    assert slots.tolist() == [-1, -1, -1, -1, 0, -1, -1, 1, -1, -1] and n_saved == 2 and burn_in == 2
    assert len(args) == 19


def test_expressed_by_all_rejects_bad_test_data():
    X = np.random.default_rng(0).integers(0, 2, size=(10, 4))
    for grouping in (group_sequence_patterns(X, 3), group_classification_patterns(X, 2)):
        with pytest.raises(ValueError, match="2-D"):
            grouping.expressed_by_all(X[0])
        with pytest.raises(ValueError, match="X_test has 2 columns"):
            grouping.expressed_by_all(X[:, :2])
        with pytest.raises(ValueError, match="NaN"):
            grouping.expressed_by_all(np.where(X == 1, np.nan, 0.0))
    with pytest.raises(ValueError, match="X_test has 5 features"):
        group_classification_patterns(X, 2).expressed_by_all(np.zeros((2, 5)))
