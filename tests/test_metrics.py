"""Tests for hdbayes.metrics."""

import math

import numpy as np
import pytest
from scipy import stats

from hdbayes.metrics import (
    CalibrationTable,
    LossSummary,
    average_minus_log_probability,
    bayes_decision,
    brier_score,
    calibration_markdown,
    calibration_table,
    error_rate,
    expected_and_actual_loss,
    expected_error_rate,
    paired_t_test,
    random_lognormal_loss,
)

ZERO_ONE_2 = 1.0 - np.eye(2)

# Calibration tables quoted in Li's thesis for k = 100 (rows C = 0..9: count, Pred, Actual),
# with the actual and expected error rates the thesis derives from them.
THESIS_TABLES = {
    "corrected": (
        [
            (155, 0.067, 0.077),
            (247, 0.151, 0.162),
            (220, 0.247, 0.286),
            (225, 0.352, 0.356),
            (237, 0.450, 0.494),
            (227, 0.545, 0.586),
            (202, 0.650, 0.728),
            (214, 0.749, 0.785),
            (182, 0.847, 0.857),
            (91, 0.935, 0.923),
        ],
        0.270,
        0.275,
    ),
    "uncorrected": (
        [
            (717, 0.017, 0.199),
            (133, 0.150, 0.391),
            (70, 0.251, 0.429),
            (68, 0.351, 0.515),
            (58, 0.451, 0.500),
            (78, 0.552, 0.603),
            (77, 0.654, 0.532),
            (80, 0.746, 0.662),
            (98, 0.852, 0.633),
            (621, 0.979, 0.818),
        ],
        0.266,
        0.105,
    ),
}


def realise_table(rows):
    """Cases realising calibration rows: `count` cases at p = Pred, round(count*Actual) of
    them positive."""
    p, y = [], []
    for count, pred, actual in rows:
        positives = round(count * actual)
        p.append(np.full(count, pred))
        y.append(np.r_[np.ones(positives, int), np.zeros(count - positives, int)])
    return np.concatenate(y), np.concatenate(p)


def random_multiclass(n, g, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(g), size=n)
    y = np.array([rng.choice(g, p=row) for row in P])
    return y, P


# ---------------------------------------------------------------------------
# Hand-computed cases
# ---------------------------------------------------------------------------


def test_error_rate_binary_threshold_and_tie_goes_to_class_1():
    y = [0, 1, 1, 1, 0]
    p = [0.2, 0.5, 0.5, 0.49, 0.51]
    # guesses: 0, 1, 1, 0, 1 -> wrong at cases 3 and 4 (ties going to class 0 would give 4/5)
    assert error_rate(y, p) == pytest.approx(2 / 5)
    assert error_rate(y, np.column_stack([1 - np.array(p), p])) == pytest.approx(2 / 5)


def test_error_rate_multiclass_uses_first_max():
    P = [[0.4, 0.4, 0.2], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]
    assert error_rate([1, 2, 1], P) == pytest.approx(1 / 3)  # first guess is class 0
    assert error_rate([0, 2, 1], P) == 0.0


def test_expected_error_rate_hand_computed():
    assert expected_error_rate([0.1, 0.5, 0.8, 1.0]) == pytest.approx((0.1 + 0.5 + 0.2 + 0.0) / 4)
    P = [[0.7, 0.2, 0.1], [0.3, 0.3, 0.4]]
    assert expected_error_rate(P) == pytest.approx((0.3 + 0.6) / 2)


