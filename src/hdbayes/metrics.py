"""Evaluation measures for probabilistic classifiers.

These are the measures used in Li's thesis (Bayesian classification with a
correction for feature-selection bias) to compare predictive probabilities:
actual and expected error rates, average minus log probability, the average
squared error (Brier score), calibration tables, expected and actual loss under
a loss matrix, and paired t-tests between methods.

Conventions
-----------
``y_true``
    Integer class labels, shape ``(N,)``, with values in ``{0, ..., G-1}``.
``proba``
    Either a 1-D array ``p`` of ``P(class 1)`` for a binary problem, which is
    treated as the two columns ``[1 - p, p]``, or a 2-D array ``P`` of shape
    ``(N, G)`` with ``G >= 2`` whose rows sum to 1 (within ``1e-6``).

Binary problems (a 1-D ``p`` or a 2-column ``P``) are handled identically: the
guess is class 1 iff ``P(class 1) >= 0.5``, so an exact tie goes to class 1.
For ``G > 2`` the guess is the first class of largest probability.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "CalibrationTable",
    "LossSummary",
    "PairedTTest",
    "average_minus_log_probability",
    "bayes_decision",
    "brier_score",
    "calibration_markdown",
    "calibration_table",
    "error_rate",
    "expected_and_actual_loss",
    "expected_error_rate",
    "paired_t_test",
    "random_lognormal_loss",
]

_ROW_SUM_TOL = 1e-6
_EMPTY_CELL = "\u2013"  # en dash, shown for empty calibration bins


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------


def _numeric_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a float array, raising for non-numeric input and NaN."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
    arr = arr.astype(float)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def _check_proba(proba) -> np.ndarray:
    """Validate predictive probabilities and return them as an ``(N, G)`` array.

    A 1-D ``p`` (probabilities of class 1) becomes the columns ``[1 - p, p]``.
    """
    P = _numeric_array(proba, "proba")
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    if P.ndim != 2:
        raise ValueError(f"proba must be 1-D (binary) or 2-D of shape (N, G), got {P.ndim} dimensions")
    if P.shape[1] < 2:
        raise ValueError(f"proba must have at least 2 columns (classes), got {P.shape[1]}")
    if ((P < 0) | (P > 1)).any():
        raise ValueError("proba contains probabilities outside [0, 1]")
    worst = np.abs(P.sum(axis=1) - 1.0).max()
    if worst > _ROW_SUM_TOL:
        raise ValueError(f"rows of proba must sum to 1 (within {_ROW_SUM_TOL:g}); largest deviation is {worst:.3g}")
    return P


def _check_labels(y_true, n_classes: int, n_samples: int) -> np.ndarray:
    """Validate integer labels in ``0..n_classes-1`` and return them as ``intp``."""
    y = _numeric_array(y_true, "y_true")
    if y.ndim != 1:
        raise ValueError(f"y_true must be 1-D, got shape {y.shape}")
    if not np.isfinite(y).all() or (y != np.round(y)).any():
        raise ValueError("y_true must contain integer class labels")
    if y.shape[0] != n_samples:
        raise ValueError(f"y_true and proba have mismatched lengths: {y.shape[0]} != {n_samples}")
    if (y < 0).any() or (y >= n_classes).any():
        raise ValueError(f"y_true contains labels outside 0..{n_classes - 1}")
    return y.astype(np.intp)


def _check_inputs(y_true, proba) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``(y_true, proba)`` together; return labels and the ``(N, G)`` matrix."""
    P = _check_proba(proba)
    y = _check_labels(y_true, n_classes=P.shape[1], n_samples=P.shape[0])
    return y, P


def _check_loss(loss, n_classes: int) -> np.ndarray:
    """Validate a ``(G, G)`` loss matrix ``L[true, guess]``."""
    L = _numeric_array(loss, "loss")
    if L.shape != (n_classes, n_classes):
        raise ValueError(f"loss must have shape ({n_classes}, {n_classes}) to match proba, got {L.shape}")
    if not np.isfinite(L).all():
        raise ValueError("loss must be finite")
    if (L < 0).any():
        raise ValueError("loss must be non-negative")
    return L


