"""Compressed logistic interaction models: sampler and estimators (thesis §3.2, §3.4–3.5; docs/interactions.md)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes._numba import jit
from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.exceptions import is_input_error
from hdbayes.interactions import CauchyPrior, group_sequence_patterns
from hdbayes.interactions.models import (
    CompressedInteractionClassifier,
    CompressedSequenceModel,
    expand_grouping,
    sigma_log_prior,
    sigma_prior,
)
from hdbayes.interactions.sampler import log_likelihood, sigma_log_prior_kernel, softplus_sum, tau_log_density
from hdbayes.interactions.stable import log_prior
from hdbayes.metrics import average_minus_log_probability


def _brute_log_likelihood(histories, order, beta, y, n_classes):
    """log L from pattern coefficients: lv[i] = Σ_o β[(o, suffix of length o)] (eq. 3.1–3.2)."""
    total = 0.0
    for i in range(histories.shape[0]):
        lv = sum(beta[(o, tuple(histories[i, :o]))] for o in range(order + 1))
        full = np.concatenate([[0.0], lv]) if n_classes == 2 else lv
        total += full[y[i]] - np.logaddexp.reduce(full)
    return total


def _patterns_of_groups(grouping):
    """{pattern key: group} with a pattern keyed (order, encoded suffix, most recent first)."""
    out = {}
    for g in range(grouping.n_groups):
        lo, hi = grouping.order_range[g]
        rep = grouping.histories[grouping.representative[g]]
        for o in range(lo, hi + 1):
            out[(o, tuple(rep[:o]))] = g
    return out


@pytest.mark.parametrize("scale", [0.1, 5.0, 50.0, 400.0, 1000.0])
def test_softplus_sum_equals_logaddexp(scale):
    """Σ log(1 + e^{shift + v}) by one renormalised product, against numpy's logaddexp."""
    rng = np.random.default_rng(3)
    shift = rng.normal(size=300) * scale
    odds = np.where(shift < 300, np.exp(np.minimum(shift, 300)), np.inf)
    for v in (-800.0, -30.0, -1.0, 0.0, 2.0, 40.0, 800.0):
        expected = np.logaddexp(0.0, shift + v).sum()
        assert softplus_sum(300, odds, shift, v) == pytest.approx(expected, rel=1e-13, abs=1e-12)


@pytest.mark.parametrize("prior", ["cauchy", "gaussian"])
@pytest.mark.parametrize("scale", [1e-9, 1.0, 1e4, 1e160])
def test_sigma_conditional_by_classes_equals_the_sum_over_groups(prior, scale):
    """The one-logarithm σ_o conditional equals Σ_g log P^s(s_g; W_g) term by term."""
    rng = np.random.default_rng(7)
    index = 1 if prior == "cauchy" else 2
    sizes = rng.integers(1, 60, size=8)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = rng.standard_cauchy(ptr[-1]) * scale
    rest = np.concatenate([[0.0], rng.random(7) * 3])
    count = rng.integers(1, 4, size=8).astype(float)
    with np.errstate(over="ignore"):  # the Cauchy case at 1e160: S_c is not used there
        sumsq = np.array([np.sum(values[a:b] ** 2) for a, b in zip(ptr[:-1], ptr[1:])])
    for tau in (-12.0, -0.7, 0.0, 2.5):
        width = np.repeat(rest + count * np.exp(index * tau), sizes)
        if prior == "gaussian" and scale > 1e100:
            continue  # s² overflows: the Gaussian density is 0 either way
        expected = sigma_log_prior_kernel(tau, 0.25, 0.3) + log_prior(values, width, prior).sum()
        got = tau_log_density(tau, 0.25, 0.3, index, 8, ptr, rest, count, sumsq, values)
        assert got == pytest.approx(expected, rel=1e-13, abs=1e-9)
    assert tau_log_density(31.0, 0.25, 0.3, index, 8, ptr, rest, count, sumsq, values) == -np.inf


