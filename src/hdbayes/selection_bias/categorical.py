"""Bayesian naive Bayes for G classes and L-level features with correction for selection bias (issue 15).

The model (docs/categorical_correction.md eq. C1–C6) extends thesis §2.3 (:class:`BiasCorrectedNaiveBayes`):
class probabilities ψ ~ Dirichlet(f), per feature a base distribution θ_j uniform on the simplex, per class
φ_jg ~ Dirichlet(α θ_j), α ~ Inverse-Gamma(a, b). ψ and φ are integrated out (Dirichlet–multinomial), θ by
an exact rule (product Gauss–Jacobi on the simplex, or for many levels the exact moment expansion), α by the
binary model's adaptive rule. Features are selected by Pearson's X² of the class × level table (eq. C7; for
G = L = 2 it is n·COR², the binary model's ranking), and with ``correct=True`` the posterior of α includes
(p − k) log a(α) (eq. C10, :mod:`hdbayes.selection_bias.categorical_adjustment`). No MCMC is involved.
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._validation import (
    check_level_codes,
    check_level_memory,
    validate_input,
)
from hdbayes.selection_bias._base import (
    POSITIVE,
    SELECTION_PARAMETER_CONSTRAINTS,
    check_rule_memory,
    class_log_prior,
)
from hdbayes.selection_bias._statistics_classifier import StatisticsClassifier
from hdbayes.selection_bias.categorical_adjustment import (
    discarded_region,
    pearson_chi_square,
)
from hdbayes.selection_bias.naive_bayes import AlphaPosteriorMixin
from hdbayes.selection_bias.simplex_integrals import categorical_feature_integrals, table_integrals, unique_tables
from hdbayes.statistics.categorical_counts import CategoricalClassCounts, _levels_seen, check_level_chunk

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike

__all__ = ["BiasCorrectedCategoricalNB", "categorical_feature_integrals"]

#: Where the limit on a test case's level codes comes from, for messages.
_FITTED_LEVELS = "the levels of the training data or n_levels"


class BiasCorrectedCategoricalNB(AlphaPosteriorMixin, StatisticsClassifier):
    """Bayesian naive Bayes for G classes and categorical features, with correction for selection bias.

    ``fit`` receives **all p candidate features**, integer-coded levels 0..L−1, selects the
    ``n_features_to_select`` with the largest Pearson X² of their class × level table (or those above
    ``threshold``) and fits the model of docs/categorical_correction.md (eq. C1–C6) on them. With
    ``correct=True`` the posterior of α also conditions on the other p − k features having been discarded
    (the adjustment factor a(α)^{p−k}, eq. C10). For two classes and binary features it is
    :class:`~hdbayes.selection_bias.naive_bayes.BiasCorrectedNaiveBayes` (same selection, same predictions).

    Parameters
    ----------
    n_features_to_select : int, optional
        k. γ is the k-th largest X²; the discarded features are known to lie strictly below γ unless one ties
        with the k-th (ties are broken at random), as in the binary model. With neither this nor
        ``threshold``, all features are used and nothing is corrected.
    threshold : float, optional
        Keep the features with X² > ``threshold``; discarded ones satisfy X² ≤ ``threshold``.
    correct : bool, default=True
        Condition on the discarded features (the factor a(α)^{p−k}).
    class_pseudo_count : float or array-like of shape (G,), default=1.0
        The Dirichlet prior of the class probabilities (one value, or one per class of ``classes_``).
    n_levels : int, optional
        L, the number of levels of every feature (codes 0..L−1); default the largest code in the training
        data plus one (at least 2). A test value ≥ L is refused.
    alpha_shape, alpha_scale : float, default=0.5, 5.0
        Inverse-Gamma(a, b) prior of α.
    alpha_rule : {"adaptive", "midpoint"}, default="adaptive"
        The rule for α, as in :class:`BiasCorrectedNaiveBayes`.
    n_alpha : int, optional
        Points of the α rule (see :class:`BiasCorrectedNaiveBayes`).
    alpha_resolution : float, default=1.0
        ``"adaptive"`` only: the resolution of the α rule.
    n_theta : int, optional
        Nodes per dimension of the simplex rule for θ (eq. C11), for the feature integrals and a(α); default
        ⌈(n + 2)/2⌉, which is exact. Fewer nodes make a cheaper rule whose error is not zero. By default the
        feature integrals use that exact rule while it has at most 20 000 nodes; beyond it, for L = 3, two panel
        rules around the integrand's mode checked against each other to 1e-9 (eq. C14, cost independent of n),
        and for more levels the exact moment expansion.
    random_state : int, numpy.random.Generator, RandomState or None
        Random tie-breaking at the selection boundary.

    Attributes
    ----------
    classes_ : ndarray of shape (G,)
    n_features_in_ : int
    n_levels_ : int
        L.
    class_count_ : ndarray of shape (G,)
        N_g.
    selection_ : hdbayes.selection.Selection
        Indices, γ, p, strictness and every feature's X².
    selected_features_ : ndarray of shape (k,)
    threshold_ : float
        γ (on X²).
    level_counts_ : ndarray of shape (k, G, L)
        I_{jgl} of the selected features.
    alpha_grid_, alpha_log_weights_ : ndarray of shape (K,)
        The α points and the log weights of the α rule in prior mass.
    log_adjustment_ : ndarray of shape (K,)
        (p − k) log a(α_m); zeros when ``correct=False`` or k = p.
    log_integral_ : ndarray of shape (K, k, G, L)
        log Q_j(α_m, g, l) (eq. C5).
    log_marginal_likelihood_ : ndarray of shape (K,)
        Σ_j log ∫ L_j(θ, α_m) dθ over the selected features.
    alpha_posterior_ : ndarray of shape (K,)
    posterior_density_of_log_alpha_ : ndarray of shape (K,)
    class_log_prior_ : ndarray of shape (G,)
        log (f_g + N_g)/(Σ f + n).
    statistics_ : hdbayes.statistics.CategoricalClassCounts
        The class sizes and every feature's class × level table, from which the selection and the model were
        computed; ``partial_fit`` adds to them.

    Notes
    -----
    The fit depends on the data only through ``statistics_``, so ``fit`` on a ``dask.array`` (the tables
    counted chunk by chunk where the chunks live), ``partial_fit`` over batches (with ``n_levels=None``, L is
    the largest code seen so far plus one) and ``fit_statistics`` on tables summed over shards give the model
    of ``fit`` on all the data, bit for bit: the counts are exact integers
    (:class:`~hdbayes.selection_bias._statistics_classifier.StatisticsClassifier`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 10)
    >>> X = rng.integers(0, 3, size=(30, 50))
    >>> X[:, 0] = y
    >>> model = BiasCorrectedCategoricalNB(n_features_to_select=2).fit(X, y)
    >>> int(model.selected_features_[0]), model.predict_proba(X[:2]).shape
    (0, (2, 3))
    """

    def __init__(
        self,
        n_features_to_select: int | None = None,
        *,
        threshold: float | None = None,
        correct: bool = True,
        class_pseudo_count: float | ArrayLike = 1.0,
        n_levels: int | None = None,
        alpha_shape: float = 0.5,
        alpha_scale: float = 5.0,
        alpha_rule: Literal["adaptive", "midpoint"] = "adaptive",
        n_alpha: int | None = None,
        alpha_resolution: float = 1.0,
        n_theta: int | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.n_levels = n_levels
        self.alpha_shape = alpha_shape
        self.alpha_scale = alpha_scale
        self.alpha_rule = alpha_rule
        self.n_alpha = n_alpha
        self.alpha_resolution = alpha_resolution
        self.n_theta = n_theta
        self.random_state = random_state

    _parameter_constraints = {
        **SELECTION_PARAMETER_CONSTRAINTS,
        "n_levels": [Interval(Integral, 2, None, closed="left"), None],
        "alpha_shape": [POSITIVE],
        "alpha_scale": [POSITIVE],
        "alpha_rule": [StrOptions({"adaptive", "midpoint"})],
        "n_alpha": [Interval(Integral, 1, None, closed="left"), None],
        "alpha_resolution": [POSITIVE],
        "n_theta": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
    }

    _statistics_type = CategoricalClassCounts
    _fitted_attribute = "alpha_posterior_"
    _not_for_prediction = (*StatisticsClassifier._not_for_prediction, "posterior_density_of_log_alpha_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # integer level codes, as scikit-learn's CategoricalNB
        tags.input_tags.positive_only = True  # codes are 0, 1, 2, ...
        tags.input_tags.sparse = True  # accepted and kept sparse: the implicit entries are level 0
        return tags

    def _levels(self, X, *, training, columns=0):
        """X as level codes in the smallest unsigned integer type that holds them (uint8 or uint16; sparse input
        stays sparse: its implicit entries are level 0); non-integers, negative codes and (after fit) codes ≥ L
        are refused, naming the feature (``columns``: the global index of X's first column, or of each)."""
        X = X.tocsr() if sp.issparse(X) else np.asarray(X)
        check_level_codes(
            X, self.n_levels if training else self.n_levels_,
            limit_source="n_levels" if training else _FITTED_LEVELS,
            feature_names=getattr(self, "feature_names_in_", None), columns=columns,
        )  # fmt: skip
        values = X.data if sp.issparse(X) else X
        largest = int(values.max(initial=0))  # below 2^16 (checked)
        return X.astype(np.uint8 if largest < 256 else np.uint16, copy=False)

    def _check_params(self):
        self._check_alpha_rule()

    def _check_level_memory(self, n_features, n_classes):
        """Refuse an ``n_levels`` whose class × level tables cannot fit in memory, before they are counted."""
        if self.n_levels is not None:
            check_level_memory(self.n_levels, n_features, n_classes)

    # -- the hooks of StatisticsClassifier ------------------------------------------------------------------
    def _validate_training_data(self, X, y):
        X, codes = self._validate_classification_data(
            X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True, ensure_min_samples=2
        )
        return self._batch_values(X, True), codes

    def _batch_values(self, X, first):
        X = self._levels(X, training=True)
        self._check_level_memory(X.shape[1], self.classes_.shape[0])
        return X

    def _statistics_of(self, X, codes):
        return CategoricalClassCounts._from_checked(
            X, codes, self.classes_, _levels_seen(X, self.n_levels), getattr(self, "feature_names_in_", None)
        )

    def _dask_statistics(self, X, y):
        self._check_level_memory(X.shape[1], 2)  # at least two classes
        statistics = CategoricalClassCounts.from_dask(X, y, n_levels=self.n_levels)
        return statistics, statistics.classes

    def _check_given_statistics(self, statistics, classes):
        # with n_levels set, the tables are widened to it (a level beyond it is refused)
        return statistics if self.n_levels is None else statistics.with_levels(self.n_levels)

    def _chunk_check(self, selected):
        names = getattr(self, "feature_names_in_", None)
        return check_level_chunk, {"columns": selected, "n_levels": self.n_levels_, "feature_names": names,
                                   "limit_source": _FITTED_LEVELS}  # fmt: skip

    def _fit_from_statistics(self, statistics):
        """Selection and model from the class × level tables (every path of ``fit`` comes here)."""
        self.n_levels_ = statistics.n_levels
        self.class_count_ = np.array(statistics.class_counts)
        counts = np.array(statistics.level_counts)  # writable: the compiled X² takes it as is
        sizes = self.class_count_
        log_prior = class_log_prior(sizes, self.class_pseudo_count)  # checked before the α integration
        occurring = (counts.sum(axis=1) > 0).sum(axis=1)
        selection = self._select_features(
            pearson_chi_square(counts, sizes), "chi2", self.random_state, constant=occurring <= 1
        )
        n = int(sizes.sum())
        selected = counts[selection.indices]
        tables, inverse = unique_tables(selected)
        check_rule_memory(self.n_alpha, self.n_theta, n_samples=n, n_tables=tables.shape[0], n_classes=sizes.shape[0],
                          n_levels=self.n_levels_)  # fmt: skip
        region = None
        if self.correct and selection.n_discarded > 0:
            region = discarded_region(
                tuple(int(s) for s in sizes), self.n_levels_, float(selection.threshold), bool(selection.strict),
                self.n_theta,
            )  # fmt: skip

        def evaluate(alpha):
            log_marginal, log_q = table_integrals(tables, sizes, alpha, n_theta=self.n_theta)
            if region is not None:
                log_adjustment = selection.n_discarded * region.log_probability(alpha)
            else:
                log_adjustment = np.zeros(alpha.shape[0])
            return log_q, log_adjustment, log_marginal[:, inverse].sum(axis=1)

        (log_q,) = self._fit_alpha(evaluate)
        self.level_counts_ = selected
        self.log_integral_ = log_q[:, inverse]
        self.class_log_prior_ = log_prior
        return self

    def _validate_for_prediction(self, X):
        X = validate_input(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True)
        return self._levels(X, training=False)

    def _prediction_check_kwargs(self):
        return {"accept_sparse": ("csr", "csc"), "dtype": "numeric", "ensure_all_finite": True}

    def _check_selected_values(self, X, columns):
        return self._levels(X, training=False, columns=columns)

    def _prediction_row_bytes(self, k):
        # the one-hot test values (k·L per row) and the scores of every α point and class with their copies
        n_alpha, _, n_classes, n_levels = self.log_integral_.shape
        return 8 * (k * n_levels + 4 * n_alpha * n_classes)

    def _joint_log_likelihood(self, X):
        """log P(y* = g, x* | train, S) (eq. C6) from all p columns of X (see ``_selected_joint_log_likelihood``)."""
        return self._selected_joint_log_likelihood(X[:, self.selected_features_])

    def _selected_joint_log_likelihood(self, X_selected, first_row=0):
        """log P(y* = g, x* | train, S) (eq. C6): Σ_j log Q_j(α_m, g, x*_j) by one product of the one-hot test
        values of the selected columns with a (k·L) × (K·G) table, then log-sum-exp over the α points."""
        n_alpha, k, n_classes, n_levels = self.log_integral_.shape
        codes = X_selected.toarray() if sp.issparse(X_selected) else np.asarray(X_selected)
        n = codes.shape[0]
        one_hot = np.zeros((n, k * n_levels))
        rows = np.repeat(np.arange(n), k)
        one_hot[rows, (np.arange(k)[None, :] * n_levels + codes).ravel()] = 1.0
        weights = self.log_integral_.transpose(1, 3, 0, 2).reshape(k * n_levels, n_alpha * n_classes)
        scores = (one_hot @ weights).reshape(n, n_alpha, n_classes)
        scores += (self.log_adjustment_ + self.alpha_log_weights_)[None, :, None]
        return logsumexp(scores, axis=1) + self.class_log_prior_[None, :]
