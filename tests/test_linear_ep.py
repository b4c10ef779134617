"""The inference engines of hdbayes.linear against exact references: numerical integration, dense primal forms."""

import numpy as np
import pytest
from scipy.special import log_ndtr, logsumexp, ndtr, softmax

from hdbayes.linear.ep import gaussian_marginals, probit_ep, tilted_moments
from hdbayes.linear.laplace import softmax_laplace
from hdbayes.linear.model import Standardiser, posterior_weights, scale_grid, span_projector


def _problem(seed, n, p, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X.sum(axis=1) + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _grid_posterior(X, y, s2, sb2, half_width=9.0, size=601):
    """log prior × likelihood on a 2-d grid over (w, b) for p = 1: the exact reference."""
    w = np.linspace(-half_width * np.sqrt(s2), half_width * np.sqrt(s2), size)
    b = np.linspace(-half_width * np.sqrt(sb2), half_width * np.sqrt(sb2), size)
    W, B = np.meshgrid(w, b, indexing="ij")
    log_joint = -0.5 * W**2 / s2 - 0.5 * np.log(2 * np.pi * s2) - 0.5 * B**2 / sb2 - 0.5 * np.log(2 * np.pi * sb2)
    for xi, yi in zip(X[:, 0], y, strict=True):
        log_joint = log_joint + log_ndtr(yi * (B + W * xi))
    cell = (w[1] - w[0]) * (b[1] - b[0])
    return W, B, log_joint, cell


@pytest.mark.parametrize("seed", [0, 1])
def test_ep_predictive_and_evidence_match_numerical_integration(seed):
    # f = b + w x, w ~ N(0, s²), b ~ N(0, σ_b²): K = s² x xᵀ + σ_b²; exact answer by a 601 × 601 grid over (w, b)
    X, y = _problem(seed, 12, 1, noise=1.5)
    s2, sb2 = 4.0, 2.0
    fit = probit_ep(s2 * X @ X.T + sb2, y, tol=1e-12)
    assert fit.converged
    W, B, log_joint, cell = _grid_posterior(X, y, s2, sb2)
    log_z = logsumexp(log_joint) + np.log(cell)
    # EP's evidence for probit is known to be accurate to a few hundredths of a nat on problems this small
    assert fit.log_evidence() == pytest.approx(log_z, abs=0.05)
    post = np.exp(log_joint - logsumexp(log_joint))
    x_new = np.array([-1.5, -0.5, 0.0, 0.4, 1.2])
    exact = np.array([np.sum(post * ndtr(B + W * t)) for t in x_new])
    mean, var = fit.predict_latent(s2 * X @ x_new[None, :] + sb2, s2 * x_new**2 + sb2)
    approx = ndtr(mean / np.sqrt(1.0 + var))
    np.testing.assert_allclose(approx, exact, atol=0.02)


def test_ep_latent_means_match_the_exact_posterior_means():
    X, y = _problem(3, 14, 1, noise=1.0)
    s2, sb2 = 2.0, 1.0
    fit = probit_ep(s2 * X @ X.T + sb2, y, tol=1e-12)
    W, B, log_joint, _ = _grid_posterior(X, y, s2, sb2)
    post = np.exp(log_joint - logsumexp(log_joint))
    exact = np.array([np.sum(post * (B + W * xi)) for xi in X[:, 0]])
    g = gaussian_marginals(fit.K, fit.tau, fit.nu)
    np.testing.assert_allclose(g.mean, exact, rtol=0.01, atol=0.01)  # EP's means: within 1 %


def test_ep_fixed_point_matches_the_tilted_moments():
    X, y = _problem(4, 15, 3)
    K = 3.0 * X @ X.T / 3 + 5.0
    fit = probit_ep(K, y, tol=1e-12)
    g = gaussian_marginals(K, fit.tau, fit.nu)
    _, _, _, hat_mean, hat_var = tilted_moments(y, g.var, g.mean, fit.tau, fit.nu)
    np.testing.assert_allclose(hat_mean, g.mean, atol=1e-9)
    np.testing.assert_allclose(hat_var, g.var, atol=1e-9)
    assert np.all(fit.tau >= 0)


def test_dual_predictive_equals_the_primal_dense_computation():
    # the EP Gaussian over (w, b): precision A⁻¹ + Φᵀ T̃ Φ with Φ = [X/√p·s, 1], mean from ν̃
    X, y = _problem(5, 10, 3)
    n, p = X.shape
    s2, sb2 = 2.5, 3.0
    fit = probit_ep(s2 * X @ X.T / p + sb2, y, tol=1e-12)
    design = np.column_stack([X, np.ones(n)])
    prior_cov = np.diag([s2 / p] * p + [sb2])
    precision = np.linalg.inv(prior_cov) + design.T @ (fit.tau[:, None] * design)
    cov = np.linalg.inv(precision)
    mean = cov @ design.T @ fit.nu
    X_new = np.random.default_rng(6).normal(size=(4, p))
    new = np.column_stack([X_new, np.ones(4)])
    mu, var = fit.predict_latent(s2 * X @ X_new.T / p + sb2, s2 * np.sum(X_new**2, axis=1) / p + sb2)
    np.testing.assert_allclose(mu, new @ mean, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(var, np.einsum("ij,jk,ik->i", new, cov, new), rtol=1e-9, atol=1e-10)


def test_evidence_equals_the_dense_formula_of_rasmussen_williams():
    # R&W eq. 3.65 with the site variances σ̃² = 1/τ̃ and means μ̃ = ν̃/τ̃ (all τ̃ > 0 here)
    X, y = _problem(7, 9, 2)
    K = 2.0 * X @ X.T / 2 + 1.0
    fit = probit_ep(K, y, tol=1e-12)
    g = gaussian_marginals(K, fit.tau, fit.nu)
    cav_tau, cav_nu, log_z, _, _ = tilted_moments(y, g.var, g.mean, fit.tau, fit.nu)
    site_var, site_mean = 1.0 / fit.tau, fit.nu / fit.tau
    cav_var, cav_mean = 1.0 / cav_tau, cav_nu / cav_tau
    total = K + np.diag(site_var)
    reference = (
        -0.5 * np.linalg.slogdet(total)[1]
        - 0.5 * site_mean @ np.linalg.solve(total, site_mean)
        + np.sum(log_z)
        + 0.5 * np.sum(np.log(cav_var + site_var))
        + np.sum((cav_mean - site_mean) ** 2 / (2 * (cav_var + site_var)))
    )
    assert fit.log_evidence() == pytest.approx(reference, abs=1e-8)


def test_ep_is_invariant_to_the_order_of_the_training_cases():
    X, y = _problem(8, 13, 4)
    K = 4.0 * X @ X.T / 4 + 2.0
    fit = probit_ep(K, y, tol=1e-12)
    order = np.random.default_rng(0).permutation(13)
    permuted = probit_ep(K[np.ix_(order, order)], y[order], tol=1e-12)
    np.testing.assert_allclose(permuted.tau, fit.tau[order], atol=1e-9)
    np.testing.assert_allclose(permuted.nu, fit.nu[order], atol=1e-9)
    assert permuted.log_evidence() == pytest.approx(fit.log_evidence(), abs=1e-9)


def test_ep_warns_when_it_does_not_converge():
    X, y = _problem(9, 10, 2)
    with pytest.warns(Warning, match="did not converge"):
        fit = probit_ep(X @ X.T + 1.0, y, max_iter=2)
    assert not fit.converged and fit.n_iter == 2


def test_laplace_evidence_and_predictive_match_the_dense_computation():
    rng = np.random.default_rng(0)
    n, n_classes, p = 15, 3, 4
    X = rng.normal(size=(n, p))
    Y = np.eye(n_classes)[rng.integers(0, n_classes, n)]
    K = 2.0 * X @ X.T / p + 1.0 + 1e-8 * np.eye(n)
    fit = softmax_laplace(K, Y, tol=1e-14)
    assert fit.converged
    pi = softmax(fit.f, axis=1)
    np.testing.assert_allclose(fit.a, Y - pi, atol=1e-8)  # the mode: K⁻¹f = y − π
    stack = np.concatenate([np.diag(pi[:, c]) for c in range(n_classes)])
    hessian = np.diag(pi.T.ravel()) - stack @ stack.T  # W = D − ΠΠᵀ in class-major order
    K_big = np.kron(np.eye(n_classes), K)
    psi = -0.5 * np.sum(fit.a * fit.f) + np.sum(Y * np.log(pi))
    reference = psi - 0.5 * np.linalg.slogdet(np.eye(n * n_classes) + K_big @ hessian)[1]
    assert fit.log_evidence == pytest.approx(reference, abs=1e-9)
    X_new = rng.normal(size=(2, p))
    k_star = 2.0 * X @ X_new.T / p + 1.0
    k_ss = 2.0 * np.sum(X_new**2, axis=1) / p + 1.0
    mean, cov = fit.predict_latent(k_star, k_ss)
    posterior = np.linalg.inv(np.linalg.inv(K_big) + hessian)
    for j in range(2):
        Q = np.kron(np.eye(n_classes), k_star[:, [j]])
        A = np.linalg.solve(K_big, Q)
        np.testing.assert_allclose(cov[j], k_ss[j] * np.eye(n_classes) - Q.T @ A + A.T @ posterior @ A, atol=1e-6)
        np.testing.assert_allclose(mean[j], Q.T @ (Y - pi).T.ravel(), atol=1e-10)


def test_standardiser_zeroes_constant_features():
    X = np.column_stack([np.arange(5.0), np.full(5, 3.0), np.full(5, 1e6)])
    st = Standardiser.fit(X)
    Z = st.transform(np.vstack([X, [[2.0, 7.0, 5.0]]]))
    assert st.n_varying == 1
    assert np.all(Z[:, 1:] == 0) and np.all(np.isfinite(Z))


def test_grid_weights_and_span_projector():
    log_s2, log_prior = scale_grid(-2.0, 4.0, 7, 1.0, 1.0)
    assert np.exp(logsumexp(log_prior)) == pytest.approx(1.0)
    assert np.argmax(log_prior) == 3
    weights = posterior_weights(np.zeros(7), log_prior)
    np.testing.assert_allclose(weights, np.exp(log_prior))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 20))
    gram = X @ X.T / 20
    x_new = rng.normal(size=20)
    g = X @ x_new / 20
    projection = X.T @ np.linalg.solve(X @ X.T, X @ x_new)
    assert g @ span_projector(gram) @ g == pytest.approx(projection @ projection / 20, rel=1e-9)


