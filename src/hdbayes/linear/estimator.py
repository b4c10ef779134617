"""``BayesianLinearClassifier``: a linear probit / softmax classifier on all standardised features.

The estimator standardises the features inside ``fit``, builds the n × n matrix G = X̃X̃ᵀ/p once
(:mod:`.model`), and for every point of a grid of log s² fits the latent posterior — by expectation
propagation for two classes (:mod:`.ep`), by the Laplace approximation of the softmax model for more
(:mod:`.laplace`) — and weighs the grid points by evidence × prior (Bayesian model averaging of the
predictive probabilities, docs/linear.md eq. 10–12).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import log_ndtr, logsumexp
from scipy.stats import qmc
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._validation import check_generator
from hdbayes.base import BayesianClassifier
from hdbayes.linear.ep import (
    multinomial_probit_ep,
    multinomial_probit_latent,
    multinomial_probit_probabilities,
    probit_ep,
)
from hdbayes.linear.laplace import softmax_laplace
from hdbayes.linear.model import Standardiser, posterior_weights, scale_grid, span_projector

if TYPE_CHECKING:
    from typing import Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["BayesianLinearClassifier"]

#: Up to this many training cases the n × n linear algebra runs with one BLAS thread (threads cost more than they
#: save on small matrices, by 30× on a loaded machine).
_SINGLE_THREAD_MAX_N = 1000
#: Grid points whose weight is below this fraction of the largest are left out of the predictions (they change a
#: probability by less than n_grid times this fraction).
_NEGLIGIBLE_WEIGHT = 1e-7
#: Grid points further than this many prior standard deviations from the prior mean are not used.
_GRID_HALF_WIDTH = 3.0


class BayesianLinearClassifier(BayesianClassifier):
    """Bayesian linear classifier on all standardised features, with the prior scale averaged by evidence.

    The model (docs/linear.md): f_c(x) = b_c + w_cᵀx̃ with x̃ the features standardised by their training means
    and standard deviations (features constant in training contribute nothing), w_c ~ N(0, s²/p I) with p the
    number of varying features, b_c ~ N(0, σ_b²). Two classes: one latent function with the probit likelihood
    p(y = 1 | f) = Φ(f), fitted by expectation propagation; C > 2 classes: C latent functions with the softmax
    likelihood, fitted by the Laplace approximation. Both run in the n × n dual form (the Gram matrix
    X̃X̃ᵀ/p costs O(n²p) once; no p × p matrix). The prior variance s² is integrated over a grid of ln s²
    with weights ∝ approximate evidence × a normal prior on ln s² (``"average"``), or set to the grid point of
    largest evidence × prior (``"maximise"``).

    Parameters
    ----------
    log_variance_mean : float, default=2.0
        Mean of the normal prior on ln s² (s² is the prior variance of the latent wᵀx̃ at a typical case).
    log_variance_sd : float, default=2.0
        Its standard deviation. The grid spans the mean ± 3 standard deviations.
    n_grid : int, default=25
        Number of grid points of ln s² (1: s² = exp(log_variance_mean)).
    intercept_variance : float, default=10.0
        σ_b², the prior variance of the intercept(s).
    hyperparameters : {"average", "maximise"}, default="average"
        Average the predictive probabilities over the grid, or use the single best grid point.
    tol : float, default=1e-8
        EP: largest relative change of a site parameter; Laplace: relative increase of the objective.
    max_iter : int, default=1000
        EP sweeps (Newton iterations for more than two classes) per grid point.
    damping : float, default=0.5
        EP step in natural parameters, in (0, 1].
    multiclass : {"softmax", "probit", "ovr"}, default="softmax"
        More than two classes: ``"softmax"`` C latent functions with the softmax likelihood by the Laplace
        approximation; ``"probit"`` the multinomial probit model (y = argmax_c f_c + ε_c) by EP factorised over the
        classes (experimental: slow to converge at small s²); ``"ovr"`` one binary probit model per class against
        the rest, renormalised (not a joint model; measured in docs/linear.md).
    coefficient_prior : {"span", "isotropic", "mixed"}, default="span"
        The prior variance of the coefficients off the span of the training cases relative to on it (docs/linear.md
        eq. 3–4): ρ = 0 (``"span"``), ρ = 1 (``"isotropic"``, w ~ N(0, s²/p I)), or ρ ~ U(0, 1) (``"mixed"``). It
        changes only the predictions, never the fit or the evidence.
    n_draws : int, default=2048
        Quasi-Monte-Carlo draws (scrambled Sobol) averaging the softmax over the Gaussian latent at a new case
        (more than two classes only).
    random_state : None, int or numpy.random.Generator, default=None
        Scrambles the Sobol draws (more than two classes only).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.
    n_varying_features_ : int
        p, the number of features that vary in the training data.
    log_variance_grid_ : ndarray of shape (n_grid_,)
        The grid of ln s².
    log_evidence_ : ndarray of shape (n_grid_,)
        The approximate log evidence at each grid point (EP for two classes, Laplace for more).
    weights_ : ndarray of shape (n_grid_,)
        Posterior weights of the grid points used for prediction (one 1 for ``"maximise"``).
    converged_ : bool
        Whether the inference converged at every grid point with non-negligible weight.
    n_iter_ : ndarray of int of shape (n_grid_,)
        EP sweeps or Newton iterations at each grid point.

    See Also
    --------
    sklearn.linear_model.LogisticRegressionCV : The same linear predictor, penalised and cross-validated.
    sklearn.gaussian_process.GaussianProcessClassifier : Laplace GP classification with a chosen kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes import BayesianLinearClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 500))
    >>> y = (X[:, :20].sum(axis=1) + rng.normal(size=60) > 0).astype(int)
    >>> model = BayesianLinearClassifier().fit(X, y)
    >>> proba = model.predict_proba(X[:3])
    >>> proba.shape, bool(np.allclose(proba.sum(axis=1), 1.0))
    ((3, 2), True)
    """

    _parameter_constraints = {
        "log_variance_mean": [Interval(Real, None, None, closed="neither")],
        "log_variance_sd": [Interval(Real, 0, None, closed="neither")],
        "n_grid": [Interval(Integral, 1, None, closed="left")],
        "intercept_variance": [Interval(Real, 0, None, closed="neither")],
        "hyperparameters": [StrOptions({"average", "maximise"})],
        "coefficient_prior": [StrOptions({"isotropic", "span", "mixed"})],
        "multiclass": [StrOptions({"probit", "softmax", "ovr"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="right")],
        "n_draws": [Interval(Integral, 16, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        log_variance_mean: float = 2.0,
        log_variance_sd: float = 2.0,
        n_grid: int = 25,
        intercept_variance: float = 10.0,
        hyperparameters: str = "average",
        tol: float = 1e-8,
        max_iter: int = 1000,
        damping: float = 0.5,
        multiclass: str = "softmax",
        coefficient_prior: str = "span",
        n_draws: int = 2048,
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
    ) -> None:
        self.log_variance_mean = log_variance_mean
        self.log_variance_sd = log_variance_sd
        self.n_grid = n_grid
        self.intercept_variance = intercept_variance
        self.hyperparameters = hyperparameters
        self.coefficient_prior = coefficient_prior
        self.multiclass = multiclass
        self.tol = tol
        self.max_iter = max_iter
        self.damping = damping
        self.n_draws = n_draws
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Real-valued features (finite).
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).

        Returns
        -------
        self
            The fitted classifier.
        """
        X, codes = self._validate_classification_data(X, y)
        standardiser = Standardiser.fit(X)
        Xt = standardiser.transform(X)
        p = max(standardiser.n_varying, 1)
        gram = Xt @ Xt.T / p
        n_classes = len(self.classes_)
        half = _GRID_HALF_WIDTH * self.log_variance_sd
        log_s2, log_prior = scale_grid(
            self.log_variance_mean - half, self.log_variance_mean + half, self.n_grid,
            self.log_variance_mean, self.log_variance_sd,
        )  # fmt: skip
        if n_classes == 2:
            problems = [("probit", np.where(codes == 1, 1.0, -1.0))]
        elif self.multiclass == "probit":
            problems = [("multiprobit", codes)]
        elif self.multiclass == "ovr":
            problems = [("probit", np.where(codes == c, 1.0, -1.0)) for c in range(n_classes)]
        else:
            problems = [("softmax", np.eye(n_classes)[codes])]
        with single_threaded_blas(len(gram) <= _SINGLE_THREAD_MAX_N):
            models = [self._fit_grid(gram, kind, target, log_s2, log_prior) for kind, target in problems]
            self._span = None if self.coefficient_prior == "isotropic" else span_projector(gram)
        self.converged_ = all(model["converged"] for model in models)
        if not self.converged_:
            warnings.warn(
                f"the inference did not converge within max_iter={self.max_iter} at some values of the prior scale "
                "with non-negligible weight; see converged_",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.n_varying_features_ = standardiser.n_varying
        self.log_variance_grid_ = log_s2
        self.log_evidence_ = np.array([model["log_evidence"] for model in models])
        self.weights_ = np.array([model["weights"] for model in models])
        self.n_iter_ = np.array([model["n_iter"] for model in models])
        self._standardiser = standardiser
        self._train = Xt
        self._p = p
        self._models = [(kind, model["predictors"]) for (kind, _), model in zip(problems, models, strict=True)]
        if problems[0][0] == "softmax":
            sobol = qmc.Sobol(d=n_classes, scramble=True, seed=check_generator(self.random_state))
            self._draws = _normal_draws(sobol.random(self.n_draws))
        return self

    def _fit_grid(self, gram, kind, target, log_s2, log_prior):
        """Fit one latent model at every grid point (warm-started from the previous one) and weigh the points."""
        sb2 = float(self.intercept_variance)
        fits, log_evidence = [], []
        start = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for value in log_s2:
                K = np.exp(value) * gram + sb2
                if kind == "probit":
                    fit = probit_ep(K, target, tau=None if start is None else start[0],
                                    nu=None if start is None else start[1], damping=self.damping,
                                    tol=self.tol, max_iter=self.max_iter, warn=False)  # fmt: skip
                    start = (fit.tau, fit.nu)
                    log_evidence.append(fit.log_evidence())
                elif kind == "multiprobit":
                    fit = multinomial_probit_ep(K, target, self.classes_.size, tau=None if start is None else start[0],
                                                nu=None if start is None else start[1], damping=self.damping,
                                                tol=self.tol, max_iter=self.max_iter, warn=False,
                                                intercept_variance=sb2)  # fmt: skip
                    start = (fit.tau, fit.nu)
                    log_evidence.append(fit.log_evidence())
                else:
                    fit = softmax_laplace(K, target, a=start, tol=self.tol * 1e-2, max_iter=self.max_iter, warn=False)
                    start = fit.a
                    log_evidence.append(fit.log_evidence)
                fits.append(fit)
        log_evidence = np.array(log_evidence)
        weights = posterior_weights(log_evidence, log_prior)
        if self.hyperparameters == "maximise":
            weights = np.zeros_like(weights)
            weights[np.argmax(log_evidence + log_prior)] = 1.0
        used = weights > _NEGLIGIBLE_WEIGHT * weights.max()
        predictors = [
            (np.exp(value), fit.predictor() if kind in ("probit", "multiprobit") else fit, weight)
            for value, fit, weight, u in zip(log_s2, fits, weights, used, strict=True)
            if u
        ]
        return {
            "log_evidence": log_evidence, "weights": weights, "n_iter": [fit.n_iter for fit in fits],
            "converged": bool(all(fit.converged for fit, u in zip(fits, used, strict=True) if u)),
            "predictors": predictors,
        }  # fmt: skip

    def _joint_log_likelihood(self, X):
        Xs = self._standardiser.transform(X)
        cross = self._train @ Xs.T / self._p  # g* = X̃x*/p for every new case, shape (n, m)
        full = np.einsum("ij,ij->i", Xs, Xs) / self._p  # ‖x*‖²/p
        if self._span is None:
            mixture = [(full, 1.0)]
        else:  # ‖Px*‖²/p + ρ ‖(I − P)x*‖²/p, ρ at the quadrature nodes of its prior (docs/linear.md eq. 4)
            in_span = np.minimum(np.einsum("im,im->m", cross, self._span @ cross), full)
            mixture = [(in_span + rho * (full - in_span), weight) for rho, weight in _orthogonal_nodes(
                self.coefficient_prior)]  # fmt: skip
        sb2 = float(self.intercept_variance)
        columns = []
        with single_threaded_blas(len(cross) <= _SINGLE_THREAD_MAX_N):
            columns = self._predict_columns(cross, mixture, sb2)
        if len(self.classes_) == 2 or self._models[0][0] != "probit":
            return columns[0]
        return np.column_stack([column[:, 1] for column in columns])  # one-vs-rest, renormalised by the base

    def _predict_columns(self, cross, mixture, sb2):
        """log p(y | x*) of each latent model, averaged over the grid and the prior on ρ."""
        columns = []
        for kind, predictors in self._models:
            log_terms = []
            for s2, predictor, weight in predictors:
                k_star = s2 * cross + sb2
                for self_term, node_weight in mixture:
                    k_ss = s2 * self_term + sb2
                    if kind == "probit":
                        a, W = predictor
                        mean = k_star.T @ a
                        var = np.maximum(k_ss - np.einsum("im,im->m", k_star, W @ k_star), 0.0)
                        z = mean / np.sqrt(1.0 + var)
                        log_p = np.column_stack([log_ndtr(-z), log_ndtr(z)])
                    elif kind == "multiprobit":
                        mean, var = multinomial_probit_latent(predictor, k_star, k_ss)
                        log_p = multinomial_probit_probabilities(mean, var)
                    else:
                        log_p = _softmax_expectation(*predictor.predict_latent(k_star, k_ss), self._draws)
                    log_terms.append(np.log(weight * node_weight) + log_p)
            columns.append(logsumexp(np.stack(log_terms), axis=0))
        return columns


def _orthogonal_nodes(coefficient_prior):
    """Nodes and weights of the prior on ρ, the prior variance of the coefficients off the training span relative to
    on it: ρ = 0 (``"span"``) or ρ ~ U(0, 1) by 8-point Gauss–Legendre (``"mixed"``)."""
    if coefficient_prior == "span":
        return [(0.0, 1.0)]
    nodes, weights = np.polynomial.legendre.leggauss(8)
    return list(zip(0.5 * (nodes + 1.0), 0.5 * weights, strict=True))


def single_threaded_blas(enabled=True):
    """Context limiting BLAS to one thread, or a no-op (as :func:`hdbayes.spike_slab.ep.single_threaded_blas`; the
    model packages do not import one another)."""
    import contextlib

    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas") if enabled else contextlib.nullcontext()


def _normal_draws(uniform):
    """Standard normal draws from uniform ones, kept away from 0 and 1."""
    from scipy.special import ndtri

    return ndtri(np.clip(uniform, 1e-12, 1.0 - 1e-12))


def _softmax_expectation(mean, cov, draws):
    """log E[softmax(f)] for f ~ N(mean_j, cov_j), averaged over the fixed standard normal draws.

    Parameters
    ----------
    mean : ndarray of shape (m, C)
    cov : ndarray of shape (m, C, C)
    draws : ndarray of shape (S, C)

    Returns
    -------
    ndarray of shape (m, C)
    """
    n_classes = mean.shape[1]
    jitter = 1e-10 * np.maximum(np.trace(cov, axis1=1, axis2=2) / n_classes, 1e-300)
    chol = np.linalg.cholesky(cov + jitter[:, None, None] * np.eye(n_classes))
    latent = np.einsum("mcd,sd->msc", chol, draws)
    latent += mean[:, None, :]
    latent -= latent.max(axis=2, keepdims=True)
    np.exp(latent, out=latent)
    latent /= latent.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.log(latent.mean(axis=1))
