"""The Bayesian Gaussian classifier with F-statistic selection and bias correction (Li 2009; docs/gaussian.md).

Classes y ∈ {1..G}, continuous features independent given the class, x_j | y = g ~ N(μ_j^(g), variance),
the class probabilities ψ ~ Dirichlet(c, …, c). The k features with the largest F-statistics are kept; the
correction multiplies the posterior by A^{p−k}, the probability that the p − k others fall below the
threshold. How the class means spread and how the variances are shared is the **variant**, one module each
with its prior, its adjustment factor and its chain: :mod:`.shared` (one τ^μ, Li 2009), :mod:`.per_feature`
(one spread per feature, Li 2012) and :mod:`.per_class` (one variance per class and feature). The estimator
looks its variant up, takes the class counts, sums and sums of squares from
:mod:`hdbayes.statistics.gaussian_moments` and runs the variant's chain through :func:`hdbayes.mcmc.run_chains`.

The data are used as given. The paper notes that the prior mean of ν can be 0
"without loss of generality"; centring the features by their *training* means would
not be harmless: it uses the data twice (the centred class means lose a degree of
freedom that the model does not know about) and biases τ^μ upwards by up to a factor
G/(G − 1) — the simulation-based calibration test in ``tests/test_gaussian.py``
detects it. With raw data far from 0, τ^ν simply becomes small.
"""

from __future__ import annotations

import copy
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._parameters import NamedParameterObjects
from hdbayes._validation import (
    check_finite_output,
    check_generator,
    feature_label,
    overflow_error,
    plain_value,
)
from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, MCMCMixin
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc.chains import chain_seeds
from hdbayes.selection import f_statistic
from hdbayes.selection_bias._base import SELECTION_PARAMETER_CONSTRAINTS, class_log_prior
from hdbayes.selection_bias._statistics_classifier import StatisticsClassifier
from hdbayes.selection_bias.gaussian._variant import GaussianVariant
from hdbayes.selection_bias.gaussian.per_class import PerClassVariance
from hdbayes.selection_bias.gaussian.per_feature import PerFeatureSpread
from hdbayes.selection_bias.gaussian.predict import (
    dense_finite_chunk,
    log_class_numerators,
    rao_blackwell_log_class_numerators,
)
from hdbayes.selection_bias.gaussian.shared import SharedSpread
from hdbayes.statistics.gaussian_moments import GaussianClassMoments, class_scatter, class_statistics

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike

__all__ = ["VARIANTS", "BiasCorrectedGaussianClassifier"]

#: The variants by name: ``variant="per-class"`` is ``variant=PerClassVariance()``.
VARIANTS = {cls.name: cls for cls in (SharedSpread, PerFeatureSpread, PerClassVariance)}


