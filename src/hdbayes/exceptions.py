"""The exceptions hdbayes raises for bad input.

Every check of user input (data, option values, files) raises :class:`InputValueError`
or :class:`InputTypeError`. They subclass :class:`ValueError` and :class:`TypeError`, so
scikit-learn's conventions (and ``except ValueError``) keep working, while the command
line can tell a user's mistake (exit status 2, one line) from a bug in hdbayes (a
traceback and exit status 1): any other exception is a bug and is reported as one.

Parameter errors found by scikit-learn's ``_parameter_constraints`` validation
(:class:`sklearn.utils._param_validation.InvalidParameterError`) count as input errors too.
"""

from __future__ import annotations

__all__ = ["InputTypeError", "InputValueError", "is_input_error"]


class InputValueError(ValueError):
    """A value given by the user is wrong.

    Bad data (NaN, one class, non-binary values, overflow), an option out of range, k > p, a malformed file.
    """


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
