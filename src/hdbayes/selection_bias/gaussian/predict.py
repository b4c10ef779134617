"""The predictive class probabilities of the Gaussian classifier from its draws (Li 2009, eq. 13–15), by the
sampled class means or Rao–Blackwellised; shared by every variant (each gives its precisions, see
``GaussianVariant.precisions``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from hdbayes.exceptions import InputValueError

__all__ = ["log_class_numerators", "rao_blackwell_log_class_numerators"]

_PREDICT_CHUNK = 256


def log_class_numerators(X, mu, tau_x, class_log_prior):
    """log P(y* = g, x* | training data) by the ratio of Monte Carlo averages (eq. 13–15).

        log P(x* | train, y* = g) ≈ logmeanexp_s Σ_j log N(x*_j; μ_j^(g)[s], 1/τ_j^x[s]),

    computed with matrix products (Σ_j τ x², Σ_j τ μ x, Σ_j τ μ²) in chunks of test cases. With
    per-class precisions (``class_variance="per-class"``) τ_j^x is τ_gj^x = 1/w_gj of the class.

    Parameters
    ----------
    X : ndarray of shape (N, k)
        Test values of the selected features.
    mu : ndarray of shape (S, G, k)
    tau_x : ndarray of shape (S, k) or (S, G, k)
        Precisions per draw and feature, or per draw, class and feature.
    class_log_prior : ndarray of shape (G,)
        log (n_g + c)/(n + G c), the Pólya-urn predictive of the class.

    Returns
    -------
    ndarray of shape (N, G)
    """
    n_samples, n_classes, k = mu.shape
    tau = tau_x[:, None, :] if tau_x.ndim == 2 else tau_x  # (S, 1, k) or (S, G, k)
    weighted_mu = (tau * mu).reshape(n_samples * n_classes, k)  # (S·G, k)
    constant = 0.5 * np.log(tau).sum(axis=-1) - 0.5 * k * np.log(2.0 * np.pi)  # (S, 1) or (S, G)
    mean_term = 0.5 * np.einsum("sgk,sgk->sg", weighted_mu.reshape(n_samples, n_classes, k), mu)  # (S, G)
    out = np.empty((X.shape[0], n_classes))
    for start in range(0, X.shape[0], _PREDICT_CHUNK):
        rows = X[start : start + _PREDICT_CHUNK]
        square_term = 0.5 * ((rows * rows) @ tau.reshape(-1, k).T).reshape(rows.shape[0], n_samples, -1)
        cross = (rows @ weighted_mu.T).reshape(rows.shape[0], n_samples, n_classes)
        log_lik = constant[None] - square_term + cross - mean_term[None]
        out[start : start + _PREDICT_CHUNK] = logsumexp(log_lik, axis=1) - np.log(n_samples)
    return out + class_log_prior[None, :]


def rao_blackwell_log_class_numerators(X, nu, tau_x, tau_mu, counts, sums, class_log_prior):
    """log P(y* = g, x* | training data) with the class means integrated out analytically.

    For a draw (ν, τ^x, τ^μ) of the chain, μ_j^(g) given everything else is Gaussian
    (eq. 18) with precision P = τ^μ + n_g τ_j^x and mean m = (ν_j τ^μ + Σ_{i∈g} x_ij τ_j^x)/P,
    so x*_j | y* = g has predictive N(m, 1/τ_j^x + 1/P). Averaging these predictive
    densities over the draws estimates the same quantity as eq. 15 (Rao–Blackwellisation)
    with much smaller Monte Carlo variance: a product over k features of densities at
    sampled μ is dominated by a few draws when k is large, which makes eq. 15
    overconfident and noisy. With per-class precisions τ_gj^x = 1/w_gj
    (``class_variance="per-class"``, docs/gaussian.md eq. P34) τ_j^x is the class's in P, m and the
    variance: N(m_gj, w_gj + 1/P_gj).

    Parameters
    ----------
    X : ndarray of shape (N, k)
    nu : ndarray of shape (S, k)
    tau_x : ndarray of shape (S, k) or (S, G, k)
        Within-class precisions per draw and feature, or per draw, class and feature.
    tau_mu : ndarray of shape (S,) or (S, k)
        1/w^μ: one per draw (the shared model) or one per draw and feature (``spread="per-feature"``).
    counts : ndarray of shape (G,)
    sums : ndarray of shape (G, k)
        Training class counts and class sums of the selected features.
    class_log_prior : ndarray of shape (G,)

    Returns
    -------
    ndarray of shape (N, G)
    """
    n_samples, k = nu.shape
    n_classes = counts.shape[0]
    tau_mu = np.asarray(tau_mu).reshape(n_samples, 1, -1)  # (S, 1, 1) or (S, 1, k)
    tau = tau_x[:, None, :] if tau_x.ndim == 2 else tau_x  # (S, 1, k) or (S, G, k)
    precision = tau_mu + counts[None, :, None] * tau  # (S, G, k)
    mean = (nu[:, None, :] * tau_mu + sums[None] * tau) / precision
    variance = 1.0 / tau + 1.0 / precision
    constant = -0.5 * (np.log(2.0 * np.pi * variance) + mean * mean / variance).sum(axis=-1)  # (S, G)
    inverse = (1.0 / variance).reshape(n_samples * n_classes, k)
    weighted = (mean / variance).reshape(n_samples * n_classes, k)
    out = np.empty((X.shape[0], n_classes))
    for start in range(0, X.shape[0], _PREDICT_CHUNK):
        rows = X[start : start + _PREDICT_CHUNK]
        quadratic = -0.5 * (rows * rows) @ inverse.T + rows @ weighted.T  # (N, S·G)
        log_lik = constant[None] + quadratic.reshape(rows.shape[0], n_samples, n_classes)
        out[start : start + _PREDICT_CHUNK] = logsumexp(log_lik, axis=1) - np.log(n_samples)
    return out + class_log_prior[None, :]


def dense_finite_chunk(block, *, where):
    """A row chunk of the selected columns of a dask X at prediction, dense float64, refused (naming the chunk,
    ``where``) if it holds a value that is not finite."""
    block = np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64)
    if not np.isfinite(block).all():
        raise InputValueError(f"{where} holds a value that is not finite; X must be finite")
    return block