class BiasCorrectedGaussianClassifier(NamedParameterObjects, MCMCMixin, StatisticsClassifier):
    """Bayesian Gaussian classifier with F-statistic selection and bias correction.

    ``fit`` receives all p candidate features, keeps the ``n_features_to_select`` with
    the largest F-statistics (or those above ``threshold``), and samples the posterior
    of the Gaussian model of Li (2009) on them by MCMC. With ``correct=True`` the
    posterior also conditions on the p − k discarded features having F ≤ γ, which
    makes the predictive probabilities calibrated.

    Parameters
    ----------
    n_features_to_select : int, optional
        k. With neither ``n_features_to_select`` nor ``threshold``, all features are used.
    threshold : float, optional
        Keep features with F > threshold.
    correct : bool, default=True
        Whether to condition on the discarded features' F ≤ γ (the correction for selection bias).
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        c, the Dirichlet(c, …, c) prior of the class probabilities ψ (one c per class,
        in the order of ``classes_``, when an array).
    variant : {"shared", "per-feature", "per-class"} or variant object, default="shared"
        The model of the class means' spread and of the variances, with its priors and sampler tuning:

        - ``"shared"``, :class:`~hdbayes.selection_bias.gaussian.SharedSpread`: one τ^μ for all features and
          τ_j^x with a fixed prior (Li 2009); the correction's factor on a Monte Carlo pool.
        - ``"per-feature"``, :class:`~hdbayes.selection_bias.gaussian.PerFeatureSpread`: the published model
          (Li 2012, BCBCSF; docs/gaussian.md eq. P1–P17), one spread and one variance per feature around global
          scales; the factor exact by quadrature.
        - ``"per-class"``, :class:`~hdbayes.selection_bias.gaussian.PerClassVariance`: the per-feature model
          with one variance per class and feature (eq. P18–P41), α2_x learned by default, class scales.

        A string is the variant with its defaults; an object sets its fields (``SharedSpread(alpha_x=2.0,
        w_x=0.3)``; in a grid search ``variant__alpha_x``). The variant used is ``variant_``.
    n_mc : int, optional
        Size of the fixed pool of the adjustment factor: for the shared spread the Monte Carlo pool of
        class means and precisions (None: 1000, the paper's); for the per-class variance the quasi-Monte
        Carlo pool of class-variance ratios, rounded up to a power of 2 (None: 512, whose error is measured in
        docs/gaussian.md). The per-feature factor is exact and uses none.
    predictive : {"rao-blackwell", "samples"}, default="rao-blackwell"
        How P(x* | class, training data) is estimated from the draws:
        ``"samples"`` averages ∏_j N(x*_j; μ_j^(g), 1/τ_j^x) over the sampled class
        means, as in the paper (eq. 15); ``"rao-blackwell"`` averages the same
        densities with μ integrated out given the other parameters of each draw
        (:func:`~hdbayes.selection_bias.gaussian.rao_blackwell_log_class_numerators`). Both estimate the same
        probabilities; the second has far smaller Monte Carlo error when many
        features are kept (with all 4000 features of the paper's simulation: error
        rate 0.038 instead of 0.122, and calibrated).
    n_iter, burn_in, thin : int, default=6000, 750, 15
        Gibbs iterations per chain; the draws after ``burn_in``, every ``thin``-th, are
        used (350 per chain with the defaults).
    n_chains : int, default=1
        Independent chains (R-hat in :meth:`mcmc_summary` needs at least two).
    n_jobs : int, optional
        Chains in parallel (threads; the sampler releases the GIL). Results do not
        depend on ``n_jobs``.
    random_state : int, Generator, RandomState or None
        Seeds tie-breaking in the selection, the adjustment pool and the chains.
    progress : bool, optional
        Progress bar over the iterations (None: only on an interactive terminal).

    Attributes
    ----------
    classes_ : ndarray of shape (G,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.
    variant_ : SharedSpread, PerFeatureSpread or PerClassVariance
        The variant of the fit (``variant`` as an object).
    selection_ : hdbayes.selection.Selection
    selected_features_ : ndarray of shape (k,)
    threshold_ : float
        γ, the F-statistic threshold of the selection.
    trace_ : hdbayes.mcmc.Trace
        The post-burn-in draws, shaped (chain, draw, ...): ``mu`` (…, G, k), ``tau_x``
        and ``nu`` (…, k), ``log_tau_mu`` and ``log_tau_nu`` (the monitored scalars of
        :meth:`mcmc_summary`); ``trace_.warmup`` holds log τ^μ and log τ^ν at every
        burn-in iteration; ``trace_.sample_stats["acceptance_rate"]`` the Metropolis
        acceptance rate since the previous draw. With the per-feature spread: ``mu`` (…, G, k),
        ``w_x``, ``w_mu`` and ``nu`` (…, k), monitored ``log_s_mu``, ``log_s_x`` and ``log_tau_nu``;
        with the per-class variance also, ``w_x`` is (…, G, k) (the class variances w_gj) and
        ``v`` (…, k) holds the features' variance levels v_j.
    acceptance_rate_ : ndarray of shape (n_chains,)
        Acceptance rate of the Metropolis steps after burn-in: on log τ^μ with the shared
        spread (0 when there are none: uncorrected, or nothing discarded); on both scales
        log s_μ and log s_x with the per-feature spread and the per-class variance, corrected or not.
    class_counts_, class_sums_ : ndarray of shape (G,), (G, k)
        Training counts and sums of the selected features (for the Rao–Blackwellised
        predictive).
    adjustment_ : object or None
        The adjustment factor A of the correction (that of the variant's module: ``GaussianAdjustment``,
        ``PerFeatureGaussianAdjustment``, ``PerClassVarianceAdjustment`` or ``ClassVarianceGridAdjustment``);
        None when uncorrected or when no feature is discarded.
    statistics_ : hdbayes.statistics.GaussianClassMoments or None
        Per-class counts, means and centred sums of squares of all p training features, which
        :meth:`partial_fit` continues from; None when values near the largest double make them
        overflow.
    class_log_prior_ : ndarray of shape (G,)
        log (n_g + c_g)/(n + Σ c), the Pólya-urn predictive of the class.
    class_scale_ : ndarray of shape (G,)
        The class scales s_g of the fit (the per-class variance only; all 1 with
        ``class_scale="equal"``; geometric mean 1 for ``"plug-in"``).

    Notes
    -----
    The training data: X holds the continuous candidate features (finite), y at least two classes, each with
    at least two cases. Constant features are allowed: their F is 0, they are discarded and count among the
    p − k discarded features, as the model of the unfloored values says (docs/gaussian.md, "Constant
    features"). Only if the selection reaches them (γ = 0) does the selection's ``UserWarning`` say so
    (features with F = 0 kept to make up k); the correction then uses its γ → 0⁺ limit
    (:class:`~hdbayes.selection_bias.gaussian.GaussianAdjustment`). A kept feature whose sums of squares
    overflow raises an ``InputValueError``.

    The model fits from the per-class moments of every feature
    (:class:`hdbayes.statistics.GaussianClassMoments`, ``statistics_``), so it has the five paths of
    :class:`~hdbayes.selection_bias._statistics_classifier.StatisticsClassifier`: every path computes F,
    the selection and the selected features' class sums and sums of squares from the moments, and X is
    read once. ``fit`` in memory is ``fit_statistics`` on the moments of X, bit for bit. ``fit`` on a
    ``dask.array`` X (dense or ``scipy.sparse`` chunks, any chunking) summarises it on the workers and
    only the (G, p) moments reach this process; ``partial_fit`` merges the moments of the batches. Merged
    moments differ from those of the whole X in the last bits, so these draws are those of the in-memory
    fit up to rounding (F agrees to about 1e-12, so only a near-tie at the k-th feature could select
    differently). ``partial_fit`` only accumulates the moments until every class has two cases (the
    model is not fitted until then). Values so large that the moments overflow (sums of squares beyond
    the largest double) are fitted from X itself, F rescaling such columns, so that a huge discarded
    feature does no harm; ``statistics_`` is then None and ``partial_fit`` cannot continue that fit.

    Examples
    --------
    >>> from hdbayes import BiasCorrectedGaussianClassifier
    >>> from hdbayes.datasets import simulate_gaussian
    >>> data = simulate_gaussian(n_classes=3, n_features=200, random_state=0)
    >>> model = BiasCorrectedGaussianClassifier(
    ...     n_features_to_select=10, n_iter=600, burn_in=100, thin=5, n_chains=2, random_state=0
    ... ).fit(data.X, data.y)
    >>> model.predict_proba(data.X_test[:2]).shape
    (2, 3)
    >>> model.trace_["mu"].shape  # (chain, draw, class, feature)
    (2, 100, 3, 10)
    >>> sorted(model.mcmc_summary())
    ['log_tau_mu', 'log_tau_nu']
    """

    _named_parameter_objects = {"variant": VARIANTS}
    _parameter_constraints = {
        **SELECTION_PARAMETER_CONSTRAINTS,
        "variant": [StrOptions(set(VARIANTS)), GaussianVariant],
        "n_mc": [Interval(Integral, 1, None, closed="left"), None],
        "predictive": [StrOptions({"rao-blackwell", "samples"})],
        **MCMC_PARAMETER_CONSTRAINTS,
    }
    _statistics_type = GaussianClassMoments
    _min_class_count = 2  # the model needs two cases of every class
    _min_samples = 3

    def __init__(
        self,
        n_features_to_select: int | None = None,
        *,
        threshold: float | None = None,
        correct: bool = True,
        class_pseudo_count: float | ArrayLike = 1.0,
        variant: Literal["shared", "per-feature", "per-class"] | GaussianVariant = "shared",
        n_mc: int | None = None,
        predictive: Literal["rao-blackwell", "samples"] = "rao-blackwell",
        n_iter: int = 6000,
        burn_in: int = 750,
        thin: int = 15,
        n_chains: int = 1,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        progress: bool | None = None,
    ) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.variant = variant
        self.n_mc = n_mc
        self.predictive = predictive
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    # -- the hooks of StatisticsClassifier ------------------------------------------------------------------
    def _check_params(self):
        self._parameter_object("variant")
        self._schedule()

    def _check_mergeable(self, path):
        if path == "partial_fit" and "statistics_" in self.__dict__ and self.statistics_ is None:
            raise InputValueError(
                "partial_fit cannot continue this fit: the per-class sums of squares of its data overflow (values "
                "near the largest double); rescale the features, or start again with fit"
            )

    def _training_check_kwargs(self):
        return {"dtype": "numeric", "ensure_all_finite": True}

    def _validate_training_data(self, X, y):
        self.__dict__.pop("statistics_", None)  # a fit that fails is not continued by partial_fit
        X, codes = self._validate_classification_data(X, y, targets=True, ensure_all_finite=True, ensure_min_samples=3)
        self._checked_class_counts(np.bincount(codes, minlength=self.classes_.shape[0]))
        return X, codes

    def _statistics_of(self, X, codes):
        return GaussianClassMoments._from_checked(X, codes, self.classes_, getattr(self, "feature_names_in_", None))

    def _dask_statistics(self, X, y):
        moments = GaussianClassMoments.from_dask(X, y)
        return moments, moments.classes

    def _chunk_check(self, selected):
        return dense_finite_chunk, {}

    def _fit_in_memory(self, X, codes):
        """``fit`` in memory: from the moments of X alone, as ``fit_statistics`` and the dask fit (X is read once,
        by :mod:`hdbayes.statistics`); only values so large that the moments overflow take the route through X."""
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                moments = self._statistics_of(X, codes)
        except InputValueError:
            return self._fit_beyond_moments(X, codes)
        return self._fit_statistics(moments)

    def _fit_beyond_moments(self, X, codes):
        """``fit`` on values near the largest double, whose per-class sums of squares overflow: F from X (it
        rescales such columns) and the sampler's sums from the kept columns, so that a huge feature the selection
        discards is unused; ``statistics_`` is None (``partial_fit`` cannot continue such a fit)."""
        self.statistics_ = None
        variant, schedule = self._parameter_object("variant"), self._schedule()
        counts = np.bincount(codes, minlength=self.classes_.shape[0])
        rng = check_generator(self.random_state)
        selection = self._select_features(f_statistic(X, codes), "f", rng)
        scatter = class_scatter(X, codes, self.classes_.shape[0]) if variant.needs_scatter() else None
        X_kept = X[:, selection.indices]
        with np.errstate(over="ignore", invalid="ignore"):
            class_sizes, sums, squares = class_statistics(X_kept, codes, self.classes_.shape[0])
        self._check_kept_magnitudes(selection.indices, sums, squares, X_kept)
        return self._sample(variant, class_sizes, sums, squares, counts, selection, rng, schedule, scatter)

    def _fit_from_statistics(self, moments):
        """Selection and sampler from per-class moments alone (``partial_fit``, ``fit_statistics``)."""
        variant, schedule = self._parameter_object("variant"), self._schedule()
        counts, rng, selection = self._select_from_moments(moments)
        kept = selection.indices
        class_sizes, sums, squares = moments.class_sums(kept)
        self._check_kept_magnitudes(kept, sums, squares)
        return self._sample(variant, class_sizes, sums, squares, counts, selection, rng, schedule, moments.scatter)

    # -- the model -----------------------------------------------------------------------------------------
    def _select_from_moments(self, moments):
        """(class sizes, the fit's generator, the selection by F) from per-class moments (dask, partial_fit)."""
        counts = self._checked_class_counts(moments.class_counts)
        rng = check_generator(self.random_state)
        return counts, rng, self._select_features(moments.f_statistic(), "f", rng)

    def _checked_class_counts(self, counts):
        counts = np.asarray(counts)
        if counts.min() < 2:
            label = self.classes_[np.argmin(counts)]
            raise InputValueError(f"class {plain_value(label)} has {counts.min()} case; every class needs at least two")
        return counts

    def _sample(self, variant, class_sizes, sums, squares, counts, selection, rng, schedule, scatter):
        """The variant's chains on the selected features' class sizes, sums and sums of squares."""
        log_prior = class_log_prior(counts, self.class_pseudo_count)  # checks class_pseudo_count before the chains
        model = variant.model(
            class_sizes, sums, squares, threshold=selection.threshold, n_kept=selection.indices.size,
            n_discarded=selection.n_discarded if self.correct else 0, scatter=scatter, classes=self.classes_,
            n_mc=self.n_mc, n_jobs=self.n_jobs, rng=rng,
        )  # fmt: skip
        self.adjustment_ = model.adjustment
        names = getattr(self, "feature_names_in_", None)
        features = selection.indices if names is None else names[selection.indices]
        trace = self._run_chains(
            model.chain, desc="Gaussian Gibbs", seeds=chain_seeds(rng, self.n_chains), schedule=schedule,
            draw_bytes=model.draw_bytes, warmup_bytes=32,
            trace_options={
                "dims": model.dims, "coords": {"class": self.classes_, "feature": features},
                "monitored": model.monitored,
            },
        )  # fmt: skip
        cause = "a kept feature is too large for the model's arithmetic; rescale it"
        for name, values in trace.posterior.items():
            if name != "alpha2_x":  # learned α2_x is ∞ when the classes' variances are equal
                check_finite_output(f"the posterior draws of {name}", values, cause=cause)
        self.variant_ = copy.deepcopy(variant)  # as fitted, whatever set_params does to the parameter later
        self.acceptance_rate_ = trace.sample_stats["acceptance_rate"].mean(axis=1)
        self.class_counts_, self.class_sums_ = class_sizes, sums
        if model.class_scale is None:
            self.__dict__.pop("class_scale_", None)
        else:
            self.class_scale_ = model.class_scale
        self.class_log_prior_ = log_prior
        return self

    def _check_kept_magnitudes(self, kept, sums, squares, X_kept=None):
        """Raise an input error naming a kept feature whose class sums overflow (and its largest row, when its
        values ``X_kept`` are at hand)."""
        bad = np.flatnonzero(~(np.isfinite(sums).all(axis=0) & np.isfinite(squares).all(axis=0)))
        if bad.size:
            label = feature_label(int(kept[bad[0]]), getattr(self, "feature_names_in_", None))
            if X_kept is None:
                raise InputValueError(f"the sum of squares of {label} overflows; rescale the feature")
            raise overflow_error(label, "the sum of squares of its values", X_kept[:, bad[0]])

    def _joint_log_likelihood(self, X):
        return self._selected_joint_log_likelihood(X[:, self.selected_features_])

    def _selected_joint_log_likelihood(self, X_selected, first_row=0):
        trace = self.trace_
        with np.errstate(over="ignore", invalid="ignore"):
            tau_x, tau_mu = self.variant_.precisions(trace)
            if self.predictive == "samples":
                out = log_class_numerators(X_selected, trace.flat("mu"), tau_x, self.class_log_prior_)
            else:
                out = rao_blackwell_log_class_numerators(
                    X_selected, trace.flat("nu"), tau_x, tau_mu, self.class_counts_, self.class_sums_,
                    self.class_log_prior_,
                )  # fmt: skip
        # a class may have probability 0 (−inf); a NaN, a +inf or a row without a finite class is overflow
        bad = np.flatnonzero(np.isnan(out).any(axis=1) | (out == np.inf).any(axis=1) | ~np.isfinite(out).any(axis=1))
        if bad.size:
            i = int(bad[0])
            column = int(np.argmax(np.abs(X_selected[i])))
            j = int(self.selected_features_[column])
            raise InputValueError(
                f"the probability row {first_row + i} is not finite; its value {X_selected[i, column]:g} of "
                f"{feature_label(j, getattr(self, 'feature_names_in_', None))} is too large for double precision; "
                "rescale the feature"
            )
        return out
