"""GroupSpikeSlabRegression: scikit-learn contract, input validation, predictions, hyperparameters."""

from __future__ import annotations

import pickle

import matplotlib.axes
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab import GroupSpikeSlabRegression, exact_posterior


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 12))
    w = np.zeros(12)
    w[:3] = [1.0, -2.0, 1.5]
    return X, X @ w + 3.0 + 0.1 * rng.normal(size=40), w


@parametrize_with_checks([GroupSpikeSlabRegression(), GroupSpikeSlabRegression(hyperparameters="evidence")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_fitted_attributes_and_intercept(data):
    X, y, w = data
    model = GroupSpikeSlabRegression(groups=3, prior_inclusion=0.25, noise_variance=0.01).fit(X, y)
    np.testing.assert_allclose(model.coef_, w, atol=0.05)
    assert model.intercept_ == pytest.approx(3.0, abs=0.05)
    assert model.n_groups_ == 4 and model.groups_.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert model.group_inclusion_probabilities_[0] > 0.99 and np.all(model.group_inclusion_probabilities_[1:] < 0.01)
    assert model.converged_ and model.n_iter_ >= 1 and np.isfinite(model.log_evidence_)
    assert model.solver_ == "direct" and np.all(model.coef_variance_ >= 0)


def test_matches_exact_enumeration_without_intercept(data):
    X, y, _ = data
    model = GroupSpikeSlabRegression(groups=3, prior_inclusion=0.3, noise_variance=0.5, fit_intercept=False).fit(X, y)
    exact = exact_posterior(X, y, model.groups_, np.full(4, 0.3), np.ones(4), 0.5)
    np.testing.assert_allclose(model.group_inclusion_probabilities_, exact.group_inclusion_probabilities, atol=5e-3)
    assert model.log_evidence_ == pytest.approx(exact.log_evidence, abs=5e-3)


def test_predict_std_against_a_dense_computation(data):
    X, y, _ = data
    model = GroupSpikeSlabRegression(groups=3, prior_inclusion=0.25, noise_variance=0.01, solver="woodbury")
    model.fit(X[:10], y[:10])
    Xc = X[:10] - X[:10].mean(0)
    v = model.sites_.variance
    V = np.linalg.inv(Xc.T @ Xc / 0.01 + np.diag(1 / v))
    mean, std = model.predict(X[10:], return_std=True)
    Xt = X[10:] - X[:10].mean(0)
    np.testing.assert_allclose(std, np.sqrt(np.einsum("ij,jk,ik->i", Xt, V, Xt) + 0.01), rtol=1e-7)
    np.testing.assert_allclose(mean, model.predict(X[10:]))
    np.testing.assert_allclose(model.coef_, V @ (Xc.T @ (y[:10] - y[:10].mean()) / 0.01 + model.sites_.mean / v),
                               atol=1e-8)  # fmt: skip


def test_woodbury_and_direct_agree_in_the_estimator(data):
    X, y, _ = data
    kwargs = dict(groups=3, prior_inclusion=0.25, noise_variance=0.05)
    a = GroupSpikeSlabRegression(solver="direct", **kwargs).fit(X, y)
    b = GroupSpikeSlabRegression(solver="woodbury", **kwargs).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-9)
    np.testing.assert_allclose(a.predict(X, return_std=True)[1], b.predict(X, return_std=True)[1], rtol=1e-8)


def test_pickle_and_reproducibility(data):
    X, y, _ = data
    model = GroupSpikeSlabRegression(groups=3, noise_variance=0.1).fit(X, y)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(X, return_std=True)[1], model.predict(X, return_std=True)[1])
    again = GroupSpikeSlabRegression(groups=3, noise_variance=0.1).fit(X, y)
    np.testing.assert_array_equal(again.coef_, model.coef_)


