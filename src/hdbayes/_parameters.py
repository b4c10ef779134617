"""The base of parameter objects: a group of an estimator's settings passed as one parameter.

A parameter object (``BiasCorrectedMixture(sampler=MixtureSampler(alpha_shape=1.0))``) holds a model's prior
hyperparameters and its sampler's tuning with the model's defaults, in the manner of a scikit-learn estimator's
parameters: its fields are the keyword arguments of ``__init__``, stored unchanged, so ``get_params``/``set_params``,
``clone``, ``GridSearchCV`` over ``<parameter>__<field>``, ``repr`` and pickling work; it is validated by its own
``_parameter_constraints`` (:meth:`ParameterObject.checked`) and compared by value.

A foundation (it imports numpy and scikit-learn only), so that every model package may build on it:
:class:`hdbayes.selection_bias.MixtureSampler`, the Gaussian classifier's variants
(:class:`hdbayes.selection_bias.gaussian._variant.GaussianVariant`) and the compressed models' priors
(:class:`hdbayes.interactions.priors.StablePrior`) do. An estimator that also takes such a parameter by name
(``variant="per-feature"``, ``prior="cauchy"``, ``sampler=None``) mixes in :class:`NamedParameterObjects`, so that
``set_params(variant__alpha_x=3.0)`` sets the field of the named object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator

if TYPE_CHECKING:
    from typing import Self

__all__ = ["NamedParameterObjects", "ParameterObject", "same_value"]


def same_value(a: object, b: object) -> bool:
    """Whether two parameter values are equal (numbers, strings, arrays or None).

    Parameters
    ----------
    a, b : object
        The values.

    Returns
    -------
    bool
        True when they are equal (a string only equals a string).
    """
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):  # pragma: no cover - values that numpy cannot hold
        return a == b


class ParameterObject(BaseEstimator):
    """Base of the parameter objects (not an estimator on its own).

    A subclass takes its fields as keyword arguments of ``__init__``, stores them unchanged and declares their
    ``_parameter_constraints``.
    """

    _parameter_constraints: dict = {}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self.get_params(deep=False), other.get_params(deep=False)
        return all(same_value(value, theirs[key]) for key, value in mine.items())

    __hash__ = None  # mutable (set_params), compared by value

    def checked(self) -> Self:
        """The object itself, its fields checked against ``_parameter_constraints``.

        Returns
        -------
        self
            The same object.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            Naming the field and the class (a subclass of ValueError and TypeError).
        """
        self._validate_params()
        return self


class NamedParameterObjects:
    """Mixin of an estimator whose parameter objects may be given by name: ``set_params(<parameter>__<field>=v)``
    (as ``GridSearchCV`` calls it) on a parameter given by name sets ``<parameter>`` to the named object with its
    defaults and ``v`` in the field, where scikit-learn's ``set_params`` would fail on the name.

    A subclass lists ``_named_parameter_objects = {parameter: {name: ParameterObject subclass}}`` (``None`` may be
    a name); it precedes ``BaseEstimator`` among the bases.
    """

    _named_parameter_objects: dict = {}

    def set_params(self, **params: object) -> Self:
        """Set the estimator's parameters; a parameter object given by name becomes the named object first.

        scikit-learn's ``set_params``, except that ``<parameter>__<field>`` on a parameter given by name (or None)
        sets the field of the named object with its defaults.

        Parameters
        ----------
        **params : dict
            Parameters, ``<parameter>__<field>`` for the field of a parameter object.

        Returns
        -------
        self
            The estimator.
        """
        for name in self._named_parameter_objects:
            if not any(key.startswith(name + "__") for key in params):
                continue
            value = params.get(name, getattr(self, name, None))
            if not isinstance(value, ParameterObject):
                params = {**params, name: self._named_object(name, value, f"cannot set {name}__... fields")}
        return super().set_params(**params)

    def _parameter_object(self, name: str) -> ParameterObject:
        """The object that parameter ``name`` stands for in a fit, its fields checked: the object given, or for a
        name (or None) a new object of that name with its defaults."""
        return self._named_object(name, getattr(self, name), f"cannot use {name}").checked()

    def _named_object(self, name, value, purpose):
        """``value`` if it is a parameter object, else a new object of the kind it names (``purpose``: the start
        of the message refusing a value that is neither)."""
        if isinstance(value, ParameterObject):
            return value
        named = self._named_parameter_objects[name]
        try:
            return named[value]()
        except (KeyError, TypeError):
            choices = ", ".join(repr(key) for key in named)
            raise ValueError(
                f"{purpose}: {name}={value!r} is neither one of {choices} nor a parameter object"
            ) from None
