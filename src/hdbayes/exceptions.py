"""The exceptions hdbayes raises for bad input, and the warning for arrays unlike the training arrays.

Every check of user input (data, option values, files) raises :class:`InputValueError`
or :class:`InputTypeError`. They subclass :class:`ValueError` and :class:`TypeError`, so
scikit-learn's conventions (and ``except ValueError``) keep working, while the command
line can tell a user's mistake (exit status 2, one line) from a bug in hdbayes (a
traceback and exit status 1): any other exception is a bug and is reported as one.

Parameter errors found by scikit-learn's ``_parameter_constraints`` validation
(:class:`sklearn.utils._param_validation.InvalidParameterError`) count as input errors too.
"""

from __future__ import annotations

__all__ = ["AtypicalArrayWarning", "InputTypeError", "InputValueError", "is_input_error"]


class InputValueError(ValueError):
    """A value given by the user is wrong.

    Bad data (NaN, one class, non-binary values, overflow), an option out of range, k > p, a malformed file.

    Parameters
    ----------
    *args : object
        The message, as for :class:`ValueError`.
    location : tuple of (int, int or str), optional
        For a bad value in the data, where it is: its row in X (0-based, in the X the user passed) and its
        feature (the name in ``feature_names_in_`` when X had names, else the column index). The command line
        turns it into the file, line and column of the CSV.
    """

    def __init__(self, *args: object, location: tuple[int, int | str] | None = None) -> None:
        super().__init__(*args)
        self.location = location

    def __reduce__(self):
        return _rebuild_input_value_error, (type(self), self.args, self.location)


def _rebuild_input_value_error(cls, args, location):
    """Unpickle an :class:`InputValueError` with its location (joblib workers send errors back pickled)."""
    return cls(*args, location=location)


class InputTypeError(TypeError):
    """A value given by the user has the wrong type (a string where a number is needed)."""


def is_input_error(error: BaseException) -> bool:
    """Whether ``error`` reports bad user input rather than a bug.

    Parameters
    ----------
    error : BaseException
        An exception raised by hdbayes or scikit-learn.

    Returns
    -------
    bool
        True for :class:`InputValueError`, :class:`InputTypeError` and scikit-learn's
        ``InvalidParameterError``.
    """
    if isinstance(error, (InputValueError, InputTypeError)):
        return True
    try:
        from sklearn.utils._param_validation import InvalidParameterError
    except ImportError:  # pragma: no cover - scikit-learn moved it
        return False
    return isinstance(error, InvalidParameterError)


class AtypicalArrayWarning(UserWarning):
    """Some arrays given to a prediction are unlike the training arrays.

    See :meth:`hdbayes.BayesianLinearClassifier.atypicality`; their predictions were drawn towards the training
    class frequencies.
    """