def test_multinomial_probit_moments_match_the_closed_form_and_monte_carlo():
    from hdbayes.linear.ep import multinomial_probit_moments

    rng = np.random.default_rng(0)
    # two classes: P(y = c) = Φ((m_c − m_o)/√(v_0 + v_1 + 2)) exactly
    m, v, labels = rng.normal(size=(6, 2)), rng.uniform(0.1, 3.0, (6, 2)), rng.integers(0, 2, 6)
    log_z, _, _ = multinomial_probit_moments(labels, m, v)
    rows = np.arange(6)
    exact = ndtr((m[rows, labels] - m[rows, 1 - labels]) / np.sqrt(v.sum(axis=1) + 2.0))
    np.testing.assert_allclose(np.exp(log_z), exact, rtol=1e-10)
    # four classes: 10⁶ draws of f ~ N(m, diag v), g = f + ε, kept where argmax g = 2 (standard errors ~2e-3)
    m, v = rng.normal(size=(1, 4)), rng.uniform(0.5, 2.0, (1, 4))
    f = m + np.sqrt(v) * rng.normal(size=(1_000_000, 4))
    kept = np.argmax(f + rng.normal(size=f.shape), axis=1) == 2
    log_z, mean, var = multinomial_probit_moments(np.array([2]), m, v)
    assert np.exp(log_z[0]) == pytest.approx(kept.mean(), abs=3e-3)
    np.testing.assert_allclose(mean[0], f[kept].mean(axis=0), atol=0.02)
    np.testing.assert_allclose(var[0], f[kept].var(axis=0), atol=0.03)