def _check_int(value, name: str, low: int, high: int | None = None) -> int:
    """Validate an integer argument in ``low..high`` (``high`` inclusive, optional)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"in {low}..{high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


_PARAMETER_DOCS = {
    "y_true": "y_true : array-like of int, shape (N,)\n    True class labels in ``0..G-1``.",
    "proba": "proba : array-like, shape (N,) or (N, G)\n    ``P(class 1)`` for a binary problem, or class "
    "probabilities with rows\n    summing to 1.",
}


def _shared_parameters(func):
    """Write the parameters every measure shares (``{y_true}``, ``{proba}`` in the docstring) once."""

    def fill(match):
        indent, name = match.group(1), match.group(2)
        return "\n".join(indent + line for line in _PARAMETER_DOCS[name].splitlines())

    func.__doc__ = re.sub(r"^([ \t]*)\{(y_true|proba)\}$", fill, func.__doc__, flags=re.MULTILINE)
    return func


def _predict(P: np.ndarray) -> np.ndarray:
    """Guesses minimising the 0-1 loss, with the module's tie-breaking rules."""
    if P.shape[1] == 2:
        return (P[:, 1] >= 0.5).astype(np.intp)
    return np.argmax(P, axis=1)


# ---------------------------------------------------------------------------
# Scalar measures
# ---------------------------------------------------------------------------


@_shared_parameters
def error_rate(y_true: ArrayLike, proba: ArrayLike) -> float:
    """Actual error rate of the guesses implied by predictive probabilities.

    Parameters
    ----------
    {y_true}
    {proba}

    Returns
    -------
    float
        Fraction of cases whose guess differs from the true class. For binary
        problems the guess is class 1 iff ``P(class 1) >= 0.5`` (a tie at
        exactly 0.5 goes to class 1); otherwise it is the first class of
        largest probability.

    Examples
    --------
    >>> error_rate([0, 1, 1, 0], [0.2, 0.5, 0.4, 0.1])
    0.25
    >>> error_rate([2, 0], [[0.1, 0.2, 0.7], [0.3, 0.4, 0.3]])
    0.5
    """
    y, P = _check_inputs(y_true, proba)
    return float(np.mean(_predict(P) != y))


@_shared_parameters
def expected_error_rate(proba: ArrayLike) -> float:
    """Error rate expected if the predictive probabilities were correct.

    Parameters
    ----------
    {proba}

    Returns
    -------
    float
        Binary: the mean of ``p * I(p < 0.5) + (1 - p) * I(p >= 0.5)`` with
        ``p = P(class 1)``. Multi-class: the mean of ``1 - max_g P[i, g]``.
        The two agree for ``G = 2``.

    Examples
    --------
    >>> expected_error_rate([0.25, 0.5, 0.75, 0.0])
    0.25
    >>> expected_error_rate([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    0.4
    """
    P = _check_proba(proba)
    if P.shape[1] == 2:
        p = P[:, 1]
        per_case = np.where(p >= 0.5, 1.0 - p, p)
    else:
        per_case = 1.0 - P.max(axis=1)
    return float(np.mean(per_case))


@_shared_parameters
def average_minus_log_probability(y_true: ArrayLike, proba: ArrayLike) -> float:
    """Average minus log probability of the true classes (natural log).

    Parameters
    ----------
    {y_true}
    {proba}

    Returns
    -------
    float
        ``-(1/N) * sum_i log P(y_i | x_i)``. Probabilities are not clipped: if
        any true class has probability exactly 0 the result is ``+inf``.

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.isclose(average_minus_log_probability([1, 0], [0.5, 0.5]), np.log(2)))
    True
    >>> average_minus_log_probability([1], [0.0])
    inf
    """
    y, P = _check_inputs(y_true, proba)
    p_true = P[np.arange(y.shape[0]), y]
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(p_true)))