@pytest.mark.parametrize("n_classes", [2, 3])
def test_likelihood_depends_only_on_group_sums(n_classes):
    rng = np.random.default_rng(1)
    order = 4
    X = rng.integers(0, 2, size=(25, 6))
    y = rng.integers(0, n_classes, size=25)
    grouping = group_sequence_patterns(X, order)
    members = _patterns_of_groups(grouping)
    assert len(members) == grouping.n_patterns
    n_params = 1 if n_classes == 2 else n_classes

    def random_beta():
        return {key: rng.standard_cauchy(n_params) for key in members}

    beta = random_beta()
    s = np.zeros((grouping.n_groups, n_params))
    for key, g in members.items():
        s[g] += beta[key]
    brute = _brute_log_likelihood(grouping.histories, order, beta, y, n_classes)
    assert log_likelihood(grouping.case_indptr, grouping.case_indices, s, y, n_classes) == pytest.approx(brute)

    # any other split of the same sums gives the same likelihood
    other = random_beta()
    sums = np.zeros_like(s)
    for key, g in members.items():
        sums[g] += other[key]
    for key, g in members.items():  # shift the lowest-order member of each group to restore the sums
        if key[0] == grouping.order_range[g, 0]:
            other[key] = other[key] + s[g] - sums[g]
    assert _brute_log_likelihood(grouping.histories, order, other, y, n_classes) == pytest.approx(brute)
    assert max(np.max(np.abs(other[key] - beta[key])) for key in members) > 0.1

    # the uncompressed parameterisation (one group per pattern) gives it too
    expanded = expand_grouping(grouping)
    beta_expanded = np.empty((expanded.n_groups, n_params))
    for j in range(expanded.n_groups):
        g = expanded.source[j]
        o = int(np.flatnonzero(expanded.order_counts[j])[0])
        beta_expanded[j] = beta[(o, tuple(grouping.histories[grouping.representative[g], :o]))]
    ll = log_likelihood(expanded.case_indptr, expanded.case_indices, beta_expanded, y, n_classes)
    assert ll == pytest.approx(brute)


def test_compressed_and_uncompressed_predictions_agree():
    """The issue's acceptance test: compression changes the cost, not the posterior (thesis §3.3.3)."""
    rng = np.random.default_rng(3)
    # binary histories where symbol 1 is always preceded by 1: [·1] and [11] share a group
    X = rng.integers(0, 2, size=(100, 3))
    X[:, 2] &= X[:, 1]
    y = (rng.random(100) < np.where(X[:, 2] == 1, 0.8, np.where(X[:, 1] == 1, 0.3, 0.5))).astype(int)
    X_train, y_train, X_test = X[:60], y[:60], X[60:]
    common = dict(order=2, prior="gaussian", n_iter=1500, burn_in=300, thin=2, n_chains=2, random_state=0)
    compressed = CompressedSequenceModel(**common).fit(X_train, y_train)
    original = CompressedSequenceModel(compress=False, **common).fit(X_train, y_train)
    assert compressed.trace_["s"].shape == (2, 600, compressed.n_compressed_, 1)
    assert original.trace_["s"].shape == (2, 600, original.n_original_, 1)
    assert compressed.n_compressed_ < compressed.n_original_
    p1 = compressed.predict_proba(X_test)
    p2 = original.predict_proba(X_test)
    np.testing.assert_allclose(p1.sum(axis=1), 1.0)
    assert np.max(np.abs(p1 - p2)) < 0.05


def test_higher_order_beats_first_order_on_hmm_data():
    d = simulate_hmm(n_samples=300, n_test=500, random_state=0)
    amlp = {}
    for order in (1, 5):
        model = CompressedSequenceModel(order=order, n_iter=300, burn_in=100, random_state=0)
        model.fit(d.X, d.y)
        amlp[order] = average_minus_log_probability(d.y_test, model.predict_proba(d.X_test))
        assert model.trace_["sigma"].shape == (1, 40, order + 1)  # post-burn-in draws only
        assert model.trace_.warmup["sigma"].shape == (1, 100, order + 1)
    assert amlp[5] < amlp[1] - 0.05