def test_average_minus_log_probability_hand_computed():
    y = [1, 0, 1]
    p = [0.8, 0.25, 0.5]
    expected = -(math.log(0.8) + math.log(0.75) + math.log(0.5)) / 3
    assert average_minus_log_probability(y, p) == pytest.approx(expected)
    P = [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    expected = -(math.log(0.5) + math.log(0.3)) / 2
    assert average_minus_log_probability([2, 1], P) == pytest.approx(expected)


def test_average_minus_log_probability_zero_probability_gives_inf_without_warning():
    # pyproject turns RuntimeWarnings raised in hdbayes into errors, so this also checks
    # that log(0) is computed silently.
    assert average_minus_log_probability([1, 0], [0.0, 0.3]) == math.inf
    assert average_minus_log_probability([0, 0], [1.0, 0.3]) == math.inf
    # a zero probability for a class that did not occur is harmless
    assert average_minus_log_probability([1], [1.0]) == 0.0


def test_brier_score_binary_is_thesis_average_squared_error():
    y = [1, 0, 1, 0]
    p = [0.9, 0.2, 0.4, 0.0]
    expected = (0.01 + 0.04 + 0.36 + 0.0) / 4
    assert brier_score(y, p) == pytest.approx(expected)
    assert brier_score(y, np.column_stack([1 - np.array(p), p])) == pytest.approx(expected)


def test_brier_score_multiclass_sums_over_classes():
    P = [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]
    y = [0, 1]
    expected = ((0.25 + 0.0625 + 0.0625) + (0.01 + 0.81 + 0.64)) / 2
    assert brier_score(y, P) == pytest.approx(expected)


# ---------------------------------------------------------------------------
# 1-D p versus 2-column P, and G = 2 versus the multi-class formulas
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [error_rate, average_minus_log_probability, brier_score])
def test_binary_1d_and_two_column_agree(metric):
    rng = np.random.default_rng(1)
    p = np.r_[rng.uniform(size=200), 0.5, 0.0, 1.0]
    y = (rng.uniform(size=p.size) < p).astype(int)
    y[-3:] = [0, 0, 1]
    P = np.column_stack([1 - p, p])
    assert metric(y, p) == pytest.approx(metric(y, P))


def test_binary_1d_and_two_column_agree_for_calibration_and_expected_error():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    P = np.column_stack([1 - p, p])
    assert expected_error_rate(p) == pytest.approx(expected_error_rate(P))
    t1, t2 = calibration_table(y, p), calibration_table(y, P)
    np.testing.assert_array_equal(t1.count, t2.count)
    np.testing.assert_allclose(t1.mean_predicted, t2.mean_predicted)
    np.testing.assert_allclose(t1.actual_fraction, t2.actual_fraction)


def test_expected_error_rate_multiclass_formula_matches_binary_for_two_classes():
    rng = np.random.default_rng(3)
    p = np.r_[rng.uniform(size=500), 0.5]
    binary_formula = np.mean(p * (p < 0.5) + (1 - p) * (p >= 0.5))
    P = np.column_stack([1 - p, p])
    multiclass_formula = np.mean(1 - P.max(axis=1))
    assert expected_error_rate(p) == pytest.approx(binary_formula)
    assert expected_error_rate(P) == pytest.approx(multiclass_formula)
    assert binary_formula == pytest.approx(multiclass_formula)


def test_brier_binary_is_half_the_two_column_sum():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=100)
    y = (rng.uniform(size=100) < p).astype(int)
    P = np.column_stack([1 - p, p])
    two_column_sum = np.mean(np.sum((np.eye(2)[y] - P) ** 2, axis=1))
    assert brier_score(y, p) == pytest.approx(two_column_sum / 2)


# ---------------------------------------------------------------------------
# Calibration tables
# ---------------------------------------------------------------------------


def test_calibration_table_bins_counts_and_means():
    p = np.array([0.0, 0.05, 0.1, 0.19, 0.3, 0.5, 0.55, 0.7, 0.99, 1.0, 0.95])
    y = np.array([0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0])
    t = calibration_table(y, p)
    np.testing.assert_array_equal(t.category, np.arange(10))
    np.testing.assert_array_equal(t.count, [2, 2, 0, 1, 0, 2, 0, 1, 0, 3])
    np.testing.assert_allclose(
        t.mean_predicted[[0, 1, 3, 5, 7, 9]], [0.025, 0.145, 0.3, 0.525, 0.7, (0.99 + 1.0 + 0.95) / 3]
    )
    np.testing.assert_allclose(t.actual_fraction[[0, 1, 3, 5, 7, 9]], [0.0, 0.5, 1.0, 0.5, 1.0, 2 / 3])
    assert np.isnan(t.mean_predicted[[2, 4, 6, 8]]).all()
    assert np.isnan(t.actual_fraction[[2, 4, 6, 8]]).all()


