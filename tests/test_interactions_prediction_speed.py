"""The prediction kernel of the compressed models after issue 28: the same numbers as the old, slow path.

``predict_kernel`` now finds the distinct (group, counts) rows of the test cases once, prepares each row's
split per saved sample once, and only solves for each case's own draw; the Cauchy quantile is found by
Halley's method instead of the Illinois method. The references below are the per-case, per-entry loop that
preceded it, in Python, drawing from the same generator in the same order:

* with the current quantile (``split_cauchy_quantile``) it must give the kernel's numbers to rounding, and leave
  the generator in the same state (every draw consumed, in the same order);
* with the old Illinois quantile (copied below) the numbers differ only by that method's own error: it stopped
  at |F − u| < 1e-12, which in a Cauchy tail leaves x wrong by up to ~1e-7 of its scale: on the small models
  here the log probabilities agree to 1e-10 (measured ≤ 6.5e-11); on the 500-case, order-5 benchmark model
  (250 samples, 2000 test cases) they differ by up to 9e-10 (2e-10 in probabilities); the new quantile is
  exact to the rounding of F. Gaussian models and ``compress=False`` (no Cauchy quantile) give the old
  kernel's numbers bit for bit (the Python reference's log-sum-exp rounds differently: 1e-12 here).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.interactions import stable as st
from hdbayes.interactions.models import CompressedInteractionClassifier, CompressedSequenceModel
from hdbayes.interactions.sampler import predict_kernel


def _illinois_quantile(s, sigma1, sigma2, u):
    """The Illinois inversion of (3.30) used before issue 28 (``split_cauchy_quantile`` of 2026-11-22)."""
    c, ss, a, b, delta, degenerate = st._split_cauchy_setup(s, sigma1, sigma2)
    half_pi = 0.5 * math.pi

    def solve(degenerate, centre, width, lo, hi, g_lo, g_hi):
        phi, last, bisect = 0.5 * (lo + hi), 0, False
        for _ in range(st.MAX_ITER):
            if bisect:
                phi = 0.5 * (lo + hi)
            else:
                phi = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
                if not (lo < phi < hi):
                    phi = 0.5 * (lo + hi)
            tan_phi = math.tan(phi)
            x = centre + width * tan_phi
            g = (st._cdf_t3(phi) if degenerate else st._cdf_general(x, ss, a, b, delta)) - u
            if abs(g) < st.CDF_TOL or (hi - lo) * width * (1.0 + tan_phi * tan_phi) <= 4.5e-16 * abs(x):
                break
            old = hi - lo
            if g > 0.0:
                hi, g_hi = phi, g
                if last == 1:
                    g_lo *= 0.5
                last = 1
            else:
                lo, g_lo = phi, g
                if last == -1:
                    g_hi *= 0.5
                last = -1
            bisect = (not bisect) and hi - lo > 0.5 * old
        return phi

    if degenerate:
        centre, width = 0.5 * ss, 0.5 * (a + b)
        return c * (centre + width * math.tan(solve(True, centre, width, -half_pi, half_pi, -u, 1.0 - u)))
    if abs(ss) <= max(a, b):
        centre, width = (0.0, a) if a <= b else (ss, b)
        lo, hi, g_lo, g_hi = -half_pi, half_pi, -u, 1.0 - u
    else:
        m = 0.5 * ss
        f_m = st._cdf_general(m, ss, a, b, delta)
        left_centre, left_width, right_centre, right_width = (0.0, a, ss, b) if ss > 0 else (ss, b, 0.0, a)
        if u <= f_m:
            centre, width = left_centre, left_width
            lo, hi, g_lo, g_hi = -half_pi, math.atan((m - centre) / width), -u, f_m - u
        else:
            centre, width = right_centre, right_width
            lo, hi, g_lo, g_hi = math.atan((m - centre) / width), half_pi, f_m - u, 1.0 - u
    return c * (centre + width * math.tan(solve(False, centre, width, lo, hi, g_lo, g_hi)))


def _reference_log_proba(s_saved, sigma_saved, order_counts, ptr, groups, counts, new, n_classes, index, rng,
                         quantile=st.split_cauchy_quantile):  # fmt: skip
    """The old kernel's loop in Python: every sample, case and touched group, widths computed per entry."""
    n_samples, _, n_params = s_saved.shape
    n_orders = order_counts.shape[1]
    T = ptr.shape[0] - 1
    per_sample = np.empty((n_samples, T, n_classes))
    for r in range(n_samples):
        power = [float(sigma_saved[r, o]) ** index for o in range(n_orders)]
        for t in range(T):
            lin = [0.0] * n_params
            for p in range(ptr[t], ptr[t + 1]):
                g = groups[p]
                whole = part = 0.0
                for o in range(n_orders):
                    whole += order_counts[g, o] * power[o]
                    part += counts[p, o] * power[o]
                rest = whole - part
                for k in range(n_params):
                    v = float(s_saved[r, g, k])
                    if rest <= 1e-12 * whole:
                        lin[k] += v
                    elif part <= 0.0:
                        lin[k] += 0.0
                    elif index == 1:
                        u = rng.random()
                        while u <= 0.0:
                            u = rng.random()
                        lin[k] += quantile(v, part, rest, u)
                    else:
                        lin[k] += st.split_gaussian_from_normal(v, part, rest, rng.standard_normal())
            width = 0.0
            for o in range(n_orders):
                width += new[t, o] * power[o]
            if width > 0.0:
                for k in range(n_params):
                    if index == 1:
                        lin[k] += width * math.tan(math.pi * (rng.random() - 0.5))
                    else:
                        lin[k] += math.sqrt(width) * rng.standard_normal()
            z = np.array([0.0, lin[0]]) if n_classes == 2 else np.array(lin)
            per_sample[r, t] = z - logsumexp(z)
    return logsumexp(per_sample, axis=0) - math.log(n_samples)