def test_reproducible_and_independent_of_n_jobs():
    d = simulate_hmm(n_samples=80, n_test=30, random_state=2)
    kw = dict(order=6, n_iter=60, burn_in=20, thin=4, n_chains=2, random_state=7)
    a = CompressedSequenceModel(n_jobs=1, **kw).fit(d.X, d.y)
    b = CompressedSequenceModel(n_jobs=2, **kw).fit(d.X, d.y)
    for group in ("posterior", "warmup"):
        for name, values in getattr(a.trace_, group).items():
            np.testing.assert_array_equal(values, getattr(b.trace_, group)[name])
    np.testing.assert_array_equal(a.predict_proba(d.X_test), b.predict_proba(d.X_test))
    np.testing.assert_array_equal(a.predict_proba(d.X_test), a.predict_proba(d.X_test))
    assert not np.array_equal(a.trace_["sigma"][0], a.trace_["sigma"][1])  # chains differ
    c = CompressedSequenceModel(n_jobs=1, **{**kw, "random_state": 8}).fit(d.X, d.y)
    assert not np.array_equal(a.trace_["s"], c.trace_["s"])


def test_trace_holds_post_burn_in_draws_and_the_warmup_apart():
    """ArviZ output: posterior = the saved draws after burn-in, warmup_posterior = σ during burn-in."""
    d = simulate_hmm(n_samples=80, n_test=5, random_state=2)
    model = CompressedSequenceModel(order=6, n_iter=60, burn_in=20, thin=4, n_chains=2, random_state=7)
    model.fit(d.X, d.y)
    idata = model.to_inference_data()
    assert idata.posterior["sigma"].shape == (2, 10, 7)
    assert idata.posterior["s"].shape == (2, 10, model.n_compressed_, 1)
    assert idata.warmup_posterior["sigma"].shape == (2, 20, 7)
    assert list(idata.posterior["sigma"].dims) == ["chain", "draw", "order"]
    np.testing.assert_array_equal(idata.posterior["sigma"].values[..., 0], 5.0)  # σ_0 is fixed
    summary = model.mcmc_summary()
    assert list(summary) == [f"log_sigma_{o}" for o in range(1, 7)]
    np.testing.assert_allclose(summary["log_sigma_2"]["mean"], np.log(model.trace_["sigma"][..., 2]).mean())
    assert np.isfinite(summary["log_sigma_1"]["r_hat"])
    assert not hasattr(model, "fit_seconds_")


def test_predict_log_proba_is_the_log_of_the_averaged_probabilities():
    """predict_log_proba, predict_proba and predict come from one joint log-likelihood; ties go
    to the first class; the log of a tiny probability survives where 1 − p would round to 0."""
    d = simulate_cauchy_classification(n_samples=100, n_test=50, n_features=4, order=2, random_state=1)
    model = CompressedInteractionClassifier(order=2, n_iter=60, burn_in=20, thin=2, random_state=0).fit(d.X, d.y)
    log_proba = model.predict_log_proba(d.X_test)
    np.testing.assert_allclose(np.exp(log_proba), model.predict_proba(d.X_test), rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_proba).sum(axis=1), 1.0, rtol=1e-12)
    jll = model.predict_joint_log_proba(d.X_test)
    np.testing.assert_array_equal(model.predict(d.X_test), model.classes_[np.argmax(jll, axis=1)])
    # the kernel averages in log space: one group, σ_0 = 5, the draws' linear predictors given
    from scipy.special import logsumexp

    from hdbayes.interactions.sampler import predict_kernel

    big = np.full((1, 1, 1), 800.0)  # one draw with linear predictor 800: p0 = e^-800 (underflows)
    tiny = predict_kernel(big, np.array([[5.0]]), np.ones((1, 1)), np.array([0, 1]), np.array([0]),
                          np.ones((1, 1)), np.zeros((1, 1)), 2, 1, np.random.default_rng(0))  # fmt: skip
    np.testing.assert_allclose(tiny, [[-800.0, 0.0]], rtol=1e-15, atol=1e-300)
    two = np.array([[[800.0]], [[-3.0]]])
    mixed = predict_kernel(two, np.array([[5.0], [5.0]]), np.ones((1, 1)), np.array([0, 1]), np.array([0]),
                           np.ones((1, 1)), np.zeros((1, 1)), 2, 1, np.random.default_rng(0))  # fmt: skip
    expected = logsumexp([[-800.0, 0.0], [-np.log1p(np.exp(-3.0)), -3.0 - np.log1p(np.exp(-3.0))]], axis=0)
    np.testing.assert_allclose(mixed[0], expected - np.log(2), rtol=1e-14)