@_shared_parameters
def brier_score(y_true: ArrayLike, proba: ArrayLike) -> float:
    """Average squared error of the predictive probabilities (Brier score).

    Parameters
    ----------
    {y_true}
    {proba}

    Returns
    -------
    float
        Binary problems (a 1-D ``p`` or a 2-column ``P``): the thesis' average
        squared error ``mean((y - p)^2)`` with ``p = P(class 1)``. This is half
        of the two-column sum below. For ``G > 2``: the mean over cases of
        ``sum_g (I(y_i = g) - P[i, g])^2``.

    Examples
    --------
    >>> brier_score([1, 0], [0.8, 0.4])
    0.1
    >>> brier_score([0], [[0.5, 0.25, 0.25]])
    0.375
    """
    y, P = _check_inputs(y_true, proba)
    if P.shape[1] == 2:
        return float(np.mean((y - P[:, 1]) ** 2))
    onehot = np.eye(P.shape[1])[y]
    return float(np.mean(np.sum((onehot - P) ** 2, axis=1)))


# ---------------------------------------------------------------------------
# Calibration tables
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CalibrationTable:
    """Predicted probabilities against observed frequencies, by category.

    Category ``C`` holds the cases with ``C / n_bins <= p < (C + 1) / n_bins``
    (``p = 1`` goes in the last category).

    Attributes
    ----------
    category : ndarray of int, shape (n_bins,)
        Category numbers ``0..n_bins-1``.
    count : ndarray of int, shape (n_bins,)
        Number of cases in each category.
    mean_predicted : ndarray of float, shape (n_bins,)
        Average predicted probability in each category (NaN if empty).
    actual_fraction : ndarray of float, shape (n_bins,)
        Fraction of the cases in each category that are in the positive class
        (NaN if empty).

    Examples
    --------
    >>> table = calibration_table([0, 1, 1, 1], [0.05, 0.45, 0.95, 1.0])
    >>> table.count.tolist()
    [1, 0, 0, 0, 1, 0, 0, 0, 0, 2]
    >>> print(table.to_markdown(label="k=1"))
    | C | k=1 # | Pred | Actual |
    |---:|---:|---:|---:|
    | 0 | 1 | 0.050 | 0.000 |
    | 1 | 0 | – | – |
    | 2 | 0 | – | – |
    | 3 | 0 | – | – |
    | 4 | 1 | 0.450 | 1.000 |
    | 5 | 0 | – | – |
    | 6 | 0 | – | – |
    | 7 | 0 | – | – |
    | 8 | 0 | – | – |
    | 9 | 2 | 0.975 | 1.000 |
    """

    category: np.ndarray
    count: np.ndarray
    mean_predicted: np.ndarray
    actual_fraction: np.ndarray

    def __post_init__(self):
        columns = {
            "category": np.asarray(self.category, dtype=np.intp),
            "count": np.asarray(self.count, dtype=np.intp),
            "mean_predicted": np.asarray(self.mean_predicted, dtype=float),
            "actual_fraction": np.asarray(self.actual_fraction, dtype=float),
        }
        shapes = {arr.shape for arr in columns.values()}
        if len(shapes) != 1 or len(shapes.pop()) != 1:
            raise ValueError("CalibrationTable columns must be 1-D arrays of the same length")
        for name, arr in columns.items():
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def n_bins(self) -> int:
        """Number of categories."""
        return self.category.shape[0]

    def derived_error_rates(self) -> tuple[float, float]:
        """Actual and expected error rates recovered from the table alone.

        Categories ``C < n_bins / 2`` guess the negative class and the others
        the positive class, so with ``N = sum(count)``::

            actual   = (sum_{C low} #*Actual + sum_{C high} #*(1 - Actual)) / N
            expected = (sum_{C low} #*Pred   + sum_{C high} #*(1 - Pred))   / N

        These equal :func:`error_rate` and :func:`expected_error_rate` of the
        (binary or one-vs-rest) data the table was built from.

        Returns
        -------
        actual : float
            The actual error rate (:func:`error_rate` of the data).
        expected : float
            The expected error rate (:func:`expected_error_rate` of the data).

        Raises
        ------
        ValueError
            If ``n_bins`` is odd (a category would straddle 0.5).

        Examples
        --------
        >>> table = calibration_table([0, 1, 1, 1], [0.05, 0.45, 0.95, 1.0])
        >>> table.derived_error_rates()
        (0.25, 0.1375)
        """
        if self.n_bins % 2:
            raise ValueError("derived error rates need an even number of bins")
        high = self.category >= self.n_bins // 2
        filled = self.count > 0
        actual = np.where(filled, self.actual_fraction, 0.0)
        pred = np.where(filled, self.mean_predicted, 0.0)
        n = self.count.sum()
        wrong = np.where(high, self.count - self.count * actual, self.count * actual)
        expected = np.where(high, self.count - self.count * pred, self.count * pred)
        return float(wrong.sum() / n), float(expected.sum() / n)

    def to_markdown(self, title: str | None = None, label: str | None = None) -> str:
        """Render the table as Markdown, one row per category.

        Parameters
        ----------
        title : str, optional
            A line placed above the table.
        label : str, optional
            Name shown in the count column header (``"<label> #"``).

        Returns
        -------
        str
            Rows ``| C | # | Pred | Actual |`` with 3 decimals; empty
            categories show "–".
        """
        return calibration_markdown({label or "": self}, title=title)


