"""Bayesian logistic models with high-order interactions and compressed parameters.

Li & Neal, thesis ch. 3 (§3.2, §3.4–3.5): a multinomial logit model whose
linear function of a case is the sum of the coefficients of the interaction patterns it
expresses (sequence models: the suffixes of the history, eq. 3.2; classification models:
all patterns of order ≤ O, thesis §3.2.3), with Cauchy or Gaussian priors whose widths σ_o are
shared by the patterns of order o. Coefficients of patterns with the same expression
(the same training cases) enter the likelihood only through their sum, so the MCMC runs
on one compressed parameter per group (:mod:`hdbayes.interactions.sampler`), and
predictions split each sum with the prior conditional (eq. 3.27) — exact, not an
approximation.

Estimators
    :class:`CompressedSequenceModel` — X holds histories, one per row in time order
    (**the last column is the most recent symbol**); only the last ``order`` columns are used.
    :class:`CompressedInteractionClassifier` — X holds discrete feature codes.

With ``compress=False`` every pattern expressed by a training case is its own group (the
original parameterisation, for comparisons, as in the thesis's timings of §3.4.3).
"""

from __future__ import annotations

import copy
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._parameters import NamedParameterObjects
from hdbayes._validation import check_class_labels, check_count, check_memory, validate_input
from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, BayesianClassifier, MCMCMixin
from hdbayes.exceptions import InputValueError
from hdbayes.interactions.patterns import group_classification_patterns, group_sequence_patterns
from hdbayes.interactions.priors import PRIORS, StablePrior
from hdbayes.interactions.sampler import chain_arguments, predict_kernel, run_chain, sigma_log_prior_kernel
from hdbayes.mcmc.chains import ChainDraws, chain_seeds

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike, RandomStateLike

__all__ = [
    "CompressedInteractionClassifier",
    "CompressedSequenceModel",
    "ExpandedGrouping",
    "expand_grouping",
    "sigma_log_prior",
    "sigma_prior",
]

#: Slice updates of every log σ_o per iteration (thesis §3.4.4).
N_SIGMA_UPDATES = 10


def sigma_prior(order, alpha_o=0.25, w_o_scale=0.1):
    """The hyperprior of σ_o (o ≥ 1) as a frozen scipy distribution (thesis §3.4.4).

    σ_o ~ Inverse-Gamma(α_o, (α_o + 1) w_o) with w_o = ``w_o_scale``/o, the prior mode.

    Examples
    --------
    >>> round(float(sigma_prior(1).ppf(0.5)), 2)
    2.86
    """
    from scipy import stats  # here, not at import: a fit does not need scipy.stats

    order = check_count("order", order, minimum=1)
    w_o = w_o_scale / order
    return stats.invgamma(alpha_o, scale=(alpha_o + 1.0) * w_o)


def sigma_log_prior(sigma, order, alpha_o=0.25, w_o_scale=0.1):
    """log density of σ_o as the sampler uses it (normalised), vectorised over ``sigma`` > 0.

    The sampler works on τ = log σ with log f(τ) = −α_o τ − λ_o e^{−τ} (Jacobian
    included; :func:`hdbayes.interactions.sampler.sigma_log_prior_kernel`); this returns
    that kernel minus log σ plus the normalising constant α_o log λ_o − log Γ(α_o), i.e.
    the IG(α_o, λ_o) log density, λ_o = (α_o + 1) w_o.
    """
    order = check_count("order", order, minimum=1)
    lam = (alpha_o + 1.0) * w_o_scale / order
    sigma = np.asarray(sigma, np.float64)
    tau = np.log(sigma)
    kernel = np.vectorize(lambda t: sigma_log_prior_kernel(float(t), float(alpha_o), float(lam)))(tau)
    return kernel - tau + alpha_o * np.log(lam) - gammaln(alpha_o)


# ---------------------------------------------------------------------------------------------
# uncompressed groups


