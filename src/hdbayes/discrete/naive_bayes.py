"""Bayesian naive Bayes classifiers for binary, categorical and count features (Murphy §3.5, §3.5.5).

p(x | y = c, θ) = ∏_j p(x_j | θ_jc), π ~ Dir(class_pseudo_count), and per class and
feature a conjugate prior: Beta(β, β) for a binary feature, Dir(β_j) for a categorical
feature and Dir(β) over the vocabulary for the multinomial document model. As in
scikit-learn, the parameter ``alpha`` is the feature smoothing pseudo-count: ``alpha`` = β
of Murphy §3.5 (β_1 = β_0 = ``alpha`` for a binary feature); the class prior's
Dirichlet parameter, α_c in Murphy §3.5, is ``class_pseudo_count``. ``method`` chooses what is
plugged in:

==================  ==========================================================================
``"mle"``           N_jc/N_c and N_c/N (zero counts give probability zero: the black swan)
``"map"``           the posterior modes (ValueError when a posterior has no unique mode)
``"posterior_mean"`` the posterior means (N_jc + β)/(N_c + 2β), (N_c + α_c)/(N + α_0)
``"bayes"``         the exact posterior predictive (Bayesian model averaging). For binary and
                    categorical features it *equals* the plug-in of the posterior mean (Murphy
                    §3.5); for the multinomial model it is the Dirichlet-compound-multinomial
                    DCM(x | β + T_c) (Murphy §3.5.5), which differs whenever a word occurs twice.
==================  ==========================================================================

Relation to scikit-learn (tested to 1e-10): ``BernoulliNB(alpha=a, force_alpha=True)`` is
``BayesianBernoulliNB(method="posterior_mean", class_pseudo_count=0, alpha=a)``;
``MultinomialNB(alpha=a)`` is ``BayesianMultinomialNB(method="posterior_mean", class_pseudo_count=0, alpha=a)``;
``CategoricalNB(alpha=a)`` is ``BayesianCategoricalNB(method="posterior_mean", class_pseudo_count=0, alpha=a)``
(scikit-learn's class prior is the unsmoothed N_c/N, i.e. ``class_pseudo_count=0``).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import (
    cell_location,
    check_binary_features,
    check_level_memory,
    feature_label,
    first_cell,
)
from hdbayes.discrete._base import (
    PSEUDO_COUNT,
    GenerativeClassifier,
    _check_prior_array,
    add_category_counts,
    feature_thresholds,
    log_dirichlet_estimate,
    masked_log_dot,
    plain,
)
from hdbayes.discrete.conjugate import _COEF_HINT, _MAX_CODE, DirichletMultinomialTables, check_count_matrix
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from numpy.typing import ArrayLike

__all__ = ["BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianMultinomialNB"]


def _multinomial_coefficient(X):
    """log N_i!/∏_j x_ij! per row of CSR integer counts."""
    lengths = np.asarray(X.sum(axis=1)).ravel()
    log_factorials = X.copy()
    log_factorials.data = gammaln(X.data + 1)
    return gammaln(lengths + 1) - np.asarray(log_factorials.sum(axis=1)).ravel()


def _one_hot(X, widths):
    """The one-hot code (CSR) of integer codes X whose feature j has ``widths[j]`` categories."""
    n, D = X.shape
    offsets = np.concatenate([[0], np.cumsum(widths)])
    columns = (offsets[None, :-1] + X).ravel()
    return sp.csr_matrix((np.ones(n * D), columns, np.arange(0, n * D + 1, D)), shape=(n, int(offsets[-1])))


class BayesianBernoulliNB(GenerativeClassifier):
    """Naive Bayes for binary features with Beta priors (Murphy §3.5, §3.5.5).

    This is the multivariate Bernoulli, or binary independence, model.

    b_c(x) = log π_c + Σ_j log(1 − θ_jc) + Σ_j x_j log(θ_jc/(1 − θ_jc)) — absent
    features count — computed with 0 · log 0 = 0 when an estimate is 0 or 1.

    Parameters
    ----------
    method : {"mle", "map", "posterior_mean", "bayes"}, default="bayes"
        "bayes" and "posterior_mean" give identical predictions (Murphy §3.5).
    alpha : float or array-like broadcastable to (n_classes, n_features), default=1.0
        The feature smoothing pseudo-count, as in scikit-learn's ``BernoulliNB``: θ_jc ~
        Beta(β, β) with β = ``alpha``, the pseudo-count of x_j = 1 and of x_j = 0 (per
        feature or per class and feature; 1 is add-one smoothing).
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (α_c of Murphy §3.5); 0 gives N_c/N
        (allowed except for "map").
    binarize : float, "median" or None, default=0.0
        How features become 0/1, as in scikit-learn's ``BernoulliNB``: a threshold t maps
        x > t to 1 and the rest to 0 (the default 0.0 leaves 0/1 data unchanged and turns
        counts into presence/absence); ``"median"``: each feature's median over the training
        data (the gene-expression convention, thesis §2.3.6; stored in
        ``binarize_thresholds_``, from the first batch for ``partial_fit``); None: the data
        are already 0/1 and anything else is refused. Dense, CSR, CSC and COO input give
        the same answer for every threshold (implicit sparse zeros are binarized too).
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None
        Overrides the learnt class prior.

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
        Labels and N_c.
    n_features_in_ : int
        Number of features seen in ``fit``.
    binarize_thresholds_ : ndarray of shape (n_features,) or None
        The threshold of every feature (None for ``binarize=None``).
    feature_count_ : ndarray of shape (n_classes, n_features)
        N_jc, the number of class-c cases with x_j = 1.
    posterior_beta1_, posterior_beta0_ : ndarray of shape (n_classes, n_features)
        The posterior Beta(β + N_jc, β + N_c − N_jc) of θ_jc.
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_log_prob_, feature_log_neg_prob_ : ndarray of shape (n_classes, n_features)
        log θ_jc and log(1 − θ_jc) of the chosen estimate.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]])
    >>> model = BayesianBernoulliNB().fit(X, [0, 0, 0, 1, 1])
    >>> round(float(model.predict_proba([[1, 1]])[0, 0] * 203), 10)   # 128/203
    128.0
    """

    _parameter_constraints: dict = {
        **GenerativeClassifier._parameter_constraints,
        "alpha": PSEUDO_COUNT,
        "binarize": [None, Interval(Real, None, None, closed="neither"), StrOptions({"median"})],
    }

    def __init__(
            self, method: Literal["mle", "map", "posterior_mean", "bayes"] = "bayes", *, alpha: ArrayLike = 1.0,
            class_pseudo_count: float | ArrayLike = 1.0, binarize: float | Literal["median"] | None = 0.0,
            class_prior: Literal["uniform"] | ArrayLike | None = None) -> None:
        self.method = method
        self.alpha = alpha
        self.class_pseudo_count = class_pseudo_count
        self.binarize = binarize
        self.class_prior = class_prior

    #: any real X is binarized at the thresholds (with binarize=None, 0/1 is checked instead)
    _non_negative = False

    def _prepare_X(self, X, reset):
        if reset:
            self.binarize_thresholds_ = feature_thresholds(X, self.binarize)
        return check_binary_features(X, self.binarize_thresholds_, self._feature_names())

    def _reset_counts(self, n_features):
        self.feature_count_ = np.zeros((self.classes_.shape[0], n_features))

    def _start_chunked_fit(self):
        if isinstance(self.binarize, str):
            raise InputValueError(
                "fit on a dask array needs binarize to be a fixed threshold or None, not 'median': the medians of all "
                "the data cannot be computed chunk by chunk and merged (compute them first and pass them as the "
                "threshold of binarized data, or fit in memory)"
            )
        self.binarize_thresholds_ = feature_thresholds(np.empty((0, self.n_features_in_)), self.binarize)

    def _counts_of(self, X, Y):
        return {"feature_count": np.asarray((Y.T @ X).toarray() if sp.issparse(X) else Y.T @ X)}

    def _add_counts(self, counts):
        self.feature_count_ = self.feature_count_ + counts["feature_count"]

    def _update_parameters(self):
        beta = _check_prior_array("alpha", self.alpha, self.feature_count_.shape)
        zeros = self.class_count_[:, None] - self.feature_count_
        self.posterior_beta1_ = beta + self.feature_count_
        self.posterior_beta0_ = beta + zeros
        log_theta = log_dirichlet_estimate(
            np.stack([self.feature_count_, zeros], axis=-1), np.stack([beta, beta], axis=-1), self.method
        )
        self.feature_log_prob_ = log_theta[..., 0]
        self.feature_log_neg_prob_ = log_theta[..., 1]
        self.class_log_prior_ = self._class_log_prior(self.method)

    def mutual_information(self) -> np.ndarray:
        """The mutual information I(X_j; Y) of every feature with the class, in nats (Murphy §3.5.4).

        Computed from the fitted class prior π and θ_jc of the chosen ``method`` ("mle": Murphy's plug-in).

        Returns
        -------
        ndarray of shape (n_features,)
            I(X_j; Y) for every feature j, in the order of the features.
        """
        check_is_fitted(self)
        theta = np.exp(self.feature_log_prob_)
        if np.isnan(theta).any():
            raise InputValueError("a class has no training cases: θ is undefined under method='mle'")
        # imported here: its module imports sklearn.feature_selection, and with it scipy.stats (issue 28)
        from hdbayes.discrete.mutual_information import mutual_information_binary

        return mutual_information_binary(np.exp(self.class_log_prior_), theta)

    def _joint_log_likelihood(self, X):
        log_p, log_neg = self.feature_log_prob_, self.feature_log_neg_prob_
        if np.isfinite(log_p).all() and np.isfinite(log_neg).all():  # one product when no estimate is 0 or 1
            return np.asarray(X @ (log_p - log_neg).T) + log_neg.sum(axis=1) + self.class_log_prior_
        if sp.issparse(X):
            X = X.tocsr()
        ones = masked_log_dot(X, self.feature_log_prob_)
        # Σ_j (1 − x_j) log(1 − θ_jc) = Σ_j log(1 − θ_jc) − Σ_j x_j log(1 − θ_jc), with 0·log 0 = 0
        log_neg = self.feature_log_neg_prob_
        finite = np.where(np.isfinite(log_neg), log_neg, 0.0)
        zeros = finite.sum(axis=1)[None, :] - np.asarray(X @ finite.T)
        n_impossible = np.isneginf(log_neg).sum(axis=1)[None, :] - np.asarray(X @ np.isneginf(log_neg).T.astype(float))
        zeros[n_impossible > 0] = -np.inf
        zeros[:, np.isnan(log_neg).any(axis=1)] = -np.inf
        return ones + zeros + self.class_log_prior_


class BayesianCategoricalNB(GenerativeClassifier):
    """Naive Bayes for categorical features x_j ∈ {0..S_j − 1} with Dirichlet priors (Murphy §3.5).

    θ_jc ~ Dir(β_j); the posterior is Dir(β_j + N_j·c) and b_c(x) = log π_c + Σ_j log θ_{j, x_j, c}.
    X holds non-negative integer category codes, as for scikit-learn's ``CategoricalNB``
    (encode strings with :class:`~sklearn.preprocessing.OrdinalEncoder`). Unlike
    ``CategoricalNB``, which truncates a float such as 2.7 to the code 2 without a word, a
    non-integral value is refused (InputValueError naming the feature): it is not a code,
    and truncating continuous data would invent categories. Floats holding integers (2.0)
    are codes. Sparse input is accepted (every feature has a category, so it is made
    dense). A category ≥ S_j at prediction time (never seen in training and not reserved
    by ``n_levels``) raises InputValueError naming the feature.

    Parameters
    ----------
    method : {"mle", "map", "posterior_mean", "bayes"}, default="bayes"
    alpha : float or list of array-like, default=1.0
        The feature smoothing pseudo-counts, as in scikit-learn's ``CategoricalNB`` (β_j of
        Murphy §3.5, θ_jc ~ Dir(β_j)): a scalar (symmetric), or one array per feature
        broadcastable to (n_classes, S_j).
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (α_c of Murphy §3.5).
    n_levels : int or array-like of shape (n_features,), optional
        Minimum number of levels S_j per feature (codes 0..S_j − 1; S_j = max(this, largest value + 1)).
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None
        Overrides the learnt class prior.

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_levels_ : ndarray of shape (n_features,)
        S_j.
    category_count_ : list of ndarray of shape (n_classes, S_j)
        N_jkc.
    feature_log_prob_ : list of ndarray of shape (n_classes, S_j)
        log θ_jkc of the chosen estimate.
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> X = np.array([[0, 2], [1, 2], [0, 0], [2, 1]])
    >>> model = BayesianCategoricalNB(n_levels=3).fit(X, ["a", "a", "b", "b"])
    >>> model.predict([[0, 2], [2, 0]]).tolist()
    ['a', 'b']
    """

    _parameter_constraints: dict = {
        **GenerativeClassifier._parameter_constraints,
        "alpha": PSEUDO_COUNT,
        "n_levels": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
    }

    def __init__(
            self, method: Literal["mle", "map", "posterior_mean", "bayes"] = "bayes", *,
            alpha: float | Sequence[ArrayLike] = 1.0, class_pseudo_count: float | ArrayLike = 1.0,
            n_levels: int | ArrayLike | None = None, class_prior: Literal["uniform"] | ArrayLike | None = None
    ) -> None:
        self.method = method
        self.alpha = alpha
        self.class_pseudo_count = class_pseudo_count
        self.n_levels = n_levels
        self.class_prior = class_prior

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # integer codes, as scikit-learn's CategoricalNB
        return tags

    def _prepare_X(self, X, reset):
        X = X.toarray() if sp.issparse(X) else X  # every feature has a category: the one-hot code is dense
        names = self._feature_names()
        bad = X != np.round(X)
        if bad.any():
            i, j, value = first_cell(X, bad)
            raise InputValueError(
                f"X must hold integer category codes 0, 1, 2, ...: {feature_label(j, names)} has the value "
                f"{value:g}; encode categories with sklearn.preprocessing.OrdinalEncoder, or bin "
                "continuous data first",
                location=cell_location(i, j, feature_names=names),
            )
        if X.size and X.max() >= _MAX_CODE:
            i, j, value = first_cell(X, X >= _MAX_CODE)
            raise InputValueError(
                f"{feature_label(j, names)} has the category code {value:g}; codes must be below "
                f"{_MAX_CODE} (number the categories 0, 1, 2, ...)",
                location=cell_location(i, j, feature_names=names),
            )
        return X.astype(np.int64)

    def _check_known_levels(self, X):
        too_large = X >= self.n_levels_[None, :]
        if too_large.any():
            i, j, value = first_cell(X, too_large)
            names = self._feature_names()
            raise InputValueError(
                f"{feature_label(j, names)} has category {int(value)}, which was not seen in training (categories "
                f"0..{self.n_levels_[j] - 1}); reserve it with n_levels",
                location=cell_location(i, j, feature_names=names),
            )

    def _reset_counts(self, n_features):
        minimum = np.ones(n_features, dtype=np.int64)
        if self.n_levels is not None:
            requested = np.asarray(self.n_levels)
            if not np.issubdtype(requested.dtype, np.integer) or np.any(requested < 1):
                raise InputValueError("n_levels must be an integer >= 1 or one such integer per feature")
            try:
                minimum = np.maximum(np.broadcast_to(requested, (n_features,)), 1)
            except ValueError as exc:
                raise InputValueError(f"n_levels has {requested.size} entries, X has {n_features} features") from exc
        check_level_memory(minimum, n_features, self.classes_.shape[0], name="n_levels")
        self.n_levels_ = minimum.astype(np.int64)
        self._set_offsets()
        self._flat_count = np.zeros((self.classes_.shape[0], self._offsets[-1]))

    def _set_offsets(self):
        self._offsets = np.concatenate([[0], np.cumsum(self.n_levels_)])

    def _counts_of(self, X, Y):
        widths = X.max(axis=0, initial=-1) + 1 if X.shape[0] else np.zeros(X.shape[1], dtype=np.int64)
        return {"n_levels": widths, "flat_count": (Y.T @ _one_hot(X, widths)).toarray()}

    @staticmethod
    def _merge_counts(a, b):
        flat, widths = add_category_counts(a["flat_count"], a["n_levels"], b["flat_count"], b["n_levels"])
        return {"class_count": a["class_count"] + b["class_count"], "n_levels": widths, "flat_count": flat}

    def _add_counts(self, counts):
        # partial_fit may meet new categories
        self._flat_count, widths = add_category_counts(
            self._flat_count, self.n_levels_, counts["flat_count"], counts["n_levels"]
        )
        self.n_levels_ = widths.astype(np.int64)
        self._set_offsets()

    def _flat_prior(self):
        C = self.classes_.shape[0]
        if np.ndim(self.alpha) == 0 and not isinstance(self.alpha, (list, tuple)):
            return _check_prior_array("alpha", self.alpha, (C, self._offsets[-1]))
        if len(self.alpha) != self.n_levels_.shape[0]:
            raise InputValueError(f"alpha must be a scalar or one array per feature ({self.n_levels_.shape[0]})")
        parts = [_check_prior_array(f"alpha[{j}]", b, (C, int(s))) for j, (b, s) in
                 enumerate(zip(self.alpha, self.n_levels_))]  # fmt: skip
        return np.concatenate(parts, axis=1)

    def _update_parameters(self):
        starts = self._offsets[:-1]
        log_theta = log_dirichlet_estimate(self._flat_count, self._flat_prior(), self.method, starts=starts)
        self._flat_log_prob = log_theta
        self.category_count_ = np.split(self._flat_count, starts[1:], axis=1)
        self.feature_log_prob_ = np.split(log_theta, starts[1:], axis=1)
        self.class_log_prior_ = self._class_log_prior(self.method)

    def _joint_log_likelihood(self, X):
        self._check_known_levels(X)
        return masked_log_dot(_one_hot(X, self.n_levels_), self._flat_log_prob) + self.class_log_prior_


class BayesianMultinomialNB(GenerativeClassifier):
    """The multinomial document classifier with a Dirichlet prior (McCallum & Nigam 1998; Murphy §3.5.5).

    x_i | y_i = c ~ Mu(N_i, θ_c), θ_c ~ Dir(β). With ``method="bayes"`` θ_c is integrated
    out exactly: p(x | y = c, D) = DCM(x | β + T_c), T_jc the total count of word j in
    class c — a Pólya urn that makes a repeated word more probable (Murphy §3.5.5). An empty
    document is valid: its likelihood is 1 under every class, so it gets the class prior.

    X holds non-negative values: counts, or real values such as tf-idf weights (as for
    scikit-learn's ``MultinomialNB``). The plug-in methods use Σ_j x_j log θ_jc; ``"bayes"``
    uses the Gamma-function form of the DCM, Γ(α_0)/Γ(N + α_0) · ∏_j Γ(x_j + α_j)/Γ(α_j)
    (α = β + T_c), which equals the product of rising factorials at integer counts; for real
    values it is the natural extension (a weight, not a probability of a real vector).

    Parameters
    ----------
    method : {"mle", "map", "posterior_mean", "bayes"}, default="bayes"
    alpha : float or array-like broadcastable to (n_classes, n_features), default=1.0
        The feature smoothing pseudo-counts, as in scikit-learn's ``MultinomialNB``: θ_c ~
        Dir(β) with β = ``alpha`` (> 0 for "bayes").
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (α_c of Murphy §3.5).
    include_multinomial_coef : bool, default=False
        Add log N_i!/∏_j x_ij! so that ``predict_joint_log_proba`` is the true log p(x, y);
        it cancels in p(y | x). The coefficient is defined for integer counts only: with it,
        non-integral values are refused.
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None
        Overrides the learnt class prior.

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_count_ : ndarray of shape (n_classes, n_features)
        T_jc.
    posterior_beta_ : ndarray of shape (n_classes, n_features)
        β + T_jc, the Dirichlet posterior of θ_c.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        log θ_jc of the chosen estimate ("bayes": the posterior mean, the one-word predictive).
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 2], [0, 3, 1]])
    >>> model = BayesianMultinomialNB().fit(X, [0, 0, 1, 1])
    >>> model.predict([[4, 0, 0], [0, 0, 5], [0, 0, 0]]).tolist()   # an empty document gets the prior
    [0, 1, 0]
    """

    _parameter_constraints: dict = {
        **GenerativeClassifier._parameter_constraints,
        "alpha": PSEUDO_COUNT,
        "include_multinomial_coef": ["boolean"],
    }

    def __init__(
            self, method: Literal["mle", "map", "posterior_mean", "bayes"] = "bayes", *, alpha: ArrayLike = 1.0,
            class_pseudo_count: float | ArrayLike = 1.0, include_multinomial_coef: bool = False,
            class_prior: Literal["uniform"] | ArrayLike | None = None) -> None:
        self.method = method
        self.alpha = alpha
        self.class_pseudo_count = class_pseudo_count
        self.include_multinomial_coef = include_multinomial_coef
        self.class_prior = class_prior

    def _prepare_X(self, X, reset):
        return check_count_matrix(
            X, integer=bool(self.include_multinomial_coef), feature_names=self._feature_names(), option=_COEF_HINT
        )

    def _reset_counts(self, n_features):
        self.feature_count_ = np.zeros((self.classes_.shape[0], n_features))

    def _counts_of(self, X, Y):
        return {"feature_count": (Y.T @ X).toarray()}

    def _add_counts(self, counts):
        self.feature_count_ = self.feature_count_ + counts["feature_count"]

    def _update_parameters(self):
        beta = _check_prior_array("alpha", self.alpha, self.feature_count_.shape)
        self.posterior_beta_ = beta + self.feature_count_
        seen = self.class_count_ > 0
        if self.method == "mle" and np.any(seen & (self.feature_count_.sum(axis=1) == 0)):
            c = int(np.flatnonzero(seen & (self.feature_count_.sum(axis=1) == 0))[0])
            raise InputValueError(
                f"every training document of class {plain(self.classes_[c])} is empty: the MLE of its word "
                "probabilities is undefined (use method='posterior_mean' or 'bayes')"
            )
        if self.method == "bayes":
            if np.any(self.posterior_beta_ <= 0):
                raise InputValueError(
                    "method='bayes' needs alpha > 0 for words never seen in a class (the DCM needs α > 0)"
                )
            self._dcm_tables = DirichletMultinomialTables(self.posterior_beta_)
        self.feature_log_prob_ = log_dirichlet_estimate(self.feature_count_, beta, self.method)
        self.class_log_prior_ = self._class_log_prior(self.method)

    def _joint_log_likelihood(self, X):
        if self.method == "bayes":
            log_likelihood = self._dcm_tables.log_pmf(X, self.include_multinomial_coef)
            return log_likelihood + self.class_log_prior_
        jll = masked_log_dot(X, self.feature_log_prob_, feature_names=self._feature_names()) + self.class_log_prior_
        if self.include_multinomial_coef:
            jll += _multinomial_coefficient(X)[:, None]
        return jll
