"""The Laplace approximation for multinomial logistic (softmax) classification with Gaussian latent values.

C latent functions, independent a priori with the same prior covariance K at the n training cases;
p(y_i = c | f_i) = softmax(f_i)_c. The posterior of the n·C latent values is approximated by a Gaussian at its
mode (Newton's method in the dual form of Rasmussen & Williams 2006, Algorithm 3.3; "R&W" below), with the
approximate log evidence of R&W eq. 3.44 (the log-determinant including the log |M| term that the algorithm as
printed omits: docs/linear.md eq. 14) and the predictive distribution of the latent at a new case (R&W
eq. 3.40–3.43), from which class probabilities are averaged over fixed quasi-Monte-Carlo draws (R&W
Algorithm 3.4).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.special import log_softmax, logsumexp, softmax
from sklearn.exceptions import ConvergenceWarning

__all__ = ["LaplaceFit", "softmax_laplace"]


def _blocks(K, pi):
    """Per class c: E_c = D_c^½ (I + D_c^½ K D_c^½)⁻¹ D_c^½ and Σ log diag of its Cholesky factor."""
    n, n_classes = pi.shape
    E = np.empty((n_classes, n, n))
    half_logdet = 0.0
    eye = np.eye(n)
    for c in range(n_classes):
        root = np.sqrt(pi[:, c])
        L = scipy.linalg.cholesky(eye + root[:, None] * K * root[None, :], lower=True, check_finite=False)
        half_logdet += np.sum(np.log(np.diag(L)))
        inner = scipy.linalg.cho_solve((L, True), np.diag(root), check_finite=False)
        E[c] = root[:, None] * inner
    return E, half_logdet


@dataclass
class LaplaceFit:
    """The Laplace approximation at the posterior mode.

    Attributes
    ----------
    K : ndarray of shape (n, n)
    Y : ndarray of shape (n, C)
        One-hot labels.
    a : ndarray of shape (n, C)
        K⁻¹ f̂ = Y − π̂ at the mode.
    f : ndarray of shape (n, C)
        The mode f̂ = K a.
    log_evidence : float
        log q(y | K) (R&W eq. 3.44, docs/linear.md eq. 14).
    n_iter : int
    converged : bool
    """

    K: np.ndarray
    Y: np.ndarray
    a: np.ndarray
    f: np.ndarray
    log_evidence: float
    n_iter: int
    converged: bool

    def predict_latent(self, k_star: np.ndarray, k_star_star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of the C latent values at new cases (R&W eq. 3.40–3.43).

        Σ*_{cc'} = δ_{cc'} (k** − k*ᵀ E_c k*) + k*ᵀ E_c (Σ_c E_c)⁻¹ E_{c'} k*  (docs/linear.md eq. 15).

        Parameters
        ----------
        k_star : ndarray of shape (n, m)
            Prior covariances between the training latents and the m new ones.
        k_star_star : ndarray of shape (m,)
            Prior variances of the new latents.

        Returns
        -------
        mean : ndarray of shape (m, C)
            Predictive means of the C latents at every new case.
        cov : ndarray of shape (m, C, C)
            Their predictive covariance at every new case.
        """
        pi = softmax(self.f, axis=1)
        if not hasattr(self, "_cache"):
            E, _ = _blocks(self.K, pi)
            self._cache = E, scipy.linalg.cholesky(E.sum(axis=0), lower=True, check_finite=False)
        E, M = self._cache
        mean = k_star.T @ (self.Y - pi)
        EK = np.einsum("cij,jm->cim", E, k_star)  # E_c k*
        half = np.stack(
            [scipy.linalg.solve_triangular(M, EK[c], lower=True, check_finite=False) for c in range(len(E))]
        )
        cov = np.einsum("cim,dim->mcd", half, half)
        diag = k_star_star[:, None] - np.einsum("im,cim->mc", k_star, EK)
        idx = np.arange(len(E))
        cov[:, idx, idx] += diag
        return mean, cov


def softmax_laplace(
    K: np.ndarray,
    Y: np.ndarray,
    *,
    a: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 200,
    warn: bool = True,
) -> LaplaceFit:
    """Find the posterior mode by Newton's method (R&W Algorithm 3.3) and the Laplace evidence.

    Each Newton step is halved (up to 30 times) until the objective Ψ(f) = −½ aᵀ f + log p(y | f) increases,
    so the iteration is monotone. Convergence: the increase of Ψ falls below ``tol`` · (1 + |Ψ|) and the
    largest change of f below √tol.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance of each latent function.
    Y : ndarray of shape (n, C)
        One-hot labels.
    a : ndarray of shape (n, C), optional
        Warm start (f = K a).
    tol : float, default=1e-10
        Convergence threshold of the relative increase of Ψ.
    max_iter : int, default=200
        Largest number of Newton steps.
    warn : bool, default=True
        Emit a :class:`~sklearn.exceptions.ConvergenceWarning` when the iteration stops unconverged.

    Returns
    -------
    LaplaceFit
        The mode, whether it converged and the Laplace evidence.
    """
    n, n_classes = Y.shape
    a = np.zeros((n, n_classes)) if a is None else np.array(a, dtype=np.float64)
    f = K @ a

    def objective(a, f):
        return float(-0.5 * np.sum(a * f) + np.sum(Y * log_softmax(f, axis=1)))

    psi = objective(a, f)
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - reported below
        pi = softmax(f, axis=1)
        E, _ = _blocks(K, pi)
        M = scipy.linalg.cholesky(E.sum(axis=0), lower=True, check_finite=False)
        b = pi * f - pi * np.sum(pi * f, axis=1, keepdims=True) + Y - pi  # (D − ΠΠᵀ) f + y − π
        c = np.einsum("cij,jc->ic", E, K @ b)  # E K b
        t = scipy.linalg.cho_solve((M, True), c.sum(axis=1), check_finite=False)
        a_new = b - c + np.einsum("cij,j->ic", E, t)
        step = 1.0
        for _ in range(30):
            a_try = a + step * (a_new - a)
            f_try = K @ a_try
            psi_try = objective(a_try, f_try)
            if psi_try >= psi - 1e-12 * abs(psi):
                break
            step *= 0.5
        change = float(np.max(np.abs(f_try - f)))
        gain = psi_try - psi
        a, f, psi = a_try, f_try, psi_try
        if gain <= tol * (1.0 + abs(psi)) and change <= np.sqrt(tol) * (1.0 + float(np.max(np.abs(f)))):
            converged = True
            break
    pi = softmax(f, axis=1)
    E, half_logdet = _blocks(K, pi)
    M = scipy.linalg.cholesky(E.sum(axis=0), lower=True, check_finite=False)
    log_evidence = psi - half_logdet - float(np.sum(np.log(np.diag(M))))
    if not converged and warn:
        warnings.warn(
            f"Newton's method for the softmax Laplace approximation did not converge in {max_iter} iterations; "
            "the predictions may be inaccurate",
            ConvergenceWarning,
            stacklevel=2,
        )
    return LaplaceFit(K, Y, a, f, log_evidence, iteration, converged)


def log_softmax_total(f):
    """Σ_i log Σ_c exp f_ic (helper for tests)."""
    return float(np.sum(logsumexp(f, axis=1)))