def test_pickle_holds_no_training_design():
    """Issue 12: a fit at n = 200, d = 5000 (the Woodbury path) pickles without any n × d array (measured: 0.30 MB
    against n·d·8 = 8 MB, 8.8 MB before), and the unpickled model predicts the same bits. The predictive standard
    deviation needs V, whose exact form refers to the n × d design: the unpickled model asks for a refit."""
    rng = np.random.default_rng(0)
    n, d = 200, 5000
    X = rng.normal(size=(n, d))
    y = X[:, :10].sum(axis=1) + 0.1 * rng.normal(size=n)
    model = GroupSpikeSlabRegression(groups=10, prior_inclusion=0.01, noise_variance=0.01).fit(X, y)
    blob = pickle.dumps(model)
    assert model.solver_ == "woodbury" and len(blob) < n * d * 8 / 10
    clone = pickle.loads(blob)
    np.testing.assert_array_equal(clone.predict(X), model.predict(X))
    np.testing.assert_array_equal(clone.coef_variance_, model.coef_variance_)
    assert np.all(np.isfinite(model.predict(X[:3], return_std=True)[1]))  # the fitted object itself keeps V
    with pytest.raises(InputValueError, match="refit the model"):
        clone.predict(X[:3], return_std=True)


def test_evidence_maximisation_beats_the_start_and_a_grid(data):
    X, y, _ = data
    start = GroupSpikeSlabRegression(groups=3).fit(X, y)
    tuned = GroupSpikeSlabRegression(groups=3, hyperparameters="evidence").fit(X, y)
    assert tuned.log_evidence_ > start.log_evidence_ + 10
    assert tuned.noise_variance_ == pytest.approx(0.01, rel=0.6)
    grid = [GroupSpikeSlabRegression(groups=3, prior_inclusion=p, slab_variance=v, noise_variance=s).fit(X, y)
            for p in (0.2, 0.4) for v in (1.0, 3.0) for s in (0.005, 0.01, 0.02)]  # fmt: skip
    assert tuned.log_evidence_ >= max(m.log_evidence_ for m in grid) - 0.05


def test_grid_search_cv(data):
    X, y, _ = data
    search = GridSearchCV(GroupSpikeSlabRegression(groups=3), {"noise_variance": [0.01, 10.0]}, cv=3).fit(X, y)
    assert search.best_params_ == {"noise_variance": 0.01}


