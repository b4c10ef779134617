"""The priors of the compressed interaction models as parameter objects: :class:`CauchyPrior` and
:class:`GaussianPrior` (thesis §3.4.4).

The original coefficients of order o have a symmetric stable prior of width σ_o (Cauchy: index 1; Gaussian:
index 2); the intercept's width σ_0 is fixed and σ_o ~ Inverse-Gamma(α_o, (α_o + 1) w_o), w_o = ``w_o_scale``/o,
for o ≥ 1. An object carries these hyperparameters and the tuning of the slice sampler that explores them, with
the thesis's defaults of its kind, in the manner of a scikit-learn estimator's parameters (``get_params`` /
``set_params``, so ``clone``, ``GridSearchCV`` over ``prior__<field>``, ``repr`` and pickling work), validated by
its own ``_parameter_constraints`` and compared by value. The estimators' ``prior="cauchy"`` is ``CauchyPrior()``.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval

from hdbayes._parameters import ParameterObject

__all__ = ["CauchyPrior", "GaussianPrior", "StablePrior"]

_POSITIVE = [Interval(Real, 0, None, closed="neither")]


class StablePrior(ParameterObject):
    """Base of the compressed models' prior objects (not a prior on its own).

    A subclass sets ``name`` (the string that selects it), ``index`` (the stability index α of the coefficients'
    prior) and the defaults of its ``__init__``.
    """

    name: ClassVar[str] = ""
    index: ClassVar[int] = 0

    _parameter_constraints: ClassVar[dict] = {
        "sigma0": _POSITIVE,
        "alpha_o": _POSITIVE,
        "w_o_scale": _POSITIVE,
        "coef_width": _POSITIVE,
        "sigma_width": _POSITIVE,
        "max_steps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        sigma0: float,
        alpha_o: float = 0.25,
        w_o_scale: float = 0.1,
        coef_width: float = 20.0,
        sigma_width: float = 1.0,
        max_steps: int = 50,
    ) -> None:
        self.sigma0 = sigma0
        self.alpha_o = alpha_o
        self.w_o_scale = w_o_scale
        self.coef_width = coef_width
        self.sigma_width = sigma_width
        self.max_steps = max_steps

    def chain_options(self) -> dict[str, float | int]:
        """The fields as :func:`hdbayes.interactions.sampler.chain_arguments` takes them.

        Returns
        -------
        dict of str
            ``index``, ``sigma0``, ``alpha_o``, ``w_o_scale``, ``coef_width``, ``sigma_width`` and ``max_steps``.
        """
        return {
            "index": self.index, "sigma0": float(self.sigma0), "alpha_o": self.alpha_o, "w_o_scale": self.w_o_scale,
            "coef_width": float(self.coef_width), "sigma_width": self.sigma_width, "max_steps": self.max_steps,
        }  # fmt: skip


#: The fields' text in the two priors' docstrings (one text, two classes; the kind's words and defaults filled in).
_FIELDS_DOC = """Parameters
    ----------
    sigma0 : float, default=%(sigma0)s
        Fixed width (%(width)s) of the intercept's %(kind)s prior.
    alpha_o, w_o_scale : float, default=0.25, 0.1
        Hyperprior of the widths of order o ≥ 1: σ_o ~ Inverse-Gamma(α_o, (α_o + 1) w_o), w_o = ``w_o_scale``/o
        (the prior's mode).
    coef_width : float, default=%(coef_width)s
        Slice-sampler width of the compressed coefficients.
    sigma_width : float, default=1.0
        Slice-sampler width of log σ_o.
    max_steps : int, default=50
        Stepping-out limit m of the slice sampler.
"""


def _with_fields_doc(**words):
    """Fill the fields' text, with the kind's ``words``, into a prior's docstring."""

    def fill(cls):
        if cls.__doc__:  # None under python -OO
            cls.__doc__ = cls.__doc__ % {"fields": _FIELDS_DOC % words}
        return cls

    return fill


@_with_fields_doc(sigma0="5.0", width="scale", kind="Cauchy", coef_width="20.0")
class CauchyPrior(StablePrior):
    """Cauchy priors of the coefficients (stable index 1), the ``prior="cauchy"`` of the compressed models.

    %(fields)s
    Examples
    --------
    >>> CauchyPrior(sigma0=2.0)
    CauchyPrior(sigma0=2.0)
    >>> CauchyPrior() == CauchyPrior(coef_width=20)
    True
    """

    name = "cauchy"
    index = 1

    def __init__(self, sigma0: float = 5.0, alpha_o: float = 0.25, w_o_scale: float = 0.1, coef_width: float = 20.0,
                 sigma_width: float = 1.0, max_steps: int = 50) -> None:  # fmt: skip
        super().__init__(sigma0, alpha_o, w_o_scale, coef_width, sigma_width, max_steps)


@_with_fields_doc(sigma0="10.0", width="standard deviation", kind="Gaussian", coef_width="10.0")
class GaussianPrior(StablePrior):
    """Gaussian priors of the coefficients (stable index 2), the ``prior="gaussian"`` of the compressed models.

    %(fields)s
    Examples
    --------
    >>> GaussianPrior(alpha_o=0.5)
    GaussianPrior(alpha_o=0.5)
    """

    name = "gaussian"
    index = 2

    def __init__(self, sigma0: float = 10.0, alpha_o: float = 0.25, w_o_scale: float = 0.1, coef_width: float = 10.0,
                 sigma_width: float = 1.0, max_steps: int = 50) -> None:  # fmt: skip
        super().__init__(sigma0, alpha_o, w_o_scale, coef_width, sigma_width, max_steps)


#: The priors by name: ``prior="gaussian"`` is ``prior=GaussianPrior()``.
PRIORS: dict[str, type[StablePrior]] = {cls.name: cls for cls in (CauchyPrior, GaussianPrior)}