class ExpandedGrouping:
    """Every pattern its own group: group g's n_{g,o} order-o patterns become n_{g,o} groups.

    Attributes
    ----------
    case_indptr, case_indices, order_counts : ndarray
        As for a grouping (``order_counts`` rows are unit vectors).
    start : ndarray of shape (G, O + 1)
        Index of the first expanded group of (g, o); its n_{g,o} copies are consecutive.
    source : ndarray
        The compressed group each expanded group comes from.
    """

    def __init__(self, grouping):
        counts = grouping.order_counts
        G, n_orders = counts.shape
        flat = counts.ravel()
        self.start = (np.cumsum(flat) - flat).reshape(G, n_orders).astype(np.int64)
        n_total = int(flat.sum())
        self.source = np.repeat(np.arange(G), counts.sum(axis=1)).astype(np.int64)
        orders = np.concatenate([np.repeat(np.arange(n_orders), counts[g]) for g in range(G)]).astype(np.int64)
        self.order_counts = np.zeros((n_total, n_orders), np.int64)
        self.order_counts[np.arange(n_total), orders] = 1
        sizes = np.diff(grouping.case_indptr)[self.source]
        self.case_indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.case_indices = (
            np.concatenate([grouping.cases(g) for g in self.source]).astype(np.int64)
            if n_total
            else np.empty(0, np.int64)
        )
        self.order = grouping.order

    @property
    def n_groups(self):
        return int(self.order_counts.shape[0])

    def translate(self, groups, counts):
        """Expressed (compressed) groups of a test case → expressed expanded groups.

        Of the n_{g,o} order-o copies of group g the first t_{g,o} are taken as the
        expressed ones: the copies have the same prior and the same cases, so their
        posterior is exchangeable and any t_{g,o} of them have the same joint law.
        """
        groups = np.asarray(groups, np.int64)
        _, out_groups, out_counts = self.translate_all(np.array([0, groups.shape[0]]), groups, counts)
        return out_groups, out_counts

    def translate_all(self, ptr, groups, counts):
        """:meth:`translate` for the expressed groups of many test cases at once (vectorised).

        Parameters
        ----------
        ptr, groups, counts : ndarray
            As returned by ``expressed_by_all`` of the compressed grouping.

        Returns
        -------
        ptr, groups, counts : int64 ndarrays
            The expanded groups of each test case, in the order :meth:`translate` gives
            them (by compressed group, then order, then copy), each with a unit count row.
        """
        counts = np.asarray(counts, np.int64)
        n_orders = self.order_counts.shape[1]
        flat = counts.ravel()
        entry = np.repeat(np.arange(flat.size), flat)  # one per expanded group, (row, order) entries
        row, o = np.divmod(entry, n_orders)
        first = np.cumsum(flat) - flat
        copy = np.arange(entry.size) - first[entry]
        out_groups = (self.start[np.asarray(groups, np.int64)[row], o] + copy).astype(np.int64)
        out_counts = np.zeros((entry.size, n_orders), np.int64)
        out_counts[np.arange(entry.size), o] = 1
        ends = np.concatenate([[0], np.cumsum(counts.sum(axis=1))]).astype(np.int64)
        return ends[np.asarray(ptr, np.int64)], out_groups, out_counts


def expand_grouping(grouping):
    """The uncompressed parameterisation of ``grouping`` (see :class:`ExpandedGrouping`)."""
    return ExpandedGrouping(grouping)


# ---------------------------------------------------------------------------------------------
# estimators