def test_calibration_table_bin_edges_are_robust_to_floating_point():
    # k/10 for k = 1..9 must land in category k (the first decimal), 1.0 in the last.
    p = np.r_[np.arange(1, 10) / 10, 1.0]
    t = calibration_table(np.zeros(p.size, int), p)
    np.testing.assert_array_equal(t.count, [0, 1, 1, 1, 1, 1, 1, 1, 1, 2])


def test_calibration_table_synthetic_data_recovers_frequencies():
    rng = np.random.default_rng(5)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    t = calibration_table(y, p, n_bins=5)
    assert t.count.sum() == p.size
    np.testing.assert_array_equal(t.count, np.bincount((p * 5).astype(int), minlength=5))
    np.testing.assert_allclose(t.mean_predicted, np.arange(5) / 5 + 0.1, atol=0.005)
    np.testing.assert_allclose(t.actual_fraction, t.mean_predicted, atol=0.03)


def test_calibration_table_multiclass_one_vs_rest():
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.85, 0.05], [0.05, 0.15, 0.8], [0.3, 0.6, 0.1]])
    y = np.array([0, 1, 2, 2])
    t = calibration_table(y, P, positive_class=2)
    # column 2 = [0.1, 0.05, 0.8, 0.1] -> categories 1, 0, 8, 1
    np.testing.assert_array_equal(t.count, [1, 2, 0, 0, 0, 0, 0, 0, 1, 0])
    np.testing.assert_allclose(t.mean_predicted[[0, 1, 8]], [0.05, 0.1, 0.8])
    np.testing.assert_allclose(t.actual_fraction[[0, 1, 8]], [0.0, 0.5, 1.0])
    t1 = calibration_table(y, P)  # default positive_class=1: [0.2, 0.85, 0.15, 0.6]
    np.testing.assert_array_equal(t1.count, [0, 1, 1, 0, 0, 0, 1, 0, 1, 0])
    np.testing.assert_allclose(t1.actual_fraction[[1, 2, 6, 8]], [0.0, 0.0, 0.0, 1.0])


def test_calibration_table_is_read_only():
    t = calibration_table([0, 1], [0.2, 0.8])
    with pytest.raises(ValueError, match="read-only"):
        t.count[0] = 5
    with pytest.raises(AttributeError):
        t.count = np.zeros(10)


@pytest.mark.parametrize("name", list(THESIS_TABLES))
def test_reproduces_thesis_error_rates_from_calibration_table(name):
    rows, thesis_actual, thesis_expected = THESIS_TABLES[name]
    y, p = realise_table(rows)
    assert p.size == 2000

    assert error_rate(y, p) == pytest.approx(thesis_actual, abs=0.002)
    assert expected_error_rate(p) == pytest.approx(thesis_expected, abs=0.002)

    # The thesis derives these from the table alone; the table we rebuild must match it.
    table = calibration_table(y, p)
    counts, preds, actuals = map(np.array, zip(*rows))
    np.testing.assert_array_equal(table.count, counts)
    np.testing.assert_allclose(table.mean_predicted, preds)
    np.testing.assert_allclose(table.actual_fraction, actuals, atol=0.0005 + 0.5 / counts.min())
    low, high = slice(0, 5), slice(5, 10)
    derived_actual = (counts[low] @ actuals[low] + counts[high] @ (1 - actuals[high])) / 2000
    derived_expected = (counts[low] @ preds[low] + counts[high] @ (1 - preds[high])) / 2000
    assert derived_actual == pytest.approx(thesis_actual, abs=0.002)
    assert derived_expected == pytest.approx(thesis_expected, abs=0.002)
    assert table.derived_error_rates() == pytest.approx((error_rate(y, p), expected_error_rate(p)))

    quoted = CalibrationTable(np.arange(10), counts, preds, actuals)
    assert quoted.derived_error_rates() == pytest.approx((derived_actual, derived_expected))


