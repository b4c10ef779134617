"""Tests for hdbayes.datasets.sequences: HMM, English text and Cauchy classification data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from hdbayes.datasets import (
    data_path,
    encode_english_text,
    load_english_text,
    simulate_cauchy_classification,
    simulate_hmm,
)
from hdbayes.datasets.sequences import DEFAULT_HMM_PERMUTATION, _gutenberg_body

# ------------------------------------------------------------------------------------------------
# HMM (thesis §3.4.3; Li & Neal §3.6)
# ------------------------------------------------------------------------------------------------


def test_hmm_shapes_defaults():
    hmm = simulate_hmm(random_state=0)
    assert hmm.X.shape == (500, 20) and hmm.X_test.shape == (5000, 20)
    assert hmm.y.shape == (500,) and hmm.y_test.shape == (5000,)
    assert hmm.X.dtype == np.int8 and hmm.y.dtype == np.int64
    assert hmm.hidden.shape == (500, 21) and hmm.hidden_test.shape == (5000, 21)
    assert set(np.unique(hmm.X_test)) == {0, 1} and set(np.unique(hmm.y_test)) == {0, 1}
    assert hmm.transition.shape == (8, 8) and hmm.emission.shape == (8, 2)
    np.testing.assert_allclose(hmm.transition.sum(axis=1), 1.0)
    np.testing.assert_allclose(hmm.emission.sum(axis=1), 1.0)
    np.testing.assert_array_equal(hmm.permutation, DEFAULT_HMM_PERMUTATION)
    rows = np.arange(8)
    np.testing.assert_allclose(hmm.transition[rows, hmm.permutation], 0.95)
    off = hmm.transition.copy()
    off[rows, hmm.permutation] = 0.0
    assert (off.sum(axis=1) > 0).all() and ((off > 0).sum(axis=1) == 7).all()
    # papers' even states (0-based odd) emit the papers' symbol 1 (code 0) w.p. 0.95
    np.testing.assert_allclose(hmm.emission[1::2, 0], 0.95)
    np.testing.assert_allclose(hmm.emission[0::2, 1], 0.95)


def test_hmm_default_permutation_matches_text():
    # 1-based facts stated in thesis §3.4.3: 2 -> 3 -> 8, and 2 -> 3 is the only even -> odd arrow
    perm1 = np.asarray(DEFAULT_HMM_PERMUTATION) + 1
    assert perm1[2 - 1] == 3 and perm1[3 - 1] == 8
    even_to_odd = [(s, perm1[s - 1]) for s in range(1, 9) if s % 2 == 0 and perm1[s - 1] % 2 == 1]
    odd_to_even = [(s, perm1[s - 1]) for s in range(1, 9) if s % 2 == 1 and perm1[s - 1] % 2 == 0]
    assert even_to_odd == [(2, 3)] and odd_to_even == [(3, 8)]


def test_hmm_frequencies_on_long_run():
    hmm = simulate_hmm(n_samples=400, n_test=1, length=500, random_state=3)
    h = hmm.hidden.astype(np.int64)
    x = np.column_stack([hmm.X, hmm.y])
    # transitions: empirical matrix from all consecutive pairs
    counts = np.zeros((8, 8))
    np.add.at(counts, (h[:, :-1].ravel(), h[:, 1:].ravel()), 1)
    empirical = counts / counts.sum(axis=1, keepdims=True)
    rows = np.arange(8)
    np.testing.assert_allclose(empirical[rows, hmm.permutation], 0.95, atol=0.01)
    np.testing.assert_allclose(empirical, hmm.transition, atol=0.01)
    # emissions
    for state in range(8):
        freq0 = (x[h == state] == 0).mean()
        assert abs(freq0 - hmm.emission[state, 0]) < 0.01
    # initial state uniform
    first = np.bincount(simulate_hmm(n_samples=8000, n_test=1, length=2, random_state=4).hidden[:, 0], minlength=8)
    assert np.all(np.abs(first / 8000 - 1 / 8) < 0.02)


def test_hmm_layout_last_column_most_recent():
    hmm = simulate_hmm(n_samples=30, n_test=10, length=6, random_state=5)
    assert hmm.X.shape == (30, 5)
    # the full observed sequence is the history followed by the target, in time order; the last
    # hidden state is the one emitting y, and with p_emission = 1 the symbols follow the states
    det = simulate_hmm(n_samples=200, n_test=50, length=6, random_state=5, p_emission=1.0)
    for X, y, H in ((det.X, det.y, det.hidden), (det.X_test, det.y_test, det.hidden_test)):
        seq = np.column_stack([X, y])
        np.testing.assert_array_equal(seq, (H % 2 == 0).astype(np.int8))
    # with a deterministic chain, x_{t+1} is a function of h_t: the target follows from the last column's state
    chain = simulate_hmm(n_samples=100, n_test=5, length=4, random_state=6, p_transition=1.0, p_emission=1.0)
    H = chain.hidden
    np.testing.assert_array_equal(H[:, 1:], chain.permutation[H[:, :-1]])
    np.testing.assert_array_equal(chain.y, (chain.permutation[H[:, -2]] % 2 == 0).astype(np.int64))


def test_hmm_reproducible_and_params_independent_of_sizes():
    a = simulate_hmm(n_samples=20, n_test=30, random_state=11)
    b = simulate_hmm(n_samples=20, n_test=30, random_state=11)
    c = simulate_hmm(n_samples=50, n_test=5, random_state=11)
    d = simulate_hmm(n_samples=20, n_test=30, random_state=12)
    for key in ("X", "y", "X_test", "y_test", "hidden", "transition"):
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(a.transition, c.transition)
    assert not np.array_equal(a.transition, d.transition)
    assert not np.array_equal(a.X_test, d.X_test)
    gen = np.random.default_rng(0)
    assert not np.array_equal(simulate_hmm(random_state=gen).X, simulate_hmm(random_state=gen).X)


def test_hmm_permutation_options():
    r = simulate_hmm(n_samples=5, n_test=5, random_state=1, permutation="random")
    assert sorted(r.permutation.tolist()) == list(range(8))
    np.testing.assert_allclose(r.transition[np.arange(8), r.permutation], 0.95)
    perm = [1, 2, 3, 0]
    e = simulate_hmm(n_samples=5, n_test=5, random_state=1, n_hidden=4, permutation=perm)
    np.testing.assert_array_equal(e.permutation, perm)
    assert simulate_hmm(n_samples=5, n_test=5, random_state=1, n_hidden=5).transition.shape == (5, 5)


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"n_samples": 0}, ValueError),
        ({"n_test": 2.5}, TypeError),
        ({"length": 1}, ValueError),
        ({"p_transition": 1.5}, ValueError),
        ({"p_emission": -0.1}, ValueError),
        ({"permutation": [0, 1, 2]}, ValueError),
        ({"permutation": [0, 0, 1, 2, 3, 4, 5, 6]}, ValueError),
        ({"permutation": "identity"}, ValueError),
        ({"random_state": "seed"}, TypeError),
    ],
)
def test_hmm_validation(kwargs, exc):
    with pytest.raises(exc):
        simulate_hmm(**kwargs)


# ------------------------------------------------------------------------------------------------
# English text (thesis §3.4.5; Li & Neal §3.7)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("aeiou", [0] * 5),
        ("AEIOU", [0] * 5),
        ("by", [1, 1]),  # y is a consonant
        ("Yes", [1, 0, 1]),
        ("a b", [0, 2, 1]),
        ("a  ,\n\t b", [0, 2, 1]),  # runs of "other" collapse to one symbol
        ("  hi!  ", [2, 1, 0, 2]),  # leading/trailing others kept, collapsed
        ("x1y", [1, 2, 1]),  # digits are "other"
        ("café", [1, 0, 1, 2]),  # non-ASCII letters are "other"
        ("Statistics.", [1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 2]),
    ],
)
def test_encode_english_text(text, expected):
    codes = encode_english_text(text)
    assert codes.dtype == np.int8
    assert codes.tolist() == expected


def test_encode_english_text_without_collapse_and_validation():
    assert encode_english_text("a ,b", collapse_other=False).tolist() == [0, 2, 2, 1]
    assert encode_english_text("\u0130x").tolist() == [2, 1]  # one symbol per code point
    with pytest.raises(TypeError):
        encode_english_text(b"abc")


def test_gutenberg_body():
    text = "Title\n*** START OF THE BOOK ***\n\n  Hello world.\n\n*** END OF THE BOOK ***\nLicence text\n"
    assert _gutenberg_body(text) == "Hello world."
    with pytest.raises(ValueError, match="START OF"):
        _gutenberg_body("no markers here")


@pytest.fixture(scope="module")
def alice_path():
    try:
        return data_path("alice-gutenberg-11.txt", download=False)
    except OSError as exc:
        pytest.skip(f"alice-gutenberg-11.txt not available: {exc}")


def test_load_english_text_defaults(alice_path):
    d = load_english_text(download=False)
    assert d.X.shape == (1000, 20) and d.X_test.shape == (2910, 20)
    assert d.y.shape == (1000,) and d.y_test.shape == (2910,)
    assert d.X.dtype == np.int8 and d.y.dtype == np.int64
    assert d.sequence.shape == (3930,) and d.start == 0
    assert d.symbol_names == ("vowel", "consonant", "other")
    assert set(np.unique(d.sequence)) == {0, 1, 2}
    # no two consecutive "other" symbols
    assert not np.any((d.sequence[1:] == 2) & (d.sequence[:-1] == 2))
    # the body starts after the Gutenberg header: "ALICE'S ADVENTURES IN WONDERLAND"
    np.testing.assert_array_equal(d.sequence[:12], encode_english_text("ALICE'S ADVE"))
    assert d.n_symbols > 100_000


def test_load_english_text_layout(alice_path):
    d = load_english_text(order=7, n_samples=50, n_test=30, download=False)
    X = np.vstack([d.X, d.X_test])
    y = np.concatenate([d.y, d.y_test])
    # consecutive overlapping windows: each history shifted by one, with the target appended,
    # is the next history; so the last column is the most recent symbol
    np.testing.assert_array_equal(X[1:, :-1], X[:-1, 1:])
    np.testing.assert_array_equal(X[1:, -1], y[:-1])
    for i in (0, 17, 79):
        np.testing.assert_array_equal(d.sequence[i : i + 8], np.append(X[i], y[i]))


def test_load_english_text_start_and_n_test(alice_path):
    full = load_english_text(order=3, n_samples=10, n_test=None, download=False)
    assert full.X_test.shape[0] == full.n_symbols - 3 - 10
    off = load_english_text(order=3, n_samples=10, n_test=5, start=100, download=False)
    np.testing.assert_array_equal(np.vstack([off.X, off.X_test]), np.vstack([full.X, full.X_test])[100:115])
    r1 = load_english_text(order=3, n_samples=10, n_test=5, start="random", random_state=0, download=False)
    r2 = load_english_text(order=3, n_samples=10, n_test=5, start="random", random_state=0, download=False)
    assert r1.start == r2.start
    np.testing.assert_array_equal(r1.X_test, r2.X_test)
    with pytest.raises(ValueError):
        load_english_text(n_samples=full.n_symbols, download=False)
    with pytest.raises(ValueError):
        load_english_text(start=full.n_symbols, download=False)
    with pytest.raises(ValueError):
        load_english_text(start="end", download=False)
    with pytest.raises(ValueError):
        load_english_text(order=0, download=False)


# ------------------------------------------------------------------------------------------------
# Cauchy classification (thesis §3.5.3)
# ------------------------------------------------------------------------------------------------


def test_cauchy_classification_shapes_and_model():
    sim = simulate_cauchy_classification(random_state=0)
    assert sim.X.shape == (500, 7) and sim.X_test.shape == (5000, 7)
    assert sim.y.shape == (500,) and sim.y_test.shape == (5000,)
    assert sim.X.dtype == np.int8 and sim.y.dtype == np.int64
    assert set(np.unique(sim.X_test)) == {0, 1, 2} and set(np.unique(sim.y_test)) == {0, 1}
    # all coefficients of orders 1..4: sum_o C(7, o) 3^o = 3990 (3991 with the intercept), 98 used per case
    assert sum(c.size for c in sim.coefficients.values()) == 3990
    assert len(sim.coefficients) == sum(math.comb(7, o) for o in range(1, 5)) == 98
    np.testing.assert_allclose(sim.sigmas, [0.0, 1.0, 0.5, 1 / 3, 0.25])
    assert sim.intercept == 0.0
    # the probabilities follow the stated linear function (check a few cases by hand)
    for i in range(5):
        x = sim.X_test[i]
        logit = sum(c[tuple(x[list(pos)])] for pos, c in sim.coefficients.items())
        assert sim.proba_test[i] == pytest.approx(expit(logit), rel=1e-12, abs=1e-15)
    # features uniform on the values
    freq = np.bincount(sim.X_test.ravel(), minlength=3) / sim.X_test.size
    np.testing.assert_allclose(freq, 1 / 3, atol=0.01)


def test_cauchy_classification_balance_and_labels():
    means = []
    for seed in range(8):
        sim = simulate_cauchy_classification(n_samples=200, n_test=2000, random_state=seed)
        # labels agree with the true probabilities
        assert abs(sim.y_test.mean() - sim.proba_test.mean()) < 0.04
        means.append(sim.y_test.mean())
    # intercept 0 and symmetric coefficients: classes balanced on average over models
    assert 0.35 < np.mean(means) < 0.65
    assert all(0.05 < m < 0.95 for m in means)


def test_cauchy_classification_scale_of_coefficients():
    sim = simulate_cauchy_classification(n_features=6, n_values=2, order=3, random_state=2)
    for pos, c in sim.coefficients.items():
        assert c.shape == (2,) * len(pos)
    # median |beta| of Cauchy(0, s) is s
    for o in (1, 2, 3):
        vals = np.concatenate([c.ravel() for pos, c in sim.coefficients.items() if len(pos) == o])
        if vals.size > 100:
            assert np.median(np.abs(vals)) == pytest.approx(1 / o, rel=0.35)


def test_cauchy_classification_reproducible():
    a = simulate_cauchy_classification(n_samples=20, n_test=10, random_state=5)
    b = simulate_cauchy_classification(n_samples=20, n_test=10, random_state=5)
    c = simulate_cauchy_classification(n_samples=40, n_test=3, random_state=5)
    for key in ("X", "y", "X_test", "y_test", "proba_test"):
        np.testing.assert_array_equal(a[key], b[key])
    for pos in a.coefficients:
        np.testing.assert_array_equal(a.coefficients[pos], c.coefficients[pos])
    d = simulate_cauchy_classification(n_samples=20, n_test=10, random_state=6)
    assert not np.array_equal(a.coefficients[(0,)], d.coefficients[(0,)])


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"n_samples": 0}, ValueError),
        ({"n_features": 3, "order": 4}, ValueError),
        ({"order": 0}, ValueError),
        ({"n_values": 1}, ValueError),
        ({"n_values": True}, TypeError),
        ({"n_features": 40, "n_values": 10, "order": 6}, ValueError),  # too many coefficients
    ],
)
def test_cauchy_classification_validation(kwargs, exc):
    with pytest.raises(exc):
        simulate_cauchy_classification(**kwargs)