class _CompressedLogisticModel(NamedParameterObjects, MCMCMixin, BayesianClassifier):
    _named_parameter_objects = {"prior": PRIORS}
    _parameter_constraints = {
        "order": [Interval(Integral, 1, None, closed="left"), None],
        "prior": [StrOptions(set(PRIORS)), StablePrior],
        "compress": ["boolean"],
        **MCMC_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        order: int | None = None,
        prior: Literal["cauchy", "gaussian"] | StablePrior = "cauchy",
        compress: bool = True,
        n_iter: int = 2000,
        burn_in: int = 750,
        thin: int = 5,
        n_chains: int = 1,
        n_jobs: int | None = None,
        random_state: RandomStateLike = None,
        progress: bool | None = None,
    ) -> None:
        self.order = order
        self.prior = prior
        self.compress = compress
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    # -- subclass hooks
    def _group(self, X, order):  # pragma: no cover - abstract
        raise NotImplementedError

    def _default_order(self, n_columns):  # pragma: no cover - abstract
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Run the MCMC: ``n_chains`` chains (in threads with ``n_jobs``), kept in ``trace_``.

        Parameters
        ----------
        X : array_like of shape (N, columns)
            Discrete codes (see the class docstring).
        y : array_like of shape (N,)
            Class labels, at least two distinct.

        Returns
        -------
        self
            The fitted estimator.
        """
        schedule = self._schedule()
        prior = self._parameter_object("prior")
        # codes may be strings: dtype=None keeps them; sparse input, empty data, NaN and a 2-D y
        # get scikit-learn's standard messages
        X, y = validate_input(self, X, y, dtype=None, ensure_all_finite=True, ensure_min_samples=2)
        order = self._default_order(X.shape[1]) if self.order is None else int(self.order)
        if order > X.shape[1]:
            raise InputValueError(
                f"order={order} exceeds the number of columns of X (n_features={X.shape[1]}); "
                "pass a smaller order"
            )
        self.classes_ = check_class_labels(y)
        codes = np.searchsorted(self.classes_, y)
        n_classes = self.classes_.shape[0]

        self.grouping_ = self._group(X, order)
        self.n_original_ = self.grouping_.n_patterns
        self.n_compressed_ = self.grouping_.n_groups
        if not self.compress:  # one group per pattern: a row of order_counts (O + 1) and a start, source, case...
            n_patterns = float(np.asarray(self.grouping_.order_counts, dtype=np.float64).sum())
            check_memory(8.0 * n_patterns * (order + 5), f"order = {order} with compress=False",
                         purpose=f"the {n_patterns:.0f} uncompressed interaction patterns")  # fmt: skip
        self.expanded_ = None if self.compress else expand_grouping(self.grouping_)
        params = self.grouping_ if self.compress else self.expanded_
        # one seed per chain and one for prediction (predict_proba is deterministic for a fitted model)
        seeds = chain_seeds(self.random_state, self.n_chains + 1)
        self._predict_seed = seeds[-1]
        self.prior_ = copy.deepcopy(prior)  # as fitted, whatever set_params does to the parameter later
        self.index_ = prior.index
        args = chain_arguments(params, codes, n_classes, schedule=schedule, n_sigma_updates=N_SIGMA_UPDATES,
                               **prior.chain_options())  # fmt: skip
        self._order_counts = args[2]

        def chain(rng, schedule, advance):
            s, sigma, sigma_warmup = run_chain(*args, rng)
            advance(schedule.n_iter)
            log_sigma = {f"log_sigma_{o}": np.log(sigma[:, o]) for o in range(1, sigma.shape[1])}
            return ChainDraws(posterior={"s": s, "sigma": sigma, **log_sigma}, warmup={"sigma": sigma_warmup})

        n_orders = order + 1
        n_params = 1 if n_classes == 2 else n_classes  # a saved draw: s (groups × n_params), σ and log σ by order
        self._run_chains(
            chain, desc=type(self).__name__, seeds=seeds[:-1], schedule=schedule,
            draw_bytes=8 * (params.n_groups * n_params + 2 * n_orders), warmup_bytes=8 * n_orders,
            trace_options={
                "dims": {"s": ["group", "coefficient_set"], "sigma": ["order"]},
                "coords": {"order": np.arange(n_orders)},
                "monitored": [f"log_sigma_{o}" for o in range(1, n_orders)],
            },
        )  # fmt: skip
        return self

    def _test_structure(self, X):
        """(ptr, groups, counts, new) of :func:`predict_kernel` for all test cases at once."""
        ptr, groups, counts, new = self.grouping_.expressed_by_all(X)
        if self.expanded_ is not None:
            ptr, groups, counts = self.expanded_.translate_all(ptr, groups, counts)
        return ptr, groups, counts.astype(np.float64), new.astype(np.float64)

    def _validate_for_prediction(self, X):
        return validate_input(self, X, reset=False, dtype=None, ensure_all_finite=True)

    def _joint_log_likelihood(self, X):
        """log of the predictive class probabilities averaged over the saved draws (thesis §3.4.2, §3.5.1).

        Every test case's parts of the touched groups and its new patterns are drawn afresh
        for every saved draw, from a generator seeded at fit time, so the result is the same
        on every call. The average is taken in log space.
        """
        ptr, groups, counts, new = self._test_structure(X)
        return predict_kernel(
            np.ascontiguousarray(self.trace_.flat("s")), np.ascontiguousarray(self.trace_.flat("sigma")),
            self._order_counts, ptr, groups, counts, new, self.classes_.shape[0], self.index_,
            np.random.default_rng(self._predict_seed),
        )  # fmt: skip

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # every distinct value of a column is a category: scikit-learn's checks feed continuous
        # data, on which a model of discrete codes cannot generalise
        tags.classifier_tags.poor_score = True
        return tags


#: The parameters and attributes the two compressed models share, in their docstrings (one text, two classes).
_COMMON_DOCS = {"common_parameters": """    prior : {"cauchy", "gaussian"} or prior object, default="cauchy"
        The symmetric stable prior of the original coefficients (index 1 or 2), which fixes
        the compressed parameters' priors. A name is the prior with its defaults (thesis §3.4.4);
        an object (:mod:`hdbayes.interactions.priors`) sets its fields: the intercept's width
        ``sigma0``, the hyperprior ``alpha_o``, ``w_o_scale`` of σ_o and the slice sampler's
        ``coef_width``, ``sigma_width`` and ``max_steps`` (``CauchyPrior(sigma0=2.0)``; in a
        grid search ``prior__alpha_o``). The prior used is ``prior_``.
    compress : bool, default=True
        False: sample the original coefficients (each pattern its own group).
    n_iter, burn_in, thin : int, default=2000, 750, 5
        Iterations per chain, of which the first ``burn_in`` are discarded; every
        ``thin``-th of the rest is saved.
    n_chains : int, default=1
        Number of independent chains.
    n_jobs : int, optional
        Chains run at once in threads; results do not depend on it.
    random_state : None, int or numpy Generator
        Seeds the chains and the draws of prediction (a fitted model predicts the same
        probabilities on every call).
    progress : bool, optional
        Progress bar over all iterations (None: only on an interactive terminal).