def _three_class_problem():
    rng = np.random.default_rng(3)
    x = np.sort(rng.normal(size=9)) + 0.3 * rng.normal(size=9)  # ordered classes that overlap
    return x, np.repeat([0, 1, 2], 3)


def test_multinomial_probit_ep_matches_importance_sampling_over_the_weights():
    """Three classes, f_c = b_c + w_c x (p = 1): EP's predictive probabilities and evidence against 20 000 draws of
    (w, b) from the prior weighted by the exact multinomial probit likelihood (effective sample size ≈ 600)."""
    from hdbayes.linear.ep import multinomial_probit_ep, multinomial_probit_latent, multinomial_probit_moments

    x, labels = _three_class_problem()
    s2, sb2, x_new = 2.0, 1.0, np.array([-1.5, 0.0, 1.5])
    fit = multinomial_probit_ep(s2 * np.outer(x, x) + sb2, labels, 3, tol=1e-12, intercept_variance=sb2)
    assert fit.converged
    mean, var = multinomial_probit_latent(fit.predictor(), s2 * np.outer(x, x_new) + sb2, s2 * x_new**2 + sb2)
    proba = np.exp(_multiprobit_log_proba(mean, var))
    rng = np.random.default_rng(0)
    w, b = np.sqrt(s2) * rng.normal(size=(20_000, 3)), np.sqrt(sb2) * rng.normal(size=(20_000, 3))
    log_lik = np.zeros(len(w))
    for xi, label in zip(x, labels, strict=True):
        log_lik += multinomial_probit_moments(np.full(len(w), label), b + w * xi, np.zeros_like(w), 16)[0]
    weight = np.exp(log_lik - logsumexp(log_lik))
    assert 1.0 / np.sum(weight**2) > 300  # the reference is usable
    exact = np.array([weight @ np.exp(_multiprobit_log_proba(b + w * xs, np.zeros_like(w), 16)) for xs in x_new])
    # measured: largest difference 0.017 (EP's Gaussian in the tail of a skewed posterior); reference s.e. ≈ 0.01
    np.testing.assert_allclose(proba, exact, atol=0.035)
    # evidence: measured 0.15 nats below the reference (the uncentred factorised EP: 0.54)
    assert fit.log_evidence() == pytest.approx(logsumexp(log_lik) - np.log(len(w)), abs=0.3)


