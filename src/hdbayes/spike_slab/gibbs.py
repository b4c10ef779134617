"""A collapsed Gibbs sampler for the group spike-and-slab model (docs/spike_slab.md, "Exact references").

The coefficients are integrated out: ``P(y | z) = N(y | 0, C_z)``, ``C_z = σ0² I + Σ_{g: z_g=1} v_{s,g} X_g X_gᵀ``.
Each sweep visits the groups in random order and samples z_g from

    log P(z_g=1 | z_−g, y) − log P(z_g=0 | z_−g, y)
        = logit p0,g + ½ bᵀ(S + I/v_s)⁻¹ b − ½ log|I + v_s S|,

with ``S = X_gᵀ C_{−g}⁻¹ X_g`` and ``b = X_gᵀ C_{−g}⁻¹ y`` (the eigen-form written with a
Cholesky factor). ``C⁻¹`` is kept up to date with rank-d_g Woodbury up- and down-dates (O(n² d_g) per
group, O(n² d) per sweep) and recomputed from scratch after every sweep to stop round-off drift.
At each saved sweep w is drawn from ``w_A | z, y ~ N(Σ X_Aᵀy/σ0², Σ)``, ``Σ = (X_AᵀX_A/σ0² + diag(1/v_A))⁻¹``.
Estimates are Rao–Blackwellised: ``P(z_g = 1 | y)`` averages the conditional probabilities and the
posterior mean averages ``E[w | z, y]`` over the saved sweeps.

One chain is :class:`CollapsedGibbsChain` (it draws only from the generator it is given); the chains
run through the common runner of :mod:`hdbayes.mcmc` (:class:`~hdbayes.base.MCMCMixin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
from scipy.special import logit
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from hdbayes._numba import jit
from hdbayes._validation import check_finite_output, validate_input
from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, MCMCMixin
from hdbayes.mcmc.chains import ChainDraws
from hdbayes.spike_slab.ep import single_threaded_blas
from hdbayes.spike_slab.model import MODEL_PARAMETER_CONSTRAINTS, OVERFLOW_CAUSE, prepare_fit

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike, RandomStateLike

__all__ = ["CollapsedGibbsChain", "GroupSpikeSlabGibbs", "collapsed_group_sweep"]


@jit
def collapsed_group_sweep(x_by_group, y, starts, ends, prior_log_odds, slab_variance, c_inverse, z, order, uniforms,
                          conditional_probabilities):  # fmt: skip
    """One sweep of collapsed Gibbs updates of the group indicators (docs/spike_slab.md), compiled.

    Parameters
    ----------
    x_by_group : ndarray of shape (d, n)
        Xᵀ with the features sorted by group (rows ``starts[g]:ends[g]`` are group g).
    y : ndarray of shape (n,)
    starts, ends : ndarray of int64, shape (G,)
    prior_log_odds, slab_variance : ndarray of shape (G,)
    c_inverse : ndarray of shape (n, n)
        ``C_z⁻¹`` for the current z; the updated matrix is returned.
    z : ndarray of bool, shape (G,)
        Updated in place.
    order : ndarray of int64
        The visiting order.
    uniforms : ndarray of shape (len(order),)
    conditional_probabilities : ndarray of shape (G,)
        Receives ``P(z_g = 1 | z_−g, y)`` of each visited group.

    Returns
    -------
    ndarray of shape (n, n)
    """
    for k in range(order.shape[0]):
        g = order[k]
        xg = x_by_group[starts[g] : ends[g]]
        size = xg.shape[0]
        v = slab_variance[g]
        if z[g]:  # remove the group: C_{−g}⁻¹ = C⁻¹ + Bᵀ (I/v − X_gᵀC⁻¹X_g)⁻¹ B, B = X_gᵀ C⁻¹
            bt = xg @ c_inverse
            m = np.eye(size) / v - bt @ xg.T
            c_inverse = c_inverse + bt.T @ np.linalg.solve(m, bt)
            c_inverse = 0.5 * (c_inverse + c_inverse.T)
        at = xg @ c_inverse
        s = at @ xg.T
        b = at @ y
        s = 0.5 * (s + s.T)
        p = s + np.eye(size) / v
        chol = np.linalg.cholesky(p)
        solution = np.linalg.solve(p, b)
        log_det = 2.0 * np.sum(np.log(np.diag(chol))) + size * np.log(v)
        log_odds = prior_log_odds[g] + 0.5 * (b @ solution) - 0.5 * log_det
        probability = 1.0 / (1.0 + np.exp(-log_odds))
        conditional_probabilities[g] = probability
        z[g] = uniforms[k] < probability
        if z[g]:  # add the group: C⁻¹ = C_{−g}⁻¹ − Aᵀ (S + I/v)⁻¹ A
            c_inverse = c_inverse - at.T @ np.linalg.solve(p, at)
            c_inverse = 0.5 * (c_inverse + c_inverse.T)
    return c_inverse


def _annealed_noise(noise_variance, target_variance, sweep, n_annealed):
    """Noise variance of a burn-in sweep: geometric from var(y) down to σ0² over the first half of burn-in.

    Starting with a large noise variance lets the chain find the well-supported groups before the
    posterior becomes sharply peaked (a random or empty start at small σ0² gets stuck with many
    spurious groups). Only burn-in sweeps are annealed, so the saved draws target the posterior.
    """
    if sweep >= n_annealed or target_variance <= noise_variance:
        return noise_variance
    return noise_variance * (target_variance / noise_variance) ** (1.0 - sweep / n_annealed)


def _c_inverse(X, z_features, slab_variance_features, noise_variance):
    n = X.shape[0]
    xa = X[:, z_features] * np.sqrt(slab_variance_features[z_features])
    C = xa @ xa.T
    C[np.diag_indices(n)] += noise_variance
    chol = scipy.linalg.cho_factor(C, lower=True, check_finite=False)
    return np.ascontiguousarray(scipy.linalg.cho_solve(chol, np.eye(n), check_finite=False))


class CollapsedGibbsChain:
    """One chain of the collapsed Gibbs sampler for a :class:`~hdbayes.spike_slab.model.FitProblem`.

    Called as ``chain(rng, schedule, advance)`` (the chain function of :func:`hdbayes.mcmc.run_chains`):
    starts from the empty model, anneals the noise variance over the first half of burn-in
    (:func:`_annealed_noise`), runs ``schedule.n_iter`` sweeps drawing only from ``rng`` (the draws of
    w from a stream spawned from it, so that the sweeps of z do not depend on which are saved), and returns
    the saved draws of ``z``, ``coef`` (w), ``n_active_groups``, the Rao–Blackwellisation terms
    ``inclusion_probability`` (P(z_g = 1 | z_−g, y) at g's visit) and ``coef_mean`` (E[w | z, y]),
    and the burn-in values of ``z`` as warm-up.
    """

    def __init__(self, problem):
        self.problem = problem
        codes = problem.groups
        sizes = np.bincount(codes, minlength=problem.n_groups)
        self.ends = np.cumsum(sizes).astype(np.int64)
        self.starts = (self.ends - sizes).astype(np.int64)
        self.x_by_group = np.ascontiguousarray(problem.X[:, np.argsort(codes, kind="stable")].T)
        self.prior_log_odds = logit(problem.prior_inclusion)
        self.slab_variance_features = problem.slab_variance[codes]

    def __call__(self, rng, schedule, advance):
        p = self.problem
        (n, d), n_groups, n_saved = p.X.shape, p.n_groups, schedule.n_saved
        z = np.zeros(n_groups, dtype=bool)  # start from the empty model (see _annealed_noise)
        conditional = np.zeros(n_groups)
        warmup_z = np.zeros((schedule.burn_in, n_groups), dtype=bool)
        z_draws = np.zeros((n_saved, n_groups), dtype=bool)
        probabilities = np.zeros((n_saved, n_groups))
        coef, coef_mean = np.zeros((n_saved, d)), np.zeros((n_saved, d))
        start_variance = float(p.y @ p.y) / n
        coef_rng = rng.spawn(1)[0]  # w's own stream: the z chain is the same whatever is saved (thin)
        for sweep in range(schedule.n_iter):
            noise = _annealed_noise(p.noise_variance, start_variance, sweep, schedule.burn_in // 2)
            c_inverse = _c_inverse(p.X, z[p.groups], self.slab_variance_features, noise)
            order = rng.permutation(n_groups).astype(np.int64)
            collapsed_group_sweep(self.x_by_group, p.y, self.starts, self.ends, self.prior_log_odds, p.slab_variance,
                                  c_inverse, z, order, rng.random(n_groups), conditional)  # fmt: skip
            if sweep < schedule.burn_in:
                warmup_z[sweep] = z
            slot = schedule.slot(sweep)
            if slot >= 0:
                z_draws[slot], probabilities[slot] = z, conditional
                coef_mean[slot], coef[slot] = _coefficients_given_groups(p.X, p.y, z[p.groups],
                                                                         self.slab_variance_features,
                                                                         p.noise_variance, coef_rng)  # fmt: skip
            advance(1)
        posterior = {"z": z_draws, "coef": coef, "n_active_groups": z_draws.sum(axis=1),
                     "inclusion_probability": probabilities, "coef_mean": coef_mean}  # fmt: skip
        return ChainDraws(posterior=posterior, warmup={"z": warmup_z})


class GroupSpikeSlabGibbs(MCMCMixin, RegressorMixin, BaseEstimator):
    """Collapsed Gibbs sampling for linear regression with a group spike-and-slab prior.

    The same model as :class:`~hdbayes.spike_slab.GroupSpikeSlabRegression` (paper §2), sampled
    instead of approximated: the slow but asymptotically exact reference ("GSS with Gibbs
    sampling", Hernández-Lobato et al. 2013, §1).

    Parameters
    ----------
    groups : None, int, array-like of shape (n_features,) or list of index lists, default=None
        Each feature's group, as in :class:`~hdbayes.spike_slab.GroupSpikeSlabRegression`.
    prior_inclusion : float or array-like of shape (n_groups,), default=0.5
        p0,g in (0, 1), the prior probability that group g is used (eq. 4).
    slab_variance : float or array-like of shape (n_groups,), default=1.0
        v_s (or v_{s,g}), the prior variance of an active coefficient (eq. 3, 9).
    noise_variance : float, default=1.0
        σ0², the noise variance (eq. 1).
    fit_intercept : bool, default=True
        Centre X and y; the intercept gets a flat prior.
    n_iter : int, default=1000
        Sweeps per chain, burn-in included.
    burn_in : int, default=200
        Sweeps discarded at the start of each chain (the noise variance is annealed from var(y)
        down to ``noise_variance`` over the first half of them).
    thin : int, default=1
        Keep every ``thin``-th sweep after burn-in; the estimates average the kept sweeps.
    n_chains : int, default=2
        Independent chains, each with its own generator seeded from ``random_state``.
    n_jobs : int or None, default=None
        Chains run at once in threads (None: one after another; −1: all at once). The draws do
        not depend on it.
    random_state : int, Generator or None, default=None
        Seeds the chains' generators.
    progress : bool or None, default=None
        Progress bar (None: only on an interactive terminal).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Rao–Blackwellised posterior mean of w: the average of E[w | z, y] over the saved sweeps.
    intercept_ : float
    group_inclusion_probabilities_ : ndarray of shape (n_groups_,)
        Rao–Blackwellised P(z_g = 1 | y, X): the average of P(z_g = 1 | z_−g, y) over the saved sweeps.
    trace_ : hdbayes.mcmc.Trace
        The saved draws, shaped (chain, draw, ...): ``z`` (bool, per group), ``coef`` (draws of w),
        ``n_active_groups`` (the monitored scalar of :meth:`mcmc_summary`), ``inclusion_probability``
        (per group) and ``coef_mean`` (per feature), the terms the estimates average. ``trace_.warmup``
        holds ``z`` at every burn-in sweep.
    z_samples_ : ndarray of bool, shape (n_chains, n_draws, n_groups_)
        ``trace_["z"]``; n_draws = (n_iter − burn_in) // thin.
    coef_samples_ : ndarray of shape (n_chains, n_draws, n_features)
        ``trace_["coef"]``.
    groups_ : ndarray of int of shape (n_features,)
    n_groups_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.spike_slab import GroupSpikeSlabGibbs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 6))
    >>> y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=30)  # only group 0 (features 0 and 1) matters
    >>> sampler = GroupSpikeSlabGibbs(groups=2, prior_inclusion=0.3, noise_variance=0.01, n_iter=200, burn_in=50,
    ...                               random_state=0, progress=False)
    >>> sampler.fit(X, y).group_inclusion_probabilities_.round(2)
    array([1., 0., 0.])
    >>> sampler.z_samples_.shape, sampler.trace_.warmup["z"].shape  # (chain, draw, group)
    ((2, 150, 3), (2, 50, 3))
    """

    _parameter_constraints = {**MODEL_PARAMETER_CONSTRAINTS, **MCMC_PARAMETER_CONSTRAINTS}

    def __init__(
            self, groups: int | ArrayLike | Sequence[Sequence[int]] | None = None,
            prior_inclusion: float | ArrayLike = 0.5, slab_variance: float | ArrayLike = 1.0,
            noise_variance: float = 1.0, fit_intercept: bool = True, n_iter: int = 1000, burn_in: int = 200,
            thin: int = 1, n_chains: int = 2, n_jobs: int | None = None, random_state: RandomStateLike = None,
            progress: bool | None = None) -> None:  # fmt: skip
        self.groups = groups
        self.prior_inclusion = prior_inclusion
        self.slab_variance = slab_variance
        self.noise_variance = noise_variance
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Run ``n_chains`` chains of ``n_iter`` sweeps and average the saved ones (Rao–Blackwellised).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs (centred when ``fit_intercept``).
        y : array-like of shape (n_samples,)
            Training targets.

        Returns
        -------
        GroupSpikeSlabGibbs
            The fitted estimator (``self``), with ``trace_`` and the estimates computed from it.
        """
        schedule = self._schedule()  # refuses a schedule without draws before any work
        X, y = validate_input(self, X, y, y_numeric=True, dtype=np.float64)
        problem = prepare_fit(X, y, self.groups, self.prior_inclusion, self.slab_variance, self.noise_variance,
                              fit_intercept=self.fit_intercept, feature_names=getattr(self, "feature_names_in_", None))
        dims = {"z": ["group"], "inclusion_probability": ["group"], "coef": ["feature"], "coef_mean": ["feature"]}
        coords = {"group": np.arange(problem.n_groups)}
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            coords["feature"] = list(names)
        with single_threaded_blas():  # n × n and d_g × n products: BLAS threads only cost here
            # a saved draw: z (a byte per group), the inclusion probabilities, w and E[w | z, y], and a count
            n_groups, d = problem.n_groups, problem.X.shape[1]
            trace = self._run_chains(CollapsedGibbsChain(problem), desc="Gibbs sweeps", schedule=schedule,
                                     trace_options={"dims": dims, "coords": coords,
                                                    "monitored": ("n_active_groups",)},
                                     draw_bytes=9 * n_groups + 16 * d + 8, warmup_bytes=n_groups)  # fmt: skip
        coef = trace["coef_mean"].mean(axis=(0, 1))
        probabilities = trace["inclusion_probability"].mean(axis=(0, 1))
        check_finite_output("the posterior means", coef, cause=OVERFLOW_CAUSE)
        check_finite_output("the group inclusion probabilities", probabilities, cause=OVERFLOW_CAUSE)
        self.coef_ = coef
        self.intercept_ = problem.intercept(coef)
        self.group_inclusion_probabilities_ = probabilities
        self.z_samples_ = trace["z"]
        self.coef_samples_ = trace["coef"]
        self.groups_ = problem.groups
        self.n_groups_ = problem.n_groups
        return self

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Posterior predictive mean ``X E[w | y] + intercept``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The cases to predict.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictive means.
        """
        check_is_fitted(self)
        X = validate_input(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


def _coefficients_given_groups(X, y, active_features, slab_variance, noise_variance, rng):
    """``E[w | z, y]`` and one draw of ``w | z, y`` (inactive coefficients exactly 0)."""
    d = X.shape[1]
    mean, draw = np.zeros(d), np.zeros(d)
    active = np.flatnonzero(active_features)
    if active.size == 0:
        return mean, draw
    xa = X[:, active]
    precision = xa.T @ xa / noise_variance + np.diag(1.0 / slab_variance[active])
    chol = scipy.linalg.cholesky(precision, lower=True, check_finite=False)
    mean[active] = scipy.linalg.cho_solve((chol, True), xa.T @ y / noise_variance, check_finite=False)
    noise = scipy.linalg.solve_triangular(chol, rng.standard_normal(active.size), lower=True, trans="T",
                                          check_finite=False)  # fmt: skip
    draw[active] = mean[active] + noise
    return mean, draw
