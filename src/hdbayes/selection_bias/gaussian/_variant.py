"""What every variant of the Gaussian classifier provides: :class:`GaussianVariant`, the base of their parameter
objects, and :class:`VariantModel`, what a variant hands the estimator for one fit.

A variant (the shared spread, the spread per feature, the variance per class) is one module holding its prior,
its adjustment factor and its chain; its parameter object carries the prior's hyperparameters and the
sampler's tuning with the variant's defaults, in the manner of a scikit-learn estimator's parameters
(``get_params``/``set_params``, so ``clone``, ``GridSearchCV`` over ``variant__<field>``, ``repr`` and pickling
work), validated by its own ``_parameter_constraints`` and compared by value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from hdbayes._parameters import ParameterObject

if TYPE_CHECKING:
    from hdbayes.mcmc import Trace

#: A finite number > 0 (a constraint for ``_parameter_constraints``).
POSITIVE = Interval(Real, 0, np.inf, closed="neither")

#: The constraints of the fields every variant has: the priors of the global precisions or scales and the
#: random-walk Metropolis steps.
COMMON_CONSTRAINTS = {
    **{name: [POSITIVE] for name in ("alpha_x", "w_x", "alpha_mu", "w_mu", "alpha_nu", "w_nu")},
    "proposal_sd": [POSITIVE],
    "n_metropolis": [Interval(Integral, 1, None, closed="left")],
}


@dataclass(frozen=True)
class VariantModel:
    """A variant's model of one fit, ready to sample.

    Attributes
    ----------
    chain : callable
        One chain of :func:`hdbayes.mcmc.run_chains` (the data, prior and factor bound).
    adjustment : object or None
        The adjustment factor of the correction (None when uncorrected or nothing is discarded).
    dims, monitored : dict, tuple of str
        The trace's dims and the monitored scalars of ``mcmc_summary``.
    draw_bytes : int
        Bytes of one saved draw (for the memory check of the chains).
    class_scale : ndarray of shape (G,) or None
        The class scales of the fit (the per-class variance only).
    """

    chain: Callable
    adjustment: Any
    dims: dict
    monitored: tuple
    draw_bytes: int
    class_scale: np.ndarray | None = None


class GaussianVariant(ParameterObject):
    """Base of the variants' parameter objects (not a model on its own).

    A subclass sets ``name`` (the string that selects it), ``_parameter_constraints``, ``dims`` and
    ``monitored``, takes its fields as keyword arguments of ``__init__`` stored unchanged, and writes
    :meth:`model` (its factor and chain for one fit) and :meth:`precisions` (for the predictive).
    """

    name: ClassVar[str] = ""
    dims: ClassVar[dict] = {}
    monitored: ClassVar[tuple] = ()
    _prior_names: ClassVar[tuple] = ()

    def prior(self) -> dict[str, Any]:
        """The prior's hyperparameters as the variant's chain takes them.

        Returns
        -------
        dict of str
            Each prior field by name.
        """
        return {name: getattr(self, name) for name in self._prior_names}

    def _chain(self, chain, class_counts, sums, squares, adjustment, n_discarded, **extra):
        """``chain`` (the variant's chain function) with the data, prior, factor and Metropolis tuning bound."""
        return functools.partial(
            chain, counts=class_counts, sums=sums, squares=squares, prior=self.prior(), adjustment=adjustment,
            n_discarded=n_discarded, proposal_sd=self.proposal_sd, n_metropolis=self.n_metropolis, **extra,
        )  # fmt: skip

    def needs_scatter(self) -> bool:
        """Whether :meth:`model` needs the within-class scatter of all p features.

        Returns
        -------
        bool
            False unless the variant estimates something from every feature.
        """
        return False

    def model(self, class_counts: np.ndarray, sums: np.ndarray, squares: np.ndarray, *, threshold: float,
              n_kept: int, n_discarded: int, scatter: np.ndarray | None, classes: np.ndarray, n_mc: int | None,
              n_jobs: int | None, rng: np.random.Generator) -> VariantModel:  # fmt: skip
        """The variant's model of one fit: its adjustment factor (when features are discarded) and its chain.

        Parameters
        ----------
        class_counts : ndarray of shape (G,)
            n_g.
        sums, squares : ndarray of shape (G, k)
            The selected features' class sums and sums of squares.
        threshold : float
            γ of the selection.
        n_kept, n_discarded : int
            k, and p − k when corrected (0 uncorrected).
        scatter : ndarray of shape (G, p) or None
            Every feature's within-class scatter (used when :meth:`needs_scatter`).
        classes : ndarray of shape (G,)
            The class labels (for messages).
        n_mc : int or None
            The estimator's size of the factor's pool (None: the variant's default; unused by an exact factor).
        n_jobs : int or None
            Threads for the factor (the per-class variance with α2_x learned).
        rng : numpy.random.Generator
            The fit's generator (a Monte Carlo pool is drawn from it).

        Returns
        -------
        VariantModel
            The chain, the factor (None when nothing is discarded), dims, monitored names and class scales.
        """
        class_scale = self._class_scale(scatter, class_counts, classes)
        adjustment = None
        if n_discarded > 0:
            counts = tuple(int(c) for c in class_counts)
            adjustment = self._factor(threshold, counts, n_kept=n_kept, n_mc=n_mc, n_jobs=n_jobs, rng=rng,
                                      class_scale=class_scale)  # fmt: skip
        chain = self._bind_chain(class_counts, sums, squares, adjustment, n_discarded, class_scale)
        return VariantModel(chain, adjustment, self.dims, self.monitored, self._draw_bytes(len(classes), n_kept),
                            self._fitted_class_scale(class_scale, len(classes)))  # fmt: skip

    def _class_scale(self, scatter, class_counts, classes):
        """The class scales of a fit (None: the variant has none)."""
        return None

    def _fitted_class_scale(self, class_scale, n_classes):
        """``class_scale_`` of the estimator (None: no such attribute)."""
        return None

    def _factor(self, threshold, class_counts, *, n_kept, n_mc, n_jobs, rng, class_scale):  # pragma: no cover
        """The adjustment factor of the correction (p − k > 0)."""
        raise NotImplementedError

    def _bind_chain(self, class_counts, sums, squares, adjustment, n_discarded, class_scale):  # pragma: no cover
        """The variant's chain with everything bound (see :meth:`_chain`)."""
        raise NotImplementedError

    def _draw_bytes(self, n_classes, k):  # pragma: no cover
        """Bytes of one saved draw."""
        raise NotImplementedError

    def precisions(self, trace: Trace) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - every variant's own
        """(τ^x, τ^μ) of every draw, flattened over the chains, for the predictive."""
        raise NotImplementedError