""", "common_attributes": """    n_original_, n_compressed_ : int
        Expressed patterns and groups per parameter set.
    expanded_ : grouping or None
        With ``compress=False``, ``grouping_`` expanded to one group per pattern (the parameters
        the sampler then draws); None when compressed.
    prior_ : CauchyPrior or GaussianPrior
        The prior of the fit (``prior`` as an object).
    index_ : int
        Stability index of the prior: 1 for ``prior="cauchy"``, 2 for ``prior="gaussian"``.
    trace_ : hdbayes.mcmc.Trace
        The draws, shaped (chain, draw, ...): ``trace_["s"]`` the saved compressed parameters
        (chain, draw, G', K'), G' = groups (or patterns with ``compress=False``), K' = 1 for
        two classes, else K; ``trace_["sigma"]`` the widths σ_o (chain, draw, O + 1), column 0
        the fixed σ_0; the monitored scalars ``log_sigma_1`` … ``log_sigma_O``
        (:meth:`mcmc_summary`); ``trace_.warmup["sigma"]`` σ at every burn-in iteration.
        Post-burn-in draws only, except in ``warmup``.
"""}


def _with_common_docs(cls):
    """Fill the shared parameter and attribute text into a compressed model's docstring."""
    if cls.__doc__:  # None under python -OO
        cls.__doc__ = cls.__doc__ % _COMMON_DOCS
    return cls


@_with_common_docs
class CompressedSequenceModel(_CompressedLogisticModel):
    """Bayesian logistic sequence prediction model of order O with compressed parameters.

    Thesis §3.2.1 and §3.4: the linear function of class k for a history is the sum of the
    coefficients of its suffixes of lengths 0..O; coefficients of order o have Cauchy
    (or Gaussian) priors of width σ_o, σ_0 fixed, σ_o ~ IG(α_o, (α_o + 1) w_o),
    w_o = ``w_o_scale``/o. For two classes only class 1 has coefficients.

    Parameters
    ----------
    order : int, optional
        O ≥ 1; X must have at least O columns (only the last O are used). None (the
        default): every column, O = the length of the histories. Compression keeps the
        number of sampled parameters bounded by the training cases whatever O is.
%(common_parameters)s
    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    grouping_ : SequenceGrouping
%(common_attributes)s
    Examples
    --------
    >>> from hdbayes.datasets import simulate_hmm
    >>> d = simulate_hmm(n_samples=50, n_test=5, random_state=0)
    >>> m = CompressedSequenceModel(order=3, n_iter=30, burn_in=10, random_state=0).fit(d.X, d.y)
    >>> m.predict_proba(d.X_test).shape
    (5, 2)
    >>> m.trace_["sigma"].shape  # (chain, draw, O + 1)
    (1, 4, 4)
    >>> sorted(m.mcmc_summary())
    ['log_sigma_1', 'log_sigma_2', 'log_sigma_3']
    """

    def _group(self, X, order):
        return group_sequence_patterns(X, order)

    def _default_order(self, n_columns):
        return n_columns  # the whole history: compression bounds the parameters by the cases


@_with_common_docs
class CompressedInteractionClassifier(_CompressedLogisticModel):
    """Bayesian logistic classification with all interactions of order ≤ O, compressed.

    Thesis §3.2.3 and §3.5: the linear function of class k is the sum of the coefficients
    of all patterns of order ≤ O (any O of the p features) that the case expresses. The
    prior and the sampler are those of :class:`CompressedSequenceModel`.

    Parameters
    ----------
    order : int, optional
        O, 1 ≤ O ≤ p. None (the default) means 2: main effects and pairwise interactions
        (the compressed groups of all orders up to p grow exponentially with p).
%(common_parameters)s
    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    grouping_ : ClassificationGrouping
        The compressed groups of the expressed patterns.
%(common_attributes)s
    Examples
    --------
    >>> from hdbayes.datasets import simulate_cauchy_classification
    >>> d = simulate_cauchy_classification(n_samples=40, n_test=5, n_features=4, order=2, random_state=0)
    >>> m = CompressedInteractionClassifier(order=2, n_iter=30, burn_in=10, random_state=0)
    >>> m.fit(d.X, d.y).predict(d.X_test).shape
    (5,)
    """

    def _group(self, X, order):
        return group_classification_patterns(X, order)

    def _default_order(self, n_columns):
        return 2  # main effects and pairwise interactions; all orders up to p is exponential in p