def test_to_markdown_layout():
    t = calibration_table([0, 1, 1], [0.05, 0.5, 0.55], n_bins=4)
    text = t.to_markdown(title="Table 1", label="Corrected")
    assert text.splitlines() == [
        "Table 1",
        "",
        "| C | Corrected # | Pred | Actual |",
        "|---:|---:|---:|---:|",
        "| 0 | 1 | 0.050 | 0.000 |",
        "| 1 | 0 | \u2013 | \u2013 |",
        "| 2 | 2 | 0.525 | 1.000 |",
        "| 3 | 0 | \u2013 | \u2013 |",
    ]
    assert t.to_markdown().splitlines()[0] == "| C | # | Pred | Actual |"


def test_calibration_markdown_side_by_side():
    rows_c, _, _ = THESIS_TABLES["corrected"]
    rows_u, _, _ = THESIS_TABLES["uncorrected"]
    tables = {
        "Corrected": calibration_table(*realise_table(rows_c)),
        "Uncorrected": calibration_table(*realise_table(rows_u)),
    }
    lines = calibration_markdown(tables).splitlines()
    assert lines[0] == "| C | Corrected # | Pred | Actual | Uncorrected # | Pred | Actual |"
    assert lines[2] == "| 0 | 155 | 0.067 | 0.077 | 717 | 0.017 | 0.199 |"
    assert lines[-1] == "| 9 | 91 | 0.935 | 0.923 | 621 | 0.979 | 0.818 |"
    assert len(lines) == 12


def test_calibration_markdown_validation():
    with pytest.raises(ValueError, match="non-empty dict"):
        calibration_markdown({})
    with pytest.raises(TypeError, match="not a CalibrationTable"):
        calibration_markdown({"a": "table"})
    a = calibration_table([0, 1], [0.2, 0.8], n_bins=10)
    b = calibration_table([0, 1], [0.2, 0.8], n_bins=5)
    with pytest.raises(ValueError, match="same categories"):
        calibration_markdown({"a": a, "b": b})


def test_derived_error_rates_needs_even_bins():
    t = calibration_table([0, 1], [0.2, 0.8], n_bins=3)
    with pytest.raises(ValueError, match="even number of bins"):
        t.derived_error_rates()


# ---------------------------------------------------------------------------
# Loss matrices
# ---------------------------------------------------------------------------


def test_zero_one_loss_reproduces_error_rates_binary():
    y, p = realise_table(THESIS_TABLES["uncorrected"][0])
    summary = expected_and_actual_loss(y, p, ZERO_ONE_2)
    assert isinstance(summary, LossSummary)
    assert summary.actual == pytest.approx(error_rate(y, p))
    assert summary.expected == pytest.approx(expected_error_rate(p))
    np.testing.assert_array_equal(summary.decisions, (p >= 0.5).astype(int))


def test_zero_one_loss_reproduces_error_rates_multiclass():
    y, P = random_multiclass(400, 4, seed=6)
    summary = expected_and_actual_loss(y, P, 1.0 - np.eye(4))
    assert summary.actual == pytest.approx(error_rate(y, P))
    assert summary.expected == pytest.approx(expected_error_rate(P))
    np.testing.assert_array_equal(summary.decisions, P.argmax(axis=1))