def test_fit_and_predict_leave_numbas_global_generator_alone():
    """The chains and prediction draw from Generators passed in: numba's global stream is untouched."""
    d = simulate_hmm(n_samples=40, n_test=5, random_state=0)

    @jit(cache=False)
    def seed_and_draw(seed):
        np.random.seed(seed)
        return np.random.random()

    @jit(cache=False)
    def draw():
        return np.random.random()

    seed_and_draw(5)
    expected = draw()
    seed_and_draw(5)
    model = CompressedSequenceModel(order=3, n_iter=20, burn_in=5, random_state=0).fit(d.X, d.y)
    model.predict_proba(d.X_test)
    assert draw() == expected


def test_sigma_prior_quantiles():
    """IG(0.25, 1.25 × 0.1) quantiles tabulated in thesis §3.4.4 and the sampler's kernel."""
    p = [0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99]
    q = [0.05, 0.17, 0.34, 0.67, 1.33, 2.86, 7.13, 22.76, 115.65, 1851.83, 1.85e7]
    got = sigma_prior(1).ppf(p)
    np.testing.assert_allclose(got[:-1], q[:-1], atol=0.006)
    assert got[-1] == pytest.approx(1.85e7, rel=0.01)
    # σ_o = σ_1 / o in distribution
    np.testing.assert_allclose(sigma_prior(4).ppf(p), got / 4)
    # the sampler's log density (through its kernel on log σ) is this distribution
    x = np.array([0.01, 0.125, 1.0, 30.0, 1e5])
    for order in (1, 3):
        np.testing.assert_allclose(sigma_log_prior(x, order), sigma_prior(order).logpdf(x), rtol=1e-10)


def test_classifier_beats_class_frequencies():
    d = simulate_cauchy_classification(n_samples=200, n_test=400, n_features=4, order=2, random_state=1)
    model = CompressedInteractionClassifier(order=2, n_iter=300, burn_in=100, random_state=0)
    model.fit(d.X, d.y)
    proba = model.predict_proba(d.X_test)
    freq = np.bincount(d.y, minlength=2) / d.y.shape[0]
    baseline = average_minus_log_probability(d.y_test, np.tile(freq, (d.y_test.shape[0], 1)))
    assert average_minus_log_probability(d.y_test, proba) < baseline - 0.05
    assert model.n_compressed_ <= model.n_original_
    assert set(model.predict(d.X_test)) <= set(model.classes_)


def test_classifier_uncompressed_agrees():
    d = simulate_cauchy_classification(n_samples=15, n_test=30, n_features=4, order=2, random_state=4)
    # σ_2 mixes slowly here (few order-2 groups): the across-seed sd of a probability is ≈ 0.05 for
    # these chains, while the mean over 6 seeds of each method agreed to 0.011 ± 0.006 (no bias)
    common = dict(order=2, prior="gaussian", n_iter=4000, burn_in=500, thin=5, n_chains=4, random_state=0, n_jobs=2)
    a = CompressedInteractionClassifier(**common).fit(d.X, d.y)
    b = CompressedInteractionClassifier(compress=False, **common).fit(d.X, d.y)
    assert b.trace_["s"].shape[2] == a.n_original_ > a.n_compressed_
    assert np.max(np.abs(a.predict_proba(d.X_test) - b.predict_proba(d.X_test))) < 0.08


def test_three_classes_and_labels():
    rng = np.random.default_rng(0)
    X = rng.choice(["a", "b", "c"], size=(90, 5))
    y = np.where(X[:, -1] == "a", "x", np.where(X[:, -1] == "b", "y", "z"))
    model = CompressedSequenceModel(order=3, prior="gaussian", n_iter=200, burn_in=50, random_state=0).fit(X, y)
    assert model.trace_["s"].shape[3] == 3
    proba = model.predict_proba(X[:20])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.predict(X[:20]) == y[:20]) > 0.9


