"""``GroupSpikeSlabRegression``: a scikit-learn regressor over the EP engine of :mod:`.ep`.

The estimator is thin: it validates input, takes the model from :mod:`.model` (checks, centring
for the intercept and, with ``hyperparameters="evidence"``, the evidence fixed point of docs/spike_slab.md),
runs :func:`~hdbayes.spike_slab.ep.expectation_propagation` and keeps the fitted state — the
posterior summaries and, for predictive standard deviations, the posterior covariance. A pickle
holds no n × d array: the covariance is dropped from it when it refers to the n × d training design
(the Woodbury solver); see :meth:`GroupSpikeSlabRegression.__getstate__`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import check_finite_output, feature_label, validate_input
from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab.ep import evidence_statistics, expectation_propagation
from hdbayes.spike_slab.model import MODEL_PARAMETER_CONSTRAINTS, OVERFLOW_CAUSE, maximise_evidence, prepare_fit

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal, Self

    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["GroupSpikeSlabRegression"]


class GroupSpikeSlabRegression(RegressorMixin, BaseEstimator):
    """Linear regression with a generalised (group) spike-and-slab prior, fitted by EP.

    The model of Hernández-Lobato, Hernández-Lobato & Dupont (2013)
    §1: ``y = Xw + ε`` with ``ε ~ N(0, σ0²)`` (eq. 1); each group of coefficients is either
    exactly zero or drawn from ``N(0, v_s I)`` (eq. 3), with prior inclusion probability p0,g
    (eq. 4). The posterior is approximated by expectation propagation (paper §3): parallel damped
    updates of one Gaussian + Bernoulli site per coefficient, in O(n²d) per iteration when d > n
    (Woodbury, eq. 24–25, never a d × d matrix) and O(d³) when n ≥ d.

    Parameters
    ----------
    groups : None, int, array-like of shape (n_features,) or list of index lists, default=None
        Each feature's group. None: one group per feature (the ordinary spike-and-slab prior); an
        int s: consecutive groups of s features; an array of labels (groups numbered in sorted
        label order); or a list of index lists that partition the features (in list order).
        Overlapping or incomplete groups are an error.
    prior_inclusion : float or array-like of shape (n_groups,), default=0.5
        p0,g in (0, 1), the prior probability that group g is used (eq. 4). One value per group
        encodes prior knowledge about which groups are relevant.
    slab_variance : float or array-like of shape (n_groups,), default=1.0
        v_s (or v_{s,g}), the prior variance of an active coefficient (eq. 3, 9).
    noise_variance : float, default=1.0
        σ0², the noise variance (eq. 1).
    fit_intercept : bool, default=True
        Centre X and y; the intercept gets a flat prior.
    max_iter : int, default=400
        Maximum number of EP iterations of each attempt. An attempt that does not converge is followed
        by three restarts (a lower damping, and negative-variance sites left unchanged); with ``annealing``
        an annealed attempt also runs; the converged attempt of largest evidence is kept (docs/spike_slab.md,
        "Inference"; ``attempt_`` names it). A fit that still does not converge warns
        (``ConvergenceWarning``) and sets ``converged_=False``.
    tol : float, default=1e-4
        Convergence threshold on the change of the posterior means, variances and group
        inclusion probabilities (the paper gives no rule; docs/spike_slab.md).
    damping : float, default=0.9
        Damping ξ, the weight of the new site in each update (paper §3).
    damping_decay : float, default=1.0
        ξ is multiplied by this after every iteration; 1.0 keeps ξ constant, 0.99 is the paper's
        "decreased by 1%" (which can freeze EP before it converges).
    annealing : bool, default=True
        Also run EP at the noise variance σ0² × 10⁴, 10³, 10², 10 in turn, each stage warm-started from the
        last, and then at σ0², and keep it if it converges with a larger evidence than the other attempts
        (issue 29: it reaches accurate fits where the start from the prior stops at a poor fixed point, at a
        few times the cost of one attempt). ``annealing=False`` with ``damping_decay=0.99`` is closest to the
        paper's algorithm (§3; this library's restarts of non-converged fits still run).
    hyperparameters : {"fixed", "evidence"}, default="fixed"
        "evidence": maximise EP's log evidence (eq. 28) over σ0², a common scale of v_s and a
        common shift of logit p0 by fixed-point updates at EP's stationary point (docs/spike_slab.md,
        item 3; warm-started EP), starting from the given values. The paper warns that evidence
        can choose poorly (paper §3.3): tuning by validation with ``GridSearchCV`` is the alternative.
    solver : {"auto", "woodbury", "direct"}, default="auto"
        "auto": "direct" when n ≥ d, "woodbury" otherwise.
    infinite_variance : float, optional
        v_∞ given to sites whose update has a negative variance (paper §3.2); default
        ``100 · max(1, max v_s)``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior means of the coefficients (a model average over the group indicators).
    coef_variance_ : ndarray of shape (n_features,)
        Marginal posterior variances of the coefficients.
    intercept_ : float
    group_inclusion_probabilities_ : ndarray of shape (n_groups_,)
        σ(p_g) ≈ P(z_g = 1 | y, X) (eq. 20).
    group_log_odds_ : ndarray of shape (n_groups_,)
        p_g.
    groups_ : ndarray of int of shape (n_features,)
        g(j), in 0..n_groups_−1.
    n_groups_ : int
    log_evidence_ : float
        EP's approximation of log P(y | X) for the centred data (paper eq. 28, in a stable form).
    n_iter_ : int
        EP iterations of the attempt kept.
    attempt_ : str
        The EP attempt kept: "first", "restart 1"–"restart 3" or "annealed" (see ``max_iter``).
    converged_ : bool
        Whether EP converged (False comes with a ``ConvergenceWarning``).
    prior_inclusion_, slab_variance_ : ndarray of shape (n_groups_,)
        The values used (chosen by evidence if ``hyperparameters="evidence"``).
    noise_variance_ : float
    sites_ : SiteParameters
        The final EP sites (a warm start for :func:`~hdbayes.spike_slab.ep.expectation_propagation`).
    solver_ : str
    n_features_in_ : int

    See Also
    --------
    hdbayes.spike_slab.GroupSpikeSlabGibbs : Gibbs sampling for the same model.
    hdbayes.spike_slab.exact_posterior : Exact enumeration for a few groups.
    sklearn.linear_model.BayesianRidge : Gaussian prior on every coefficient, no selection.
    sklearn.linear_model.ARDRegression : One prior precision per coefficient, no groups.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.spike_slab import GroupSpikeSlabRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 12))
    >>> y = X[:, :3] @ [1.0, -2.0, 1.5] + 0.1 * rng.normal(size=40)
    >>> model = GroupSpikeSlabRegression(groups=3, prior_inclusion=0.25, noise_variance=0.01).fit(X, y)
    >>> model.group_inclusion_probabilities_.round(2)
    array([1., 0., 0., 0.])
    >>> mean, std = model.predict(X[:2], return_std=True)
    >>> bool(np.all(std > 0.1))
    True
    """

    _parameter_constraints = {
        **MODEL_PARAMETER_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, np.inf, closed="neither")],
        "damping": [Interval(Real, 0, 1, closed="right")],
        "damping_decay": [Interval(Real, 0, 1, closed="right")],
        "annealing": ["boolean"],
        "hyperparameters": [StrOptions({"fixed", "evidence"})],
        "solver": [StrOptions({"auto", "woodbury", "direct"})],
        "infinite_variance": [Interval(Real, 0, np.inf, closed="neither"), None],
    }

    def __init__(
            self, groups: int | ArrayLike | Sequence[Sequence[int]] | None = None,
            prior_inclusion: float | ArrayLike = 0.5, slab_variance: float | ArrayLike = 1.0,
            noise_variance: float = 1.0, fit_intercept: bool = True, max_iter: int = 400, tol: float = 1e-4,
            damping: float = 0.9, damping_decay: float = 1.0, annealing: bool = True, hyperparameters: Literal["fixed",
            "evidence"] = "fixed", solver: Literal["auto", "woodbury", "direct"] = "auto",
            infinite_variance: float | None = None) -> None:  # fmt: skip
        self.groups = groups
        self.prior_inclusion = prior_inclusion
        self.slab_variance = slab_variance
        self.noise_variance = noise_variance
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.damping = damping
        self.damping_decay = damping_decay
        self.annealing = annealing
        self.hyperparameters = hyperparameters
        self.solver = solver
        self.infinite_variance = infinite_variance

    def _ep(self, X, y, groups, prior_inclusion, slab_variance, noise_variance, init=None, warn=True):
        return expectation_propagation(
            X, y, groups, prior_inclusion, slab_variance, noise_variance, damping=self.damping,
            damping_decay=self.damping_decay, tol=self.tol, max_iter=self.max_iter,
            infinite_variance=self.infinite_variance, solver=self.solver, init=init, annealing=self.annealing,
            warn=warn,
        )  # fmt: skip

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Fit the EP approximation of the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The design matrix.
        y : array-like of shape (n_samples,)
            The responses.

        Returns
        -------
        self
            The fitted estimator.
        """
        X, y = validate_input(self, X, y, y_numeric=True, dtype=np.float64)
        problem = prepare_fit(X, y, self.groups, self.prior_inclusion, self.slab_variance, self.noise_variance,
                              fit_intercept=self.fit_intercept, feature_names=getattr(self, "feature_names_in_", None))
        X, y, codes = problem.X, problem.y, problem.groups
        prior_inclusion, slab_variance, noise_variance = (problem.prior_inclusion, problem.slab_variance,
                                                          problem.noise_variance)  # fmt: skip
        if self.hyperparameters == "evidence":
            if X.shape[0] < 2:
                raise InputValueError(
                    f"hyperparameters='evidence' needs at least 2 samples, got n_samples = {X.shape[0]}"
                )
            prior_inclusion, slab_variance, noise_variance, result = self._maximise_evidence(
                X, y, codes, prior_inclusion, slab_variance, noise_variance
            )
        else:
            result = self._ep(X, y, codes, prior_inclusion, slab_variance, noise_variance)
        for name, value in (("the posterior means", result.mean), ("the posterior variances", result.variance),
                            ("the group inclusion probabilities", result.group_inclusion_probabilities),
                            ("the log evidence", result.log_evidence)):  # fmt: skip
            check_finite_output(name, value, cause=OVERFLOW_CAUSE)
        self._covariance = result.gaussian.covariance()
        self._X_offset = problem.x_offset
        self.coef_ = result.mean.copy()
        self.coef_variance_ = result.variance.copy()
        self.intercept_ = problem.intercept(self.coef_)
        self.group_log_odds_ = result.group_log_odds.copy()
        self.group_inclusion_probabilities_ = result.group_inclusion_probabilities
        self.groups_ = codes
        self.n_groups_ = problem.n_groups
        self.log_evidence_ = result.log_evidence
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.attempt_ = result.attempt
        self.prior_inclusion_ = prior_inclusion
        self.slab_variance_ = slab_variance
        self.noise_variance_ = noise_variance
        self.sites_ = result.sites
        self.solver_ = result.solver
        return self

    def _maximise_evidence(self, X, y, groups, prior_inclusion, slab_variance, noise_variance):
        """(σ0², a shift of logit p0, a scale of v_s) by the evidence fixed point of :func:`.model.maximise_evidence`.

        Each round runs EP warm-started from the previous sites; the converged fit of largest evidence is kept.
        """

        def fit(p0, vs, noise, init):
            return self._ep(X, y, groups, p0, vs, noise, init=init, warn=False)

        def statistics(result, vs, log_scale):
            return evidence_statistics(result, groups, vs, log_scale)

        p0, vs, noise, result = maximise_evidence(fit, statistics, prior_inclusion, slab_variance, noise_variance)
        if p0 is None:
            failure = (
                f"EP did not converge in max_iter={self.max_iter} iterations (last change {result.last_change:.3g} "
                f"> tol={self.tol:g})"
                if not result.converged
                else "EP's log evidence is not finite (a site's cavity variance is not positive)"
            )
            raise InputValueError(
                f"cannot maximise the evidence: at the starting values (noise_variance={self.noise_variance:g}) "
                f"{failure}; increase max_iter or start from other values of noise_variance / slab_variance"
            )
        return p0, vs, noise, result

    def __getstate__(self):
        """The state to pickle: without the posterior covariance when it refers to the n × d training design.

        On the Woodbury path V is kept as (X, L, ṽ), and X is the (centred) n × d training design
        (400 MB at n = 500, d = 10⁵); any exact representation of V costs about as much. The pickle
        then keeps everything ``predict`` needs for the mean, and ``predict(..., return_std=True)``
        on the unpickled model asks for a refit. On the direct path V is kept as (R, L, ṽ) with
        d × d factors only, and is pickled.
        """
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        if getattr(self, "solver_", None) == "woodbury":
            state["_covariance"] = None
        return state

    def predict(self, X: MatrixLike, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Posterior predictive mean (and standard deviation) at X (eq. 29).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The cases to predict.
        return_std : bool, default=False
            Also return ``sqrt(xᵀVx + σ0²)``, as :class:`sklearn.linear_model.BayesianRidge`.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
            The posterior predictive means.
        y_std : ndarray of shape (n_samples,)
            The posterior predictive standard deviations ``sqrt(xᵀVx + σ0²)``; returned only with
            ``return_std=True``.
        """
        check_is_fitted(self)
        X = validate_input(self, X, reset=False, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            y_mean = X @ self.coef_ + self.intercept_
            self._check_prediction("predicted mean", y_mean, X)
            if not return_std:
                return y_mean
            if self._covariance is None:
                raise InputValueError(
                    "return_std=True needs the posterior covariance, which refers to the n × d training design; "
                    "a GroupSpikeSlabRegression fitted by the Woodbury solver does not carry it in its pickle: "
                    "refit the model to get predictive standard deviations"
                )
            variance = self._covariance.quadratic_form(X - self._X_offset) if X.shape[0] else np.zeros(0)
            y_std = np.sqrt(np.maximum(variance, 0.0) + self.noise_variance_)
        self._check_prediction("predictive standard deviation", y_std, X)
        return y_mean, y_std

    def _check_prediction(self, name, values, X):
        """Raise an input error naming the first row (and its largest column) whose prediction is not finite."""
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = int(bad[0])
            j = int(np.argmax(np.abs(X[i])))
            check_finite_output(
                f"the {name} of row {i}", values[i],
                cause=f"its value {X[i, j]:g} of {feature_label(j, getattr(self, 'feature_names_in_', None))} "
                "is too large for double precision",
            )  # fmt: skip

    def plot_group_inclusion_probabilities(
            self, ax: Axes | None = None, *, true_groups: ArrayLike | None = None) -> Axes:
        """Bar plot of the posterior inclusion probability σ(p_g) of every group.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: new axes).
        true_groups : array-like of int, optional
            Indices of the truly active groups, marked in a second colour.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.
        """
        from hdbayes.spike_slab.plotting import plot_group_inclusion_probabilities

        check_is_fitted(self)
        return plot_group_inclusion_probabilities(self.group_inclusion_probabilities_, ax=ax, true_groups=true_groups)