def test_expected_and_actual_loss_hand_computed():
    L = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [3.0, 3.0, 0.0]])
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    # EL row 0: [0.3*2+0.2*3, 0.5+0.2*3, 0.5*4+0.3] = [1.2, 1.1, 2.3] -> guess 1
    # EL row 1: [0.2+2.4, 0.1+2.4, 0.4+0.1] = [2.6, 2.5, 0.5] -> guess 2
    summary = expected_and_actual_loss([0, 1], P, L)
    np.testing.assert_array_equal(summary.decisions, [1, 2])
    assert summary.expected == pytest.approx((1.1 + 0.5) / 2)
    assert summary.actual == pytest.approx((L[0, 1] + L[1, 2]) / 2)
    np.testing.assert_array_equal(bayes_decision(P, L), [1, 2])


def test_bayes_decision_asymmetric_binary_loss_shifts_threshold():
    # guessing 0 when the truth is 1 costs 3, so guess 1 once p > 1/4
    L = [[0, 1], [3, 0]]
    np.testing.assert_array_equal(bayes_decision([0.2, 0.26, 0.6], L), [0, 1, 1])


def test_random_lognormal_loss_properties_and_reproducibility():
    L = random_lognormal_loss(5, sd=2.0, random_state=123)
    assert L.shape == (5, 5)
    np.testing.assert_array_equal(np.diag(L), 0.0)
    off = L[~np.eye(5, dtype=bool)]
    assert (off > 0).all()
    np.testing.assert_array_equal(L, random_lognormal_loss(5, sd=2.0, random_state=123))
    np.testing.assert_array_equal(L, random_lognormal_loss(5, sd=2.0, random_state=np.random.default_rng(123)))
    assert not np.array_equal(L, random_lognormal_loss(5, sd=2.0, random_state=124))
    np.testing.assert_array_equal(random_lognormal_loss(3, sd=0.0, random_state=0), 1.0 - np.eye(3))


def test_random_lognormal_loss_log_entries_have_requested_sd():
    logs = np.concatenate(
        [
            np.log(random_lognormal_loss(10, sd=2.0, random_state=np.random.default_rng(s))[~np.eye(10, dtype=bool)])
            for s in range(50)
        ]
    )
    assert logs.mean() == pytest.approx(0.0, abs=0.1)
    assert logs.std() == pytest.approx(2.0, abs=0.1)


def test_random_lognormal_loss_validation():
    with pytest.raises(ValueError, match="at least 2"):
        random_lognormal_loss(1)
    with pytest.raises(TypeError, match="integer"):
        random_lognormal_loss(2.5)
    with pytest.raises(ValueError, match="sd"):
        random_lognormal_loss(3, sd=-1.0)


# ---------------------------------------------------------------------------
# Paired t-test
# ---------------------------------------------------------------------------


def test_paired_t_test_matches_scipy_and_hand_computation():
    a = np.array([0.30, 0.28, 0.35, 0.31])
    b = np.array([0.25, 0.27, 0.30, 0.26])
    mean_diff, t, pvalue = paired_t_test(a, b)
    assert mean_diff == pytest.approx(0.04)
    assert t == pytest.approx(4.0)  # differences 0.05, 0.01, 0.05, 0.05: sd 0.02, se 0.01
    assert pvalue == pytest.approx(2 * stats.t.sf(4.0, df=3))
    reverse = paired_t_test(b, a)
    assert reverse.mean_difference == pytest.approx(-0.04)
    assert reverse.statistic == pytest.approx(-4.0)
    assert reverse.pvalue == pytest.approx(pvalue)