@_shared_parameters
def calibration_table(
        y_true: ArrayLike, p: ArrayLike, n_bins: int = 10, *, positive_class: int = 1) -> CalibrationTable:
    """Tabulate predicted probabilities of one class against observed frequencies.

    Parameters
    ----------
    {y_true}
    p : array-like, shape (N,) or (N, G)
        ``P(class 1)`` for a binary problem, or class probabilities with rows
        summing to 1.
    n_bins : int, default 10
        Number of categories; category ``C = min(floor(p * n_bins), n_bins - 1)``,
        so with 10 bins ``C`` is the first decimal of ``p`` and ``p = 1`` is in
        category 9.
    positive_class : int, default 1
        The class whose probability is tabulated (one-vs-rest); the actual
        fraction is the fraction of cases with ``y_true == positive_class``.

    Returns
    -------
    CalibrationTable
        For each of the ``n_bins`` categories, its number of cases, their mean predicted
        probability and the fraction of them in ``positive_class``.

    Examples
    --------
    >>> table = calibration_table([0, 0, 1, 1], [0.1, 0.15, 0.8, 0.85], n_bins=2)
    >>> table.count.tolist(), table.mean_predicted.tolist(), table.actual_fraction.tolist()
    ([2, 2], [0.125, 0.825], [0.0, 1.0])
    """
    n_bins = _check_int(n_bins, "n_bins", 1)
    y, P = _check_inputs(y_true, p)
    positive_class = _check_int(positive_class, "positive_class", 0, P.shape[1] - 1)
    prob = P[:, positive_class]
    positive = (y == positive_class).astype(float)
    bins = np.minimum(np.floor(prob * n_bins).astype(np.intp), n_bins - 1)

    count = np.bincount(bins, minlength=n_bins)
    nan = np.full(n_bins, np.nan)
    filled = count > 0
    mean_predicted = np.divide(np.bincount(bins, prob, n_bins), count, out=nan.copy(), where=filled)
    actual_fraction = np.divide(np.bincount(bins, positive, n_bins), count, out=nan, where=filled)
    return CalibrationTable(np.arange(n_bins), count, mean_predicted, actual_fraction)


def _format_probability(value: float) -> str:
    return _EMPTY_CELL if np.isnan(value) else f"{value:.3f}"