def test_group_specific_prior_and_labels(data):
    X, y, _ = data
    labels = np.array(["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 3)
    model = GroupSpikeSlabRegression(groups=labels, prior_inclusion=[0.9, 0.1, 0.1, 0.1], slab_variance=[4, 1, 1, 1],
                                     noise_variance=0.01).fit(X, y)  # fmt: skip
    assert model.prior_inclusion_.tolist() == [0.9, 0.1, 0.1, 0.1]
    assert model.group_inclusion_probabilities_[0] > 0.99


def test_plot(data):
    X, y, _ = data
    ax = GroupSpikeSlabRegression(groups=3, noise_variance=0.01).fit(X, y).plot_group_inclusion_probabilities(
        true_groups=[0])  # fmt: skip
    assert isinstance(ax, matplotlib.axes.Axes) and len(ax.patches) == 4


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"groups": [[0, 1, 2], [2, 3]] + [[j] for j in range(4, 12)]}, ValueError, "groups overlap: feature 2"),
        ({"groups": [0, 1, 2]}, ValueError, "groups has length 3, but X has 12 features"),
        ({"groups": np.r_[np.nan, np.zeros(11)]}, ValueError, "NaN"),
        ({"groups": 5}, ValueError, "divide n_features=12"),
        ({"prior_inclusion": 0.0}, ValueError, r"'prior_inclusion' parameter .* in the range \(0.0, 1.0\)"),
        ({"prior_inclusion": 1.0}, ValueError, r"'prior_inclusion' parameter .* in the range \(0.0, 1.0\)"),
        ({"prior_inclusion": 1.5}, ValueError, r"'prior_inclusion' parameter .* in the range \(0.0, 1.0\)"),
        ({"groups": 3, "prior_inclusion": [0.1, 1.0, 0.1, 0.1]}, ValueError,
         r"prior_inclusion must be in \(0, 1\), got 1 \(group 1\)"),
        ({"groups": 3, "prior_inclusion": [0.1, 0.2]}, ValueError, "prior_inclusion has 2 values, but there are 4"),
        ({"groups": 0}, ValueError, "'groups' parameter"),
        ({"slab_variance": 0.0}, ValueError, r"'slab_variance' parameter .* in the range \(0.0, inf\)"),
        ({"groups": 3, "slab_variance": [1.0, 1.0, -1.0, 1.0]}, ValueError, r"slab_variance must be > 0, got -1"),
        ({"noise_variance": -1.0}, ValueError, r"'noise_variance' parameter .* in the range \(0.0, inf\)"),
        ({"noise_variance": np.inf}, ValueError, r"'noise_variance' parameter .* in the range \(0.0, inf\)"),
        ({"noise_variance": "big"}, TypeError, "'noise_variance' parameter .* Got 'big' instead"),
        ({"fit_intercept": "yes"}, TypeError, "'fit_intercept' parameter"),
        ({"damping": 1.5}, ValueError, r"'damping' parameter .* in the range \(0.0, 1.0\]"),
        ({"max_iter": 0}, ValueError, r"'max_iter' parameter .* in the range \[1, inf\)"),
        ({"tol": 0.0}, ValueError, "'tol' parameter"),
        ({"infinite_variance": -1.0}, ValueError, "'infinite_variance' parameter"),
        ({"hyperparameters": "cv"}, ValueError, "'hyperparameters' parameter .* among .*'evidence'"),
        ({"solver": "qr"}, ValueError, "'solver' parameter .* among"),
    ],
)
def test_parameter_errors(data, params, error, message):
    """Single parameters are checked by _parameter_constraints (scikit-learn's messages, input errors); what
    needs the data (groups against the features, one prior value per group) by the model's checks."""
    from hdbayes.exceptions import is_input_error

    X, y, _ = data
    with pytest.raises(error, match=message) as info:
        GroupSpikeSlabRegression(**params).fit(X, y)
    assert is_input_error(info.value)


def test_data_errors(data):
    """scikit-learn's validation errors are the user's mistakes: InputValueError, with its messages."""
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputValueError, match="Input X contains NaN"):
        GroupSpikeSlabRegression().fit(bad, y)
    with pytest.raises(InputValueError, match="Input y contains NaN"):
        GroupSpikeSlabRegression().fit(X, np.r_[np.nan, y[1:]])
    with pytest.raises(InputValueError, match="0 sample"):
        GroupSpikeSlabRegression().fit(X[:0], y[:0])
    with pytest.raises(InputValueError, match="inconsistent numbers of samples"):
        GroupSpikeSlabRegression().fit(X, y[:5])
    with pytest.raises(InputValueError, match="expecting 12 features"):
        GroupSpikeSlabRegression(groups=3).fit(X, y).predict(X[:, :5])


# ------------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("hyperparameters", ["fixed", "evidence"])
def test_overflowing_input_raises_an_input_error_naming_it(data, where, hyperparameters):
    """A value of 1e308 used to give NaN predictions and a NaN evidence without a word."""
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    X, y = X.copy(), y.copy()
    if where == "X":
        X[3, 5] = 1e308
        expected = "X feature 5"
    else:
        y[7] = 1e308
        expected = "y"
    with pytest.raises(InputValueError, match=expected):
        GroupSpikeSlabRegression(groups=3, hyperparameters=hyperparameters).fit(X, y)