def test_paired_t_test_validation():
    with pytest.raises(ValueError, match="mismatched lengths"):
        paired_t_test([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2"):
        paired_t_test([1.0], [2.0])
    with pytest.raises(ValueError, match="NaN"):
        paired_t_test([1.0, np.nan], [2.0, 3.0])
    with pytest.raises(ValueError, match="empty"):
        paired_t_test([], [])


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


def zero_one_loss_summary(y, proba):
    n_classes = np.shape(proba)[-1] if np.ndim(proba) == 2 else 2
    return expected_and_actual_loss(y, proba, 1.0 - np.eye(n_classes))


@pytest.mark.parametrize(
    ("y", "proba", "error", "match"),
    [
        ([0, 1], [0.2, np.nan], ValueError, "NaN"),
        ([0, 1], [0.2, 1.2], ValueError, r"outside \[0, 1\]"),
        ([0, 1], [-0.1, 0.5], ValueError, r"outside \[0, 1\]"),
        ([0, 1], [0.2, np.inf], ValueError, r"outside \[0, 1\]"),
        ([0, 1], [[0.5, 0.6], [0.3, 0.7]], ValueError, "sum to 1"),
        ([0, 1], [[0.5], [0.3]], ValueError, "at least 2 columns"),
        ([0, 1], np.full((2, 2, 2), 0.5), ValueError, "dimensions"),
        ([0, 1, 1], [0.2, 0.7], ValueError, "mismatched lengths"),
        ([0, 2], [0.2, 0.7], ValueError, r"labels outside 0\.\.1"),
        ([0, -1], [0.2, 0.7], ValueError, "labels outside"),
        ([0, 3], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], ValueError, r"labels outside 0\.\.2"),
        ([0, 0.5], [0.2, 0.7], ValueError, "integer class labels"),
        ([[0, 1]], [0.2, 0.7], ValueError, "y_true must be 1-D"),
        ([0, np.nan], [0.2, 0.7], ValueError, "y_true contains NaN"),
        ([], [], ValueError, "empty"),
        ([0, 1], ["a", "b"], TypeError, "numeric"),
        (["a", "b"], [0.2, 0.7], TypeError, "y_true must be numeric"),
    ],
)
@pytest.mark.parametrize(
    "metric",
    [
        error_rate,
        average_minus_log_probability,
        brier_score,
        calibration_table,
        zero_one_loss_summary,
    ],
    ids=["error_rate", "amlp", "brier", "calibration", "loss"],
)
def test_validation_errors(metric, y, proba, error, match):
    with pytest.raises(error, match=match):
        metric(y, proba)


def test_rows_summing_to_one_within_tolerance_are_accepted():
    P = np.array([[0.3, 0.7 + 5e-7], [0.5, 0.5 - 5e-7]])
    assert error_rate([1, 0], P) == 0.0


@pytest.mark.parametrize(
    ("proba", "error", "match"),
    [
        ([0.2, np.nan], ValueError, "NaN"),
        ([1.5], ValueError, r"outside \[0, 1\]"),
        ([[0.2, 0.2]], ValueError, "sum to 1"),
        ([], ValueError, "empty"),
        ([None, 0.5], TypeError, "numeric"),
    ],
)
def test_expected_error_rate_validation(proba, error, match):
    with pytest.raises(error, match=match):
        expected_error_rate(proba)


@pytest.mark.parametrize(
    ("loss", "match"),
    [
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0]], r"shape \(2, 2\)"),
        ([[0, -1], [1, 0]], "non-negative"),
        ([[0, np.inf], [1, 0]], "finite"),
        ([[0, np.nan], [1, 0]], "NaN"),
    ],
)
def test_loss_matrix_validation(loss, match):
    with pytest.raises(ValueError, match=match):
        bayes_decision([0.2, 0.7], loss)
    with pytest.raises(ValueError, match=match):
        expected_and_actual_loss([0, 1], [0.2, 0.7], loss)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_bins": 0}, ValueError, "n_bins must be at least 1"),
        ({"n_bins": 2.5}, TypeError, "n_bins must be an integer"),
        ({"positive_class": 2}, ValueError, r"positive_class must be in 0\.\.1"),
        ({"positive_class": 1.0}, TypeError, "positive_class must be an integer"),
    ],
)
def test_calibration_table_argument_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        calibration_table([0, 1], [0.2, 0.7], **kwargs)


def test_labels_as_integral_floats_and_bools_are_accepted():
    assert error_rate(np.array([0.0, 1.0]), [0.2, 0.7]) == 0.0
    assert error_rate(np.array([False, True]), [0.2, 0.7]) == 0.0