def calibration_markdown(tables: dict[str, CalibrationTable], title: str | None = None) -> str:
    """Render calibration tables side by side, as in the thesis.

    Parameters
    ----------
    tables : dict of str to CalibrationTable
        Tables in column order, keyed by the name shown in their count column
        (for example ``{"Corrected": t1, "Uncorrected": t2}``). All tables
        must have the same number of categories.
    title : str, optional
        A line placed above the table.

    Returns
    -------
    str
        Markdown with header ``| C | <name> # | Pred | Actual | <name2> # | ...``,
        probabilities to 3 decimals and "–" for empty categories.

    Examples
    --------
    >>> a = calibration_table([0, 1], [0.2, 0.7], n_bins=2)
    >>> b = calibration_table([0, 1], [0.6, 0.9], n_bins=2)
    >>> print(calibration_markdown({"A": a, "B": b}))
    | C | A # | Pred | Actual | B # | Pred | Actual |
    |---:|---:|---:|---:|---:|---:|---:|
    | 0 | 1 | 0.200 | 0.000 | 0 | – | – |
    | 1 | 1 | 0.700 | 1.000 | 2 | 0.750 | 0.500 |
    """
    if not isinstance(tables, dict) or not tables:
        raise ValueError("tables must be a non-empty dict of name -> CalibrationTable")
    for name, table in tables.items():
        if not isinstance(table, CalibrationTable):
            raise TypeError(f"tables[{name!r}] is not a CalibrationTable")
    first = next(iter(tables.values()))
    if any(not np.array_equal(t.category, first.category) for t in tables.values()):
        raise ValueError("all calibration tables must have the same categories")

    header = ["C"]
    for name in tables:
        header += [f"{name} #" if name else "#", "Pred", "Actual"]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---:|" * len(header),
    ]
    for row, category in enumerate(first.category):
        cells = [str(category)]
        for table in tables.values():
            cells += [
                str(table.count[row]),
                _format_probability(table.mean_predicted[row]),
                _format_probability(table.actual_fraction[row]),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    if title is not None:
        lines[:0] = [title, ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Loss matrices
# ---------------------------------------------------------------------------


class LossSummary(NamedTuple):
    """Result of :func:`expected_and_actual_loss`.

    Attributes
    ----------
    expected : float
        Average over cases of the smallest expected loss.
    actual : float
        Average over cases of ``L[y_true, decision]``.
    decisions : ndarray of shape (N,)
        The guesses minimising expected loss.
    """

    expected: float
    actual: float
    decisions: np.ndarray


def _expected_losses(P: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``EL[i, g'] = sum_y P[i, y] * L[y, g']``."""
    return P @ L


@_shared_parameters
def bayes_decision(proba: ArrayLike, loss: ArrayLike) -> np.ndarray:
    """The guesses minimising expected loss under the predictive probabilities.

    Parameters
    ----------
    {proba}
    loss : array-like, shape (G, G)
        Non-negative, finite loss matrix ``L[true, guess]``.

    Returns
    -------
    ndarray of int, shape (N,)
        ``argmin_g' sum_y P[i, y] * L[y, g']``; ties go to the lowest class.
        So under 0-1 loss a binary tie at exactly 0.5 gives class 0 here,
        whereas :func:`error_rate` guesses class 1; other cases agree.

    Examples
    --------
    >>> loss = [[0, 1], [5, 0]]  # missing class 1 costs five times as much
    >>> bayes_decision([0.1, 0.2, 0.9], loss).tolist()
    [0, 1, 1]
    """
    P = _check_proba(proba)
    L = _check_loss(loss, P.shape[1])
    return np.argmin(_expected_losses(P, L), axis=1)


@_shared_parameters
def expected_and_actual_loss(y_true: ArrayLike, proba: ArrayLike, loss: ArrayLike) -> LossSummary:
    """Average expected and actual loss of the Bayes decisions.

    Parameters
    ----------
    {y_true}
    {proba}
    loss : array-like, shape (G, G)
        Non-negative, finite loss matrix ``L[true, guess]``.

    Returns
    -------
    LossSummary
        ``expected``: mean over cases of ``min_g' EL(g')`` with
        ``EL(g') = sum_y P[i, y] * L[y, g']``; ``actual``: mean of
        ``L[y_true, decision]``; ``decisions``: the minimising guesses (see
        :func:`bayes_decision`). With the 0-1 loss these are the expected and
        actual error rates (barring exact ties).

    Examples
    --------
    >>> summary = expected_and_actual_loss([0, 0], [0.1, 0.2], [[0, 1], [5, 0]])
    >>> round(summary.expected, 6), summary.actual, summary.decisions.tolist()
    (0.65, 0.5, [0, 1])
    """
    y, P = _check_inputs(y_true, proba)
    L = _check_loss(loss, P.shape[1])
    expected_losses = _expected_losses(P, L)
    decisions = np.argmin(expected_losses, axis=1)
    return LossSummary(
        expected=float(np.mean(expected_losses.min(axis=1))),
        actual=float(np.mean(L[y, decisions])),
        decisions=decisions,
    )


def random_lognormal_loss(
        n_classes: int, sd: float = 2.0,
        random_state: int | np.random.Generator | np.random.RandomState | None = None) -> np.ndarray:
    """Random loss matrix with log-normal off-diagonal entries.

    Parameters
    ----------
    n_classes : int
        Number of classes ``G >= 2``.
    sd : float, default 2.0
        Standard deviation of the log of the off-diagonal losses.
    random_state : int, numpy.random.Generator or None
        Seed or generator, passed to :func:`numpy.random.default_rng`.

    Returns
    -------
    ndarray, shape (G, G)
        ``L[true, guess]`` with zero diagonal and off-diagonal entries i.i.d.
        ``exp(N(0, sd^2))``, drawn in row-major order.

    Examples
    --------
    >>> L = random_lognormal_loss(3, random_state=0)
    >>> L.shape, L.diagonal().tolist(), bool((L[~np.eye(3, dtype=bool)] > 0).all())
    ((3, 3), [0.0, 0.0, 0.0], True)
    """
    n_classes = _check_int(n_classes, "n_classes", 2)
    if not np.isfinite(sd) or sd < 0:
        raise ValueError(f"sd must be finite and non-negative, got {sd!r}")
    rng = np.random.default_rng(random_state)
    off_diagonal = ~np.eye(n_classes, dtype=bool)
    loss = np.zeros((n_classes, n_classes))
    loss[off_diagonal] = np.exp(rng.normal(0.0, sd, size=n_classes * (n_classes - 1)))
    return loss


# ---------------------------------------------------------------------------
# Comparing methods
# ---------------------------------------------------------------------------


class PairedTTest(NamedTuple):
    """Result of :func:`paired_t_test`.

    Attributes
    ----------
    mean_difference : float
        Mean of ``a - b``.
    statistic : float
        The t statistic.
    pvalue : float
        Two-sided p-value.
    """

    mean_difference: float
    statistic: float
    pvalue: float


def paired_t_test(a: ArrayLike, b: ArrayLike) -> PairedTTest:
    """Paired two-sided t-test of ``a`` against ``b``.

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
        Paired measurements (for example per-replication error rates of two
        methods), with ``n >= 2``.

    Returns
    -------
    PairedTTest
        ``(mean_difference, statistic, pvalue)``: the mean of ``a - b``, the t
        statistic and the two-sided p-value of
        :func:`scipy.stats.ttest_rel`. If all differences are equal the
        statistic and p-value are those scipy returns (inf or NaN).

    Examples
    --------
    >>> result = paired_t_test([0.30, 0.28, 0.35, 0.31], [0.25, 0.27, 0.30, 0.26])
    >>> round(result.mean_difference, 3), round(result.statistic, 3), round(result.pvalue, 3)
    (0.04, 4.0, 0.028)
    """
    a = _numeric_array(a, "a")
    b = _numeric_array(b, "b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"a and b must be 1-D, got shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise ValueError(f"a and b have mismatched lengths: {a.shape[0]} != {b.shape[0]}")
    if a.shape[0] < 2:
        raise ValueError("paired t-test needs at least 2 pairs")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite")
    from scipy import stats  # here, not at import: fitting and scoring do not need scipy.stats

    result = stats.ttest_rel(a, b)
    return PairedTTest(float(np.mean(a - b)), float(result.statistic), float(result.pvalue))
