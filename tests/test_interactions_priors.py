"""The compressed models' priors as parameter objects (issue 30): a name is its prior with the defaults bit for bit,
the fields reach the sampler unchanged, the objects behave as scikit-learn parameters (``clone``, nested
``get_params``/``set_params``, ``GridSearchCV`` over ``prior__<field>``, ``repr``, pickling, equality by value), bad
values are refused naming them, the parameters the objects replaced are gone, and no constructor has more than 15
parameters."""

import inspect
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils._param_validation import InvalidParameterError

from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.exceptions import is_input_error
from hdbayes.interactions import CauchyPrior, CompressedInteractionClassifier, CompressedSequenceModel, GaussianPrior
from hdbayes.interactions.models import N_SIGMA_UPDATES
from hdbayes.interactions.priors import PRIORS
from hdbayes.interactions.sampler import chain_arguments, run_chain
from hdbayes.mcmc import Schedule
from hdbayes.mcmc.chains import chain_seeds

SHORT = dict(order=2, n_iter=40, burn_in=10, thin=2, random_state=3, progress=False)
MODELS = [CompressedSequenceModel, CompressedInteractionClassifier]
DEFAULTS = {"cauchy": CauchyPrior, "gaussian": GaussianPrior}


@pytest.fixture(scope="module")
def data():
    hmm = simulate_hmm(n_samples=60, n_test=10, random_state=0)
    cauchy = simulate_cauchy_classification(n_samples=50, n_test=10, n_features=4, order=2, random_state=0)
    return {CompressedSequenceModel: hmm, CompressedInteractionClassifier: cauchy}


def test_the_registry_names_each_prior_once():
    assert PRIORS == DEFAULTS
    assert {cls.index for cls in PRIORS.values()} == {1, 2}


def test_the_defaults_are_the_thesis_table():
    """Thesis §3.4.4: σ_0 = 5 and slice width 20 for the Cauchy prior, 10 and 10 for the Gaussian."""
    assert CauchyPrior().get_params() == dict(sigma0=5.0, alpha_o=0.25, w_o_scale=0.1, coef_width=20.0,
                                              sigma_width=1.0, max_steps=50)  # fmt: skip
    assert GaussianPrior().get_params() == dict(sigma0=10.0, alpha_o=0.25, w_o_scale=0.1, coef_width=10.0,
                                                sigma_width=1.0, max_steps=50)  # fmt: skip


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("name", ["cauchy", "gaussian"])
@pytest.mark.parametrize("model", MODELS)
def test_a_name_is_its_default_prior_object_bit_for_bit(data, model, name, compress):
    d = data[model]
    by_name = model(prior=name, compress=compress, **SHORT).fit(d.X, d.y)
    by_object = model(prior=DEFAULTS[name](), compress=compress, **SHORT).fit(d.X, d.y)
    for field in ("s", "sigma"):
        np.testing.assert_array_equal(by_name.trace_[field], by_object.trace_[field])
    np.testing.assert_array_equal(by_name.trace_.warmup["sigma"], by_object.trace_.warmup["sigma"])
    np.testing.assert_array_equal(by_name.predict_proba(d.X_test), by_object.predict_proba(d.X_test))
    assert by_name.prior_ == DEFAULTS[name]() == by_object.prior_
    assert by_name.index_ == by_object.index_ == DEFAULTS[name].index
    assert by_name.prior == name  # the parameter is not replaced by the resolved object


@pytest.mark.parametrize("model", MODELS)
def test_every_field_reaches_the_sampler(data, model):
    """A fit with every field changed draws exactly what the sampler draws when called with those numbers."""
    d = data[model]
    prior = GaussianPrior(sigma0=3.0, alpha_o=0.5, w_o_scale=0.2, coef_width=7.0, sigma_width=0.5, max_steps=9)
    fitted = model(prior=prior, **SHORT).fit(d.X, d.y)
    codes = np.searchsorted(fitted.classes_, d.y)
    args = chain_arguments(
        fitted.grouping_, codes, len(fitted.classes_), index=2, sigma0=3.0, alpha_o=0.5, w_o_scale=0.2,
        schedule=Schedule(40, 10, 2), coef_width=7.0, sigma_width=0.5, max_steps=9, n_sigma_updates=N_SIGMA_UPDATES,
    )  # fmt: skip
    s, sigma, warmup = run_chain(*args, np.random.default_rng(chain_seeds(3, 2)[0]))
    np.testing.assert_array_equal(fitted.trace_["s"][0], s)
    np.testing.assert_array_equal(fitted.trace_["sigma"][0], sigma)
    default = model(prior="gaussian", **SHORT).fit(d.X, d.y)
    assert not np.array_equal(default.trace_["sigma"], fitted.trace_["sigma"])  # the fields change the draws


