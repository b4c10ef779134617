"""A collapsed Gibbs sampler for the group spike-and-slab model (spec §6.2).

The coefficients are integrated out: ``P(y | z) = N(y | 0, C_z)``, ``C_z = σ0² I + Σ_{g: z_g=1} v_{s,g} X_g X_gᵀ``.
Each sweep visits the groups in random order and samples z_g from

    log P(z_g=1 | z_−g, y) − log P(z_g=0 | z_−g, y)
        = logit p0,g + ½ bᵀ(S + I/v_s)⁻¹ b − ½ log|I + v_s S|,

with ``S = X_gᵀ C_{−g}⁻¹ X_g`` and ``b = X_gᵀ C_{−g}⁻¹ y`` (the eigen-form of spec §6.2 written with a
Cholesky factor). ``C⁻¹`` is kept up to date with rank-d_g Woodbury up- and down-dates (O(n² d_g) per
group, O(n² d) per sweep) and recomputed from scratch after every sweep to stop round-off drift.
After each sweep w is drawn from ``w_A | z, y ~ N(Σ X_Aᵀy/σ0², Σ)``, ``Σ = (X_AᵀX_A/σ0² + diag(1/v_A))⁻¹``.
Estimates are Rao–Blackwellised: ``P(z_g = 1 | y)`` averages the conditional probabilities and the
posterior mean averages ``E[w | z, y]`` over the saved sweeps.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.special import logit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from hdbayes._numba import jit
from hdbayes._validation import check_count, check_finite_output, check_generator, validate_input
from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab.ep import single_threaded_blas
from hdbayes.spike_slab.model import center_data, check_data_magnitudes, check_model_parameters

__all__ = ["GroupSpikeSlabGibbs", "collapsed_group_sweep"]


@jit(nogil=False)
def collapsed_group_sweep(x_by_group, y, starts, ends, prior_log_odds, slab_variance, c_inverse, z, order, uniforms,
                          conditional_probabilities):  # fmt: skip
    """One sweep of collapsed Gibbs updates of the group indicators (spec §6.2), compiled.

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