def test_overflowing_test_rows_raise_instead_of_nan(data):
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    model = GroupSpikeSlabRegression(groups=3, noise_variance=0.01).fit(X, y)
    bad = X[:4].copy()
    bad[2, 1] = 1e308
    bad[2, 4] = -1e308
    with pytest.raises(InputValueError, match="row 2"):
        model.predict(bad, return_std=True)
    mean, std = model.predict(X[:4], return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all()


@pytest.mark.parametrize(("value", "fit_intercept"), [(0.0, True), (5.0, True), (0.1, True), (0.0, False)])
def test_constant_column_keeps_the_evidence_finite_and_exact(value, fit_intercept):
    """A constant (or all-zero) column used to give log_evidence_ = NaN. Centred it is all zeros and carries no
    information: EP must agree with the exact enumeration, which handles it without special cases. (Without
    centring only an all-zero column is uninformative; another constant acts as an intercept.)"""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 8))
    y = X[:, :2] @ [1.0, -1.5] + 0.3 * rng.normal(size=30)
    X[:, 5] = value
    model = GroupSpikeSlabRegression(groups=2, prior_inclusion=0.3, noise_variance=0.09, fit_intercept=fit_intercept)
    model.fit(X, y)
    Xc, yc = (X - X.mean(0), y - y.mean()) if fit_intercept else (X, y)
    Xc[:, 5] = 0.0
    exact = exact_posterior(Xc, yc, model.groups_, np.full(4, 0.3), np.ones(4), 0.09)
    assert np.isfinite(model.log_evidence_)
    assert model.log_evidence_ == pytest.approx(exact.log_evidence, abs=5e-3)
    np.testing.assert_allclose(model.group_inclusion_probabilities_, exact.group_inclusion_probabilities, atol=5e-3)
    np.testing.assert_allclose(model.coef_, exact.coef_mean, atol=5e-3)
    np.testing.assert_allclose(model.coef_variance_, exact.coef_variance, atol=5e-3)
    assert model.coef_[5] == 0.0


def test_constant_column_with_evidence_maximisation(data):
    """With a constant column, hyperparameters='evidence' used to fail with a misleading convergence message."""
    X, y, _ = data
    X = X.copy()
    X[:, 4] = 2.5
    labels = np.repeat(np.arange(4), 3)
    tuned = GroupSpikeSlabRegression(groups=labels, hyperparameters="evidence").fit(X, y)
    plain = GroupSpikeSlabRegression(groups=np.delete(labels, 4), hyperparameters="evidence").fit(
        np.delete(X, 4, axis=1), y)  # fmt: skip
    assert np.isfinite(tuned.log_evidence_) and tuned.converged_
    assert tuned.noise_variance_ == pytest.approx(0.01, rel=0.6)
    assert tuned.group_inclusion_probabilities_[0] > 0.99
    np.testing.assert_allclose(np.delete(tuned.coef_, 4), plain.coef_, atol=0.02)


def test_non_integer_group_labels_are_named(data):
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    with pytest.raises(InputValueError, match=r"groups must be integers .*0\.5"):
        GroupSpikeSlabRegression(groups=np.r_[0.5, np.zeros(11)]).fit(X, y)


def test_parameter_messages_have_no_numpy_reprs(data):
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    with pytest.raises(InputValueError) as info:
        GroupSpikeSlabRegression(groups=3, slab_variance=[1.0, 0.0, 1.0, 1.0]).fit(X, y)
    assert "np.float64" not in str(info.value) and "got 0" in str(info.value)
    with pytest.raises(InputValueError) as info:
        GroupSpikeSlabRegression(groups=3, prior_inclusion=np.array([0.2, np.inf, 0.2, 0.2])).fit(X, y)
    assert "array(" not in str(info.value)


def test_evidence_maximisation_message_names_the_cause(data):
    """When EP cannot converge at the start, the user is told that, not a scipy message."""
    from hdbayes.exceptions import InputValueError

    X, y, _ = data
    with pytest.raises(InputValueError, match="did not converge .* max_iter"):
        GroupSpikeSlabRegression(groups=3, hyperparameters="evidence", max_iter=1).fit(X, y)