def _multiprobit_log_proba(mean, var, n_nodes=64):
    from hdbayes.linear.ep import multinomial_probit_probabilities

    return multinomial_probit_probabilities(mean, var, n_nodes)


def test_centring_the_intercepts_leaves_the_exact_model_but_makes_ep_converge_fast():
    """Four well-separated classes, n = 40, p = 60, ln s² = 0, σ_b² = 10: the common shift of the latents that only the
    intercept prior pins down makes the class-factorised EP crawl (measured > 300 sweeps); conditioning on b̄ = 0
    removes that direction (measured 33 sweeps). Both describe the same model, so they predict nearly alike."""
    from hdbayes.linear.ep import multinomial_probit_ep, multinomial_probit_latent

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 10)
    centres = 1.5 * rng.normal(size=(4, 60))
    X = centres[labels] + rng.normal(size=(40, 60))
    Xt = (X - X.mean(axis=0)) / X.std(axis=0)
    gram = Xt @ Xt.T / 60
    K = gram + 10.0
    plain = multinomial_probit_ep(K, labels, 4, max_iter=120, warn=False)
    centred = multinomial_probit_ep(K, labels, 4, intercept_variance=10.0)
    assert centred.converged and centred.n_iter <= 100
    assert not plain.converged
    X_new = centres + rng.normal(size=(4, 60))
    g_new = Xt @ ((X_new - X.mean(axis=0)) / X.std(axis=0)).T / 60
    k_ss = np.sum(((X_new - X.mean(axis=0)) / X.std(axis=0)) ** 2, axis=1) / 60 + 10.0
    p_plain = np.exp(_multiprobit_log_proba(*multinomial_probit_latent(plain.predictor(), g_new + 10.0, k_ss)))
    p_centred = np.exp(_multiprobit_log_proba(*multinomial_probit_latent(centred.predictor(), g_new + 10.0, k_ss)))
    np.testing.assert_array_equal(np.argmax(p_centred, axis=1), np.arange(4))
    np.testing.assert_allclose(p_centred, p_plain, atol=0.1)
    # relabelling the classes permutes the sites and the predictions
    perm = np.array([2, 0, 3, 1])
    relabelled = multinomial_probit_ep(K, perm[labels], 4, intercept_variance=10.0)
    np.testing.assert_allclose(relabelled.tau[:, perm], centred.tau, atol=1e-7)
    np.testing.assert_allclose(relabelled.log_evidence(), centred.log_evidence(), rtol=1e-9)


