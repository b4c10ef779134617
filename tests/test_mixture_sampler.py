"""``BiasCorrectedMixture(sampler=MixtureSampler(...))``: the Gibbs sampler's priors, grid and sweeps as one
parameter object (issue 30: no constructor with more than 15 parameters)."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

from hdbayes._parameters import ParameterObject
from hdbayes.datasets import simulate_mixture
from hdbayes.selection_bias import BiasCorrectedMixture, MixtureSampler

# the parameters the sampler object replaced, with their defaults before issue 30
OLD_DEFAULTS = dict(alpha0_shape=0.5, alpha0_scale=5.0, alpha_shape=0.5, alpha_scale=5.0, n_alpha=10,
                    n_label_sweeps=5, n_theta_updates=20, slice_width=1.0)  # fmt: skip
MCMC = dict(n_features_to_select=4, n_iter=12, burn_in=4, thin=2, n_chains=2, random_state=2, progress=False)


@pytest.fixture(scope="module")
def data():
    return simulate_mixture(n_features=60, n_samples=30, n_test=6, random_state=0)


def _draws(model, X_test):
    trace = model.trace_
    return [trace[name] for name in ("theta", "ones", "sizes", "alpha", "alpha0")] + [model.predict_proba(X_test)]


def test_the_constructor_has_at_most_15_parameters():
    parameters = inspect.signature(BiasCorrectedMixture).parameters
    assert len(parameters) <= 15
    assert "sampler" in parameters and parameters["sampler"].default is None
    assert not set(OLD_DEFAULTS) & set(parameters)
    assert {"theta_rule", "n_theta", "class_pseudo_count", "binarize", "n_iter", "random_state"} <= set(parameters)


def test_the_sampler_keeps_the_old_defaults():
    assert MixtureSampler().get_params() == OLD_DEFAULTS
    assert isinstance(MixtureSampler(), ParameterObject)


def test_none_the_default_object_and_its_fields_give_the_same_draws_bit_for_bit(data):
    """sampler=None, MixtureSampler() and every field at its old default value: the same arrays."""
    reference = _draws(BiasCorrectedMixture(**MCMC).fit(data.X, data.y), data.X_test)
    for sampler in (MixtureSampler(), MixtureSampler(**OLD_DEFAULTS)):
        model = BiasCorrectedMixture(sampler=sampler, **MCMC).fit(data.X, data.y)
        for a, b in zip(_draws(model, data.X_test), reference, strict=True):
            np.testing.assert_array_equal(a, b)
        assert model.sampler_ == sampler and model.sampler_ is not sampler
    assert BiasCorrectedMixture(**MCMC).fit(data.X, data.y).sampler_ == MixtureSampler()


def test_each_field_reaches_the_fit(data):
    """A changed field changes the grid or the draws (the field is read, not ignored)."""
    reference = BiasCorrectedMixture(**MCMC).fit(data.X, data.y)
    grid = BiasCorrectedMixture(sampler=MixtureSampler(n_alpha=4, alpha_shape=1.0), **MCMC).fit(data.X, data.y)
    assert grid.alpha_grid_.shape == (4,) and grid.alpha0_grid_.shape == (4,)
    np.testing.assert_array_equal(  # α_0's prior unchanged: its grid differs only by n_alpha
        grid.alpha0_grid_, BiasCorrectedMixture(sampler=MixtureSampler(n_alpha=4), **MCMC).fit(data.X, data.y)
        .alpha0_grid_,
    )  # fmt: skip
    assert not np.array_equal(grid.alpha_grid_, grid.alpha0_grid_)
    for field, value in (("alpha0_scale", 50.0), ("alpha_scale", 50.0), ("n_label_sweeps", 1),
                         ("n_theta_updates", 2), ("slice_width", 0.1)):  # fmt: skip
        model = BiasCorrectedMixture(sampler=MixtureSampler(**{field: value}), **MCMC).fit(data.X, data.y)
        assert not np.array_equal(model.trace_["theta"], reference.trace_["theta"]), field


def test_clone_get_set_params_repr_pickle_and_equality():
    model = BiasCorrectedMixture(n_features_to_select=3, sampler=MixtureSampler(alpha_shape=2.0))
    params = model.get_params()
    assert params["sampler__alpha_shape"] == 2.0 and params["sampler__n_alpha"] == 10
    copy = clone(model)
    assert copy.sampler == model.sampler and copy.sampler is not model.sampler
    copy.set_params(sampler__alpha_shape=3.0, sampler__slice_width=0.5)
    assert copy.sampler == MixtureSampler(alpha_shape=3.0, slice_width=0.5)
    assert model.sampler.alpha_shape == 2.0  # the original untouched
    assert repr(copy.sampler) == "MixtureSampler(alpha_shape=3.0, slice_width=0.5)"
    assert "sampler=MixtureSampler(alpha_shape=2.0)" in repr(model)
    assert pickle.loads(pickle.dumps(copy.sampler)) == copy.sampler
    assert MixtureSampler(n_alpha=4) != MixtureSampler(n_alpha=5)
    assert MixtureSampler().__eq__(object()) is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):
        hash(MixtureSampler())


def test_grid_search_over_a_field_of_the_sampler(data):
    search = GridSearchCV(
        BiasCorrectedMixture(sampler=MixtureSampler(n_alpha=4), **{**MCMC, "n_chains": 1}),
        {"sampler__alpha_shape": [0.5, 2.0]}, cv=2, scoring="neg_log_loss",
    ).fit(data.X, data.y)  # fmt: skip
    assert [p["sampler__alpha_shape"] for p in search.cv_results_["params"]] == [0.5, 2.0]
    assert search.best_estimator_.sampler_.alpha_shape == search.best_params_["sampler__alpha_shape"]
    assert search.best_estimator_.sampler_.n_alpha == 4


@pytest.mark.parametrize(
    ("field", "value"),
    [("alpha0_shape", 0.0), ("alpha_scale", -1.0), ("n_alpha", 0), ("n_label_sweeps", 0), ("n_theta_updates", 1.5),
     ("slice_width", 0.0)],
)  # fmt: skip
def test_a_bad_field_is_refused_naming_it(field, value):
    X, y = np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1]
    with pytest.raises(InvalidParameterError, match=f"The '{field}' parameter of MixtureSampler must be"):
        BiasCorrectedMixture(sampler=MixtureSampler(**{field: value})).fit(X, y)


def test_a_sampler_of_another_type_is_refused():
    with pytest.raises(InvalidParameterError, match="The 'sampler' parameter of BiasCorrectedMixture must be"):
        BiasCorrectedMixture(sampler={"n_alpha": 4}).fit(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1])


@pytest.mark.parametrize("name", sorted(OLD_DEFAULTS))
def test_the_old_parameters_raise_type_error(name):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
        BiasCorrectedMixture(**{name: OLD_DEFAULTS[name]})
    with pytest.raises(TypeError):
        MixtureSampler(OLD_DEFAULTS[name])  # keyword-only