def test_the_objects_compare_by_value_clone_and_pickle():
    prior = CauchyPrior(sigma0=2.0, max_steps=20)
    assert prior == CauchyPrior(sigma0=2.0, max_steps=20)
    assert prior != CauchyPrior(sigma0=2.0, max_steps=21)
    assert prior != GaussianPrior(sigma0=2.0, max_steps=20, coef_width=20.0)  # the kind is part of the value
    assert clone(prior) == prior and clone(prior) is not prior
    assert pickle.loads(pickle.dumps(prior)) == prior
    assert repr(prior) == "CauchyPrior(max_steps=20, sigma0=2.0)"
    with pytest.raises(TypeError):
        hash(prior)


@pytest.mark.parametrize("model", MODELS)
def test_nested_get_params_set_params_and_clone(model):
    estimator = model(prior=GaussianPrior(alpha_o=0.5))
    params = estimator.get_params()
    assert params["prior__alpha_o"] == 0.5 and params["prior__sigma0"] == 10.0
    assert {key for key in params if key.startswith("prior__")} == {f"prior__{f}" for f in GaussianPrior().get_params()}
    estimator.set_params(prior__alpha_o=0.75, prior__coef_width=4.0)
    assert estimator.prior == GaussianPrior(alpha_o=0.75, coef_width=4.0)
    copy = clone(estimator)
    assert copy.prior == estimator.prior and copy.prior is not estimator.prior
    assert "prior__alpha_o" not in model().get_params()  # a name has no fields
    assert "GaussianPrior(alpha_o=0.75, coef_width=4.0)" in " ".join(repr(estimator).split())


def test_grid_search_over_a_prior_field(data):
    d = data[CompressedInteractionClassifier]
    search = GridSearchCV(
        CompressedInteractionClassifier(prior=CauchyPrior(), **SHORT),
        {"prior__alpha_o": [0.25, 1.0]},
        cv=StratifiedKFold(2),
        scoring="neg_log_loss",
    ).fit(d.X, d.y)
    assert [p["prior__alpha_o"] for p in search.cv_results_["params"]] == [0.25, 1.0]
    assert search.best_estimator_.prior.alpha_o == search.best_params_["prior__alpha_o"]
    assert search.best_estimator_.prior_ == CauchyPrior(alpha_o=search.best_params_["prior__alpha_o"])
    assert search.estimator.prior == CauchyPrior()  # the searched estimator's prior left as given


def test_the_fitted_prior_is_a_copy(data):
    d = data[CompressedSequenceModel]
    model = CompressedSequenceModel(prior=CauchyPrior(alpha_o=0.5), **SHORT).fit(d.X, d.y)
    model.set_params(prior__alpha_o=2.0)
    assert model.prior_ == CauchyPrior(alpha_o=0.5)


@pytest.mark.parametrize(
    "prior, message",
    [
        ("laplace", "'prior' parameter"),
        (5.0, "'prior' parameter"),
        (CauchyPrior(sigma0=0.0), "'sigma0' parameter of CauchyPrior"),
        (CauchyPrior(sigma0=None), "'sigma0' parameter of CauchyPrior"),
        (GaussianPrior(alpha_o=-1.0), "'alpha_o' parameter of GaussianPrior"),
        (GaussianPrior(w_o_scale=np.inf), "'w_o_scale' parameter of GaussianPrior"),
        (CauchyPrior(coef_width=0.0), "'coef_width' parameter of CauchyPrior"),
        (GaussianPrior(sigma_width="wide"), "'sigma_width' parameter of GaussianPrior"),
        (CauchyPrior(max_steps=0), "'max_steps' parameter of CauchyPrior"),
        (CauchyPrior(max_steps=2.5), "'max_steps' parameter of CauchyPrior"),
    ],
)
@pytest.mark.parametrize("model", MODELS)
def test_a_bad_prior_or_field_is_refused_naming_it(data, model, prior, message):
    d = data[model]
    with pytest.raises(InvalidParameterError, match=message) as error:
        model(prior=prior, **SHORT).fit(d.X, d.y)
    assert is_input_error(error.value)


@pytest.mark.parametrize("old", ["sigma0", "alpha_o", "w_o_scale", "coef_width", "sigma_width", "max_steps"])
@pytest.mark.parametrize("model", MODELS)
def test_the_replaced_parameters_are_gone(model, old):
    with pytest.raises(TypeError, match=old):
        model(**{old: 1.0})
    with pytest.raises(ValueError, match=old):  # scikit-learn's "Invalid parameter" for set_params
        model().set_params(**{old: 1.0})


@pytest.mark.parametrize("model", MODELS)
def test_at_most_fifteen_parameters(model):
    names = list(inspect.signature(model).parameters)
    assert len(names) <= 15
    assert names == ["order", "prior", "compress", "n_iter", "burn_in", "thin", "n_chains", "n_jobs", "random_state",
                     "progress"]  # fmt: skip