def _kernel_arguments(model, X):
    ptr, groups, counts, new = model._test_structure(X)
    return (
        np.ascontiguousarray(model.trace_.flat("s")), np.ascontiguousarray(model.trace_.flat("sigma")),
        model._order_counts, ptr, groups, counts, new, model.classes_.shape[0], model.index_,
    )  # fmt: skip


def _fitted(kind, prior, compress, n_classes=2, seed=0):
    if kind == "sequence":
        d = simulate_hmm(n_samples=100, n_test=40, random_state=seed)
        model = CompressedSequenceModel(order=8, prior=prior, compress=compress, n_iter=60, burn_in=20, thin=4,
                                        random_state=seed)  # fmt: skip
        return model.fit(d.X, d.y), np.asarray(d.X_test)
    d = simulate_cauchy_classification(n_samples=100, n_test=40, n_features=5, order=3, random_state=seed)
    y = np.asarray(d.y)
    if n_classes == 3:
        y = (y + (np.asarray(d.X)[:, 0] > 1)) % 3
    model = CompressedInteractionClassifier(order=4, prior=prior, compress=compress, n_iter=60, burn_in=20, thin=4,
                                            random_state=seed)  # fmt: skip
    X = np.asarray(d.X_test).copy()
    X[:3] = np.asarray(d.X)[:3]  # training cases: only whole groups, no new pattern
    X[3:5, 0] = 9  # an unseen code
    return model.fit(d.X, y), X


CASES = [
    ("classification", "cauchy", True, 2),
    ("classification", "cauchy", True, 3),
    ("classification", "gaussian", True, 2),
    ("classification", "gaussian", True, 3),
    ("classification", "cauchy", False, 2),
    ("sequence", "cauchy", True, 2),
    ("sequence", "gaussian", True, 2),
    ("sequence", "cauchy", False, 2),
]


@pytest.mark.parametrize(("kind", "prior", "compress", "n_classes"), CASES)
def test_kernel_equals_the_per_case_reference(kind, prior, compress, n_classes):
    """Same numbers as the old loop with today's quantile, to rounding, and the same draws consumed."""
    model, X = _fitted(kind, prior, compress, n_classes)
    args = _kernel_arguments(model, X)
    rng_kernel, rng_reference = np.random.default_rng(11), np.random.default_rng(11)
    got = predict_kernel(*args, rng_kernel)
    expected = _reference_log_proba(*args, rng_reference)
    assert got.shape == (X.shape[0], n_classes)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert rng_kernel.bit_generator.state == rng_reference.bit_generator.state
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), predict_kernel(*args, np.random.default_rng(
        model._predict_seed)))  # fmt: skip