def test_stacking_weights_maximise_the_leave_one_out_score():
    # exact oracle: the objective Σ_i log Σ_k w_k p_ki on a fine grid over the 2-simplex of three models
    from hdbayes.linear.stacking import stacking_weights

    rng = np.random.default_rng(0)
    log_density = np.log(rng.uniform(0.05, 1.0, size=(3, 25)))
    weights = stacking_weights(log_density)
    assert np.isclose(weights.sum(), 1.0) and np.all(weights >= 0)

    def score(w):
        return np.sum(np.log(w @ np.exp(log_density)))

    grid = np.linspace(0, 1, 201)
    best = max(score(np.array([a, b, 1 - a - b])) for a in grid for b in grid if a + b <= 1 + 1e-12)
    assert score(weights) >= best - 1e-9
    # a model that dominates every case takes all the weight
    dominant = np.vstack([log_density, log_density.max(axis=0) + 1.0])
    assert stacking_weights(dominant)[-1] > 1 - 1e-6


def test_loo_conditional_variance_equals_the_dense_conditional():
    from hdbayes.linear.model import loo_conditional_variance, span_projector

    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 30))
    X -= X.mean(axis=0)
    G = X @ X.T / 30
    K = 2.5 * G + 10.0
    dense = 1.0 / np.diag(np.linalg.inv(K))
    np.testing.assert_allclose(loo_conditional_variance(np.diag(span_projector(G)), 2.5, 10.0), dense, rtol=1e-8)


@pytest.mark.parametrize("span", [False, True])
def test_ep_leave_one_out_densities_match_refitting_without_the_case(span):
    # the cavity (minus the span prior's conditional variance) against EP refitted on the other n − 1 cases and
    # predicting the left-out one, with the other cases' own centring and span (eq. 17–18)
    from hdbayes.linear.model import loo_conditional_variance, span_projector

    rng = np.random.default_rng(2)
    n, p, s2, sb2 = 20, 60, 3.0, 10.0
    y = np.where(np.arange(n) % 2 == 1, 1.0, -1.0)
    X = rng.normal(size=(n, p)) + 0.6 * y[:, None] * (np.arange(p) < 6)
    Xc = X - X.mean(axis=0)
    G = Xc @ Xc.T / p
    fit = probit_ep(s2 * G + sb2, y, tol=1e-10)
    reduction = loo_conditional_variance(np.diag(span_projector(G)), s2, sb2) if span else None
    loo = np.exp(fit.loo_log_density(reduction))
    refit = np.empty(n)
    for i in range(n):
        rest = np.delete(np.arange(n), i)
        Z = X[rest] - X[rest].mean(axis=0)
        z = X[i] - X[rest].mean(axis=0)
        Gr, g = Z @ Z.T / p, Z @ z / p
        other = probit_ep(s2 * Gr + sb2, y[rest], tol=1e-10)
        self_term = g @ span_projector(Gr) @ g if span else z @ z / p
        mean, var = other.predict_latent((s2 * g + sb2)[:, None], np.array([s2 * self_term + sb2]))
        refit[i] = ndtr(y[i] * mean[0] / np.sqrt(1.0 + var[0]))
    np.testing.assert_allclose(loo, refit, atol=0.01)  # measured: 0.004 for both priors