@pytest.mark.parametrize(
    ("kwargs", "X", "y", "error", "match"),
    [
        ({"order": 0}, [[0, 1], [1, 0]], [0, 1], ValueError, "'order' parameter"),
        ({"order": 3}, [[0, 1], [1, 0]], [0, 1], ValueError, "exceeds"),
        ({"order": 1}, [[0, np.nan], [1, 0]], [0, 1], ValueError, "NaN"),
        ({"order": 1}, [[0, 1], [1, 0]], [1, 1], ValueError, "single class"),
        ({"order": 1}, [[0, 1], [1, 0]], [0, 1, 1], ValueError, "inconsistent numbers of samples"),
        ({"order": 1, "prior": "laplace"}, [[0, 1], [1, 0]], [0, 1], ValueError, "'prior' parameter"),
        ({"order": 1, "n_iter": 10, "burn_in": 10}, [[0, 1], [1, 0]], [0, 1], ValueError, "leave no draws"),
        ({"order": 1.5}, [[0, 1], [1, 0]], [0, 1], ValueError, "'order' parameter"),
        ({"order": 1, "compress": "yes"}, [[0, 1], [1, 0]], [0, 1], ValueError, "'compress' parameter"),
        ({"order": 1, "progress": 2}, [[0, 1], [1, 0]], [0, 1], ValueError, "'progress' parameter"),
        ({"order": 1, "prior": CauchyPrior(sigma_width=0.0)}, [[0, 1], [1, 0]], [0, 1], ValueError,
         "'sigma_width' parameter"),
        ({"order": 1}, [0, 1], [0, 1], ValueError, "Expected 2D array"),
    ],
)
def test_bad_input(kwargs, X, y, error, match):
    for cls in (CompressedSequenceModel, CompressedInteractionClassifier):
        with pytest.raises(error, match=match) as caught:
            cls(**kwargs).fit(np.asarray(X), y)
        assert is_input_error(caught.value)


def test_predict_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        CompressedSequenceModel(order=1).predict_proba([[0, 1]])


def _not_applicable(estimator):
    return {
        "check_dtype_object": "the models take arbitrary hashable codes (strings included), so an object "
        "array of codes is valid input; only codes that cannot be compared are rejected",
    }


@parametrize_with_checks(
    [
        CompressedInteractionClassifier(order=1, n_iter=20, burn_in=5, thin=1, random_state=0),
        CompressedSequenceModel(order=1, n_iter=20, burn_in=5, thin=1, random_state=0),
    ],
    expected_failed_checks=_not_applicable,
)
def test_sklearn_compatible(estimator, check):
    """scikit-learn's checks (continuous test data are treated as codes, hence the poor_score tag)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [CompressedInteractionClassifier(), CompressedSequenceModel()], expected_failed_checks=_not_applicable
)
def test_sklearn_compatible_as_shipped(estimator, check):
    """The same checks with the shipped defaults (2000 iterations: about 25 s per estimator on 2 cores)."""
    check(estimator)


def test_default_orders():
    """The sequence model uses the whole history; the classifier main effects and pairs (order 2)."""
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, size=(30, 5)), np.repeat([0, 1], 15)
    sequence = CompressedSequenceModel(n_iter=6, burn_in=2, thin=2, random_state=0).fit(X, y)
    classifier = CompressedInteractionClassifier(n_iter=6, burn_in=2, thin=2, random_state=0).fit(X, y)
    assert sequence.grouping_.order == 5
    assert classifier.grouping_.order == 2
    with pytest.raises(ValueError, match="n_features=1"):
        CompressedInteractionClassifier(n_iter=6, burn_in=2, thin=2).fit(X[:, :1], y)


def test_many_features_do_not_overflow_the_binomial_table():
    """C(a, b) beyond int64 for a ≥ 67 once broke the classifier; only b ≤ O is needed."""
    rng = np.random.default_rng(1)
    X, y = rng.integers(0, 2, size=(20, 90)), np.repeat([0, 1], 10)
    model = CompressedInteractionClassifier(order=2, n_iter=6, burn_in=2, thin=2, random_state=0).fit(X, y)
    assert model.n_original_ > 0
    proba = model.predict_proba(X[:3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # counts that int64 cannot hold are refused before any grouping work, naming the order
    with pytest.raises(ValueError, match="order 7 with 10000 features"):
        CompressedInteractionClassifier(order=7).fit(rng.integers(0, 2, size=(4, 10000)), [0, 1, 0, 1])