@pytest.mark.parametrize(("kind", "prior", "compress", "n_classes"), CASES)
def test_kernel_equals_the_old_path(kind, prior, compress, n_classes):
    """Against the old path (Illinois quantile): bit for bit without a Cauchy split, else within its error."""
    model, X = _fitted(kind, prior, compress, n_classes, seed=1)
    args = _kernel_arguments(model, X)
    got = predict_kernel(*args, np.random.default_rng(model._predict_seed))
    old = _reference_log_proba(*args, np.random.default_rng(model._predict_seed), quantile=_illinois_quantile)
    if prior == "gaussian" or not compress:
        np.testing.assert_allclose(got, old, rtol=1e-12, atol=1e-12)  # Python's and numba's logsumexp
    else:
        # the old quantile's own error (|F − u| < 1e-12 only): measured at most 3.2e-11 on these models (seeds 1–3:
        # ≤ 6.5e-11); on larger ones, with more samples and cases, up to 6e-9 (2e-10 in probabilities)
        np.testing.assert_allclose(got, old, rtol=0, atol=1e-10)
        assert not np.array_equal(got, old)  # a model with Cauchy splits: the comparison is not vacuous


def test_halley_quantile_is_at_least_as_accurate_as_the_illinois_one():
    """|F(x) − u| of the new quantile is at the rounding of F; the old one only promised 1e-12."""
    rng = np.random.default_rng(7)
    n = 3000
    s = rng.standard_cauchy(n) * 0.3
    sigma1 = rng.exponential(0.05, n) + 1e-4
    sigma2 = rng.exponential(0.1, n) + 1e-4
    u = np.where(rng.random(n) < 0.3, rng.random(n) ** 8, rng.random(n))  # many tail probabilities
    u = np.where(rng.random(n) < 0.5, u, 1.0 - u)
    u = np.clip(u, 1e-300, 1.0 - 2**-53)
    new = st.split_cauchy_inversion(s, sigma1, sigma2, u)
    old = np.array([_illinois_quantile(*args) for args in zip(s, sigma1, sigma2, u)])
    err_new = np.abs(st.split_cauchy_cdf(new, s, sigma1, sigma2) - u)
    err_old = np.abs(st.split_cauchy_cdf(old, s, sigma1, sigma2) - u)
    # F is evaluated with an absolute error of up to ~1e-13 here (u near 0 or 1, |s| ≫ Σ): measured at most
    # 6e-14 worse than the old one on single triples, 70 times better on average (mean 2e-15 against 1.6e-13)
    assert np.all(err_new <= err_old + 2e-13)
    assert np.mean(err_new) < 0.1 * np.mean(err_old)
    assert np.median(err_new) < 1e-15 < np.median(err_old)
    # the prepared form (shared by test cases in the kernel) is the quantile itself
    for i in range(50):
        prepared = st._split_cauchy_prepare(s[i], sigma1[i], sigma2[i])
        assert st._split_cauchy_solve(*prepared, u[i]) == st.split_cauchy_quantile(s[i], sigma1[i], sigma2[i], u[i])


def test_kernel_on_a_handmade_structure():
    """Rows of every kind: whole groups, a part of a group shared by cases, an empty part (no draw), a part
    whose rest is below 1e-12 of the width (the whole s_g, no draw), cases with no group; 2 and 3 classes."""
    rng = np.random.default_rng(3)
    order_counts = np.array([[1.0, 2.0, 0.0], [0.0, 3.0, 1.0], [0.0, 1.0, 4.0], [1.0, 0.0, 2.0]])
    ptr = np.array([0, 3, 5, 5, 8, 10], np.int64)
    groups = np.array([0, 1, 2, 1, 3, 0, 1, 2, 3, 2], np.int64)
    counts = np.array([[1, 2, 0], [0, 2, 1], [0, 1, 1], [0, 2, 1], [0, 0, 0],
                       [1, 1, 0], [0, 3, 1], [0, 1, 0], [1, 0, 2], [0, 1, 1]], np.float64)  # fmt: skip
    new = np.array([[0, 0, 1], [0, 1, 0], [0, 0, 0], [0, 0, 2], [0, 2, 1]], np.float64)
    for index in (1, 2):
        for n_classes in (2, 3):
            n_params = 1 if n_classes == 2 else n_classes
            s_saved = rng.standard_cauchy((6, 4, n_params))
            sigma = np.column_stack([np.full(6, 5.0), rng.exponential(1.0, (6, 2))])
            sigma[::2, 2] = 1e-9  # rest of group 2's rows below 1e-12 of its width for the Gaussian (σ² units)
            args = (s_saved, sigma, order_counts, ptr, groups, counts, new, n_classes, index)
            a, b = np.random.default_rng(5), np.random.default_rng(5)
            got = predict_kernel(*args, a)
            np.testing.assert_allclose(got, _reference_log_proba(*args, b), rtol=1e-12, atol=1e-12)
            assert a.bit_generator.state == b.bit_generator.state
            np.testing.assert_allclose(np.exp(got).sum(axis=1), 1.0, rtol=1e-12)