class GroupSpikeSlabGibbs(RegressorMixin, BaseEstimator):
    """Collapsed Gibbs sampling for linear regression with a group spike-and-slab prior.

    The same model as :class:`~hdbayes.spike_slab.GroupSpikeSlabRegression` (spec §1), sampled
    instead of approximated: the slow but asymptotically exact reference ("GSS with Gibbs
    sampling", spec §6.2).

    Parameters
    ----------
    groups, prior_inclusion, slab_variance, noise_variance, fit_intercept
        As in :class:`~hdbayes.spike_slab.GroupSpikeSlabRegression`.
    n_iter : int, default=1000
        Sweeps per chain, burn-in included.
    burn_in : int, default=200
        Sweeps discarded at the start of each chain.
    n_chains : int, default=2
    random_state : int, Generator or None
    progress : bool or None
        Progress bar (None: only on a terminal).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Rao–Blackwellised posterior mean of w.
    intercept_ : float
    group_inclusion_probabilities_ : ndarray of shape (n_groups_,)
        Rao–Blackwellised P(z_g = 1 | y, X).
    z_samples_ : ndarray of bool, shape (n_chains, n_iter − burn_in, n_groups_)
    coef_samples_ : ndarray of shape (n_chains, n_iter − burn_in, n_features)
        Draws of w.
    z_trace_ : ndarray of bool, shape (n_chains, n_iter, n_groups_)
        Every sweep, burn-in included.
    groups_, n_groups_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.spike_slab import GroupSpikeSlabGibbs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 6)); y = X[:, :2] @ [1.0, -1.0] + 0.1 * rng.normal(size=30)
    >>> sampler = GroupSpikeSlabGibbs(groups=2, prior_inclusion=0.3, noise_variance=0.01, n_iter=200, burn_in=50,
    ...                               random_state=0, progress=False).fit(X, y)
    >>> sampler.group_inclusion_probabilities_.round(2)
    array([1., 0., 0.])
    """

    def __init__(self, groups=None, prior_inclusion=0.5, slab_variance=1.0, noise_variance=1.0, fit_intercept=True,
                 n_iter=1000, burn_in=200, n_chains=2, random_state=None, progress=None):  # fmt: skip
        self.groups = groups
        self.prior_inclusion = prior_inclusion
        self.slab_variance = slab_variance
        self.noise_variance = noise_variance
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.n_chains = n_chains
        self.random_state = random_state
        self.progress = progress

    def fit(self, X, y):
        """Run the chains.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_input(self, X, y, y_numeric=True, dtype=np.float64)
        codes, n_groups, prior_inclusion, slab_variance, noise_variance = check_model_parameters(
            self.groups, self.prior_inclusion, self.slab_variance, self.noise_variance, X.shape[1]
        )
        n_iter = check_count("n_iter", self.n_iter)
        burn_in = check_count("burn_in", self.burn_in, minimum=0)
        if burn_in >= n_iter:
            raise InputValueError(f"burn_in={burn_in} must be smaller than n_iter={n_iter}")
        n_chains = check_count("n_chains", self.n_chains)
        rng = check_generator(self.random_state)
        X_raw, y_raw = X, y
        X, y, x_offset, y_offset = center_data(X, y, self.fit_intercept)
        check_data_magnitudes(X_raw, y_raw, X, y, getattr(self, "feature_names_in_", None))
        n, d = X.shape

        permutation = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes, minlength=n_groups)
        ends = np.cumsum(sizes).astype(np.int64)
        starts = (ends - sizes).astype(np.int64)
        x_by_group = np.ascontiguousarray(X[:, permutation].T)
        prior_log_odds = logit(prior_inclusion)
        vs_features = slab_variance[codes]
        n_saved = n_iter - burn_in
        z_trace = np.zeros((n_chains, n_iter, n_groups), dtype=bool)
        coef_samples = np.zeros((n_chains, n_saved, d))
        probability_sum = np.zeros(n_groups)
        mean_sum = np.zeros(d)
        conditional = np.zeros(n_groups)
        disable = None if self.progress is None else not self.progress
        bar = tqdm(total=n_chains * n_iter, desc="Gibbs sweeps", disable=disable)
        with single_threaded_blas():  # n × n and d_g × n products: BLAS threads only cost here
            for chain in range(n_chains):
                z = np.zeros(n_groups, dtype=bool)  # start from the empty model (see _annealed_noise)
                for sweep in range(n_iter):
                    noise = _annealed_noise(noise_variance, float(y @ y) / n, sweep, burn_in // 2)
                    c_inverse = _c_inverse(X, z[codes], vs_features, noise)
                    order = rng.permutation(n_groups).astype(np.int64)
                    collapsed_group_sweep(x_by_group, y, starts, ends, prior_log_odds, slab_variance, c_inverse, z,
                                          order, rng.random(n_groups), conditional)  # fmt: skip
                    z_trace[chain, sweep] = z
                    if sweep >= burn_in:
                        mean, draw = _coefficients_given_groups(X, y, z[codes], vs_features, noise_variance, rng)
                        mean_sum += mean
                        probability_sum += conditional
                        coef_samples[chain, sweep - burn_in] = draw
                    bar.update()
        bar.close()
        total = n_chains * n_saved
        cause = "X or y is too large for the hyperparameters; rescale them"
        check_finite_output("the posterior means", mean_sum, cause=cause)
        check_finite_output("the group inclusion probabilities", probability_sum, cause=cause)
        self.coef_ = mean_sum / total
        self.intercept_ = float(y_offset - x_offset @ self.coef_)
        self.group_inclusion_probabilities_ = probability_sum / total
        self.z_trace_ = z_trace
        self.z_samples_ = z_trace[:, burn_in:]
        self.coef_samples_ = coef_samples
        self.groups_ = codes
        self.n_groups_ = n_groups
        return self

    def predict(self, X):
        """Posterior predictive mean ``X E[w | y] + intercept``."""
        check_is_fitted(self)
        X = validate_input(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_

    def to_inference_data(self):
        """The draws as an ArviZ ``InferenceData``: ``posterior`` holds ``z`` (per group, as 0/1)
        and ``coef`` (w), ``warmup_posterior`` the burn-in values of ``z``."""
        import arviz as az

        check_is_fitted(self)
        burn_in = self.z_trace_.shape[1] - self.z_samples_.shape[1]
        return az.from_dict(
            posterior={"z": self.z_samples_.astype(np.int8), "coef": self.coef_samples_},
            warmup_posterior={"z": self.z_trace_[:, :burn_in].astype(np.int8)} if burn_in else None,
            save_warmup=burn_in > 0,
            dims={"z": ["group"], "coef": ["feature"]},
        )


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
