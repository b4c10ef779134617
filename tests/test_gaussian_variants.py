"""The Gaussian classifier's variants as parameter objects (issue 30): a name is its variant with the defaults, the
objects behave as scikit-learn parameters (``clone``, nested ``get_params``/``set_params``, ``GridSearchCV`` over
``variant__<field>``, also of a variant given by name, as the other estimators' parameter objects given by name,
``repr``, pickling, equality by value), bad values are refused naming them, and the parameters
the variants replaced are gone from the constructor."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils._param_validation import InvalidParameterError

from hdbayes import BiasCorrectedGaussianClassifier, BiasCorrectedMixture, CompressedInteractionClassifier
from hdbayes.datasets import simulate_gaussian
from hdbayes.exceptions import is_input_error
from hdbayes.interactions.priors import GaussianPrior
from hdbayes.selection_bias import MixtureSampler, PerClassVariance, PerFeatureSpread, SharedSpread
from hdbayes.selection_bias.gaussian import GaussianAdjustment, PerFeatureGaussianAdjustment
from hdbayes.selection_bias.gaussian.estimator import VARIANTS
from hdbayes.selection_bias.gaussian.per_class import ClassVarianceGridAdjustment

SHORT = dict(n_features_to_select=4, n_iter=40, burn_in=10, thin=2, random_state=2, progress=False)
DEFAULTS = {"shared": SharedSpread, "per-feature": PerFeatureSpread, "per-class": PerClassVariance}


@pytest.fixture(scope="module")
def data():
    d = simulate_gaussian(n_classes=3, n_features=30, random_state=4)
    return d.X[:60], d.y[:60], d.X_test[:8]


def test_the_registry_names_each_variant_once():
    assert VARIANTS == DEFAULTS
    assert [cls.name for cls in VARIANTS.values()] == list(VARIANTS)


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_a_name_is_its_default_variant_object_bit_for_bit(data, name):
    X, y, test = data
    by_name = BiasCorrectedGaussianClassifier(variant=name, **SHORT).fit(X, y)
    by_object = BiasCorrectedGaussianClassifier(variant=DEFAULTS[name](), **SHORT).fit(X, y)
    assert set(by_name.trace_.posterior) == set(by_object.trace_.posterior)
    for key, values in by_name.trace_.posterior.items():
        np.testing.assert_array_equal(values, by_object.trace_.posterior[key])
    np.testing.assert_array_equal(by_name.predict_proba(test), by_object.predict_proba(test))
    assert by_name.variant_ == DEFAULTS[name]() == by_object.variant_
    assert by_name.variant == name  # the parameter is not replaced by the resolved object


def test_each_variant_builds_its_own_factor_and_monitored_names(data):
    X, y, _ = data
    expected = {
        "shared": (GaussianAdjustment, ["log_tau_mu", "log_tau_nu"]),
        "per-feature": (PerFeatureGaussianAdjustment, ["log_s_mu", "log_s_x", "log_tau_nu"]),
        "per-class": (ClassVarianceGridAdjustment, ["log_s_mu", "log_s_x", "log_tau_nu"]),
    }
    for name, (factor, monitored) in expected.items():
        model = BiasCorrectedGaussianClassifier(variant=name, n_mc=16, **SHORT).fit(X, y)
        assert type(model.adjustment_) is factor
        assert sorted(model.mcmc_summary()) == monitored
        assert hasattr(model, "class_scale_") == (name == "per-class")


def test_a_field_changes_the_model(data):
    X, y, _ = data
    default = BiasCorrectedGaussianClassifier(**SHORT).fit(X, y)
    other = BiasCorrectedGaussianClassifier(variant=SharedSpread(alpha_x=2.0, w_x=0.3), **SHORT).fit(X, y)
    assert not np.array_equal(default.trace_["tau_x"], other.trace_["tau_x"])


def test_parameter_objects_compare_by_value_and_round_trip():
    variant = PerClassVariance(alpha2_x=4.0, class_scale=[1.0, 2.0, 0.5], n_metropolis=3)
    assert variant == PerClassVariance(alpha2_x=4.0, class_scale=np.array([1.0, 2.0, 0.5]), n_metropolis=3)
    assert variant != PerClassVariance(alpha2_x=4.0, class_scale=[1.0, 2.0, 0.6], n_metropolis=3)
    assert variant != PerClassVariance(alpha2_x=4.0, class_scale="plug-in", n_metropolis=3)
    assert PerFeatureSpread() != PerClassVariance() and SharedSpread() != PerFeatureSpread()
    assert clone(variant) == variant and clone(variant) is not variant
    assert pickle.loads(pickle.dumps(variant)) == variant
    assert repr(SharedSpread(alpha_x=2.0)) == "SharedSpread(alpha_x=2.0)"
    assert repr(PerClassVariance()) == "PerClassVariance()"
    with pytest.raises(TypeError, match="unhashable"):
        hash(variant)


def test_nested_parameters_of_the_estimator():
    model = BiasCorrectedGaussianClassifier(variant=PerFeatureSpread(alpha1_mu=4.0))
    params = model.get_params()
    assert params["variant__alpha1_mu"] == 4.0 and params["variant__alpha_x"] == 4.0
    assert {key for key in params if key.startswith("variant__")} == {
        f"variant__{field}" for field in PerFeatureSpread().get_params()
    }
    model.set_params(variant__alpha1_mu=5.0, variant__proposal_sd=0.2)
    assert model.variant == PerFeatureSpread(alpha1_mu=5.0, proposal_sd=0.2)
    copy = clone(model)
    assert copy.variant == model.variant and copy.variant is not model.variant
    assert "variant__alpha_x" not in BiasCorrectedGaussianClassifier().get_params()  # a name has no fields
    assert "PerFeatureSpread(alpha1_mu=5.0, proposal_sd=0.2)" in " ".join(repr(model).split())


def test_grid_search_over_a_variant_field(data):
    X, y, _ = data
    search = GridSearchCV(
        BiasCorrectedGaussianClassifier(variant=SharedSpread(), **SHORT),
        {"variant__alpha_x": [2.0, 6.0]},
        cv=StratifiedKFold(2),
        scoring="neg_log_loss",
    ).fit(X, y)
    assert [p["variant__alpha_x"] for p in search.cv_results_["params"]] == [2.0, 6.0]
    assert search.best_estimator_.variant.alpha_x == search.best_params_["variant__alpha_x"]
    assert search.estimator.variant == SharedSpread()  # the searched estimator's variant left as given


def test_grid_search_over_a_field_of_a_named_variant(data):
    """The default ``variant="shared"`` is a name: a grid over ``variant__alpha_x`` sets the field of the named
    variant with its defaults (scikit-learn's own set_params would fail on the string)."""
    X, y, _ = data
    search = GridSearchCV(BiasCorrectedGaussianClassifier(**SHORT), {"variant__alpha_x": [2.0, 6.0]},
                          cv=StratifiedKFold(2), scoring="neg_log_loss").fit(X, y)  # fmt: skip
    assert search.best_estimator_.variant == SharedSpread(alpha_x=search.best_params_["variant__alpha_x"])
    assert search.estimator.variant == "shared"
    as_object = GridSearchCV(BiasCorrectedGaussianClassifier(variant=SharedSpread(), **SHORT),
                             {"variant__alpha_x": [2.0, 6.0]}, cv=StratifiedKFold(2),
                             scoring="neg_log_loss").fit(X, y)  # fmt: skip
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], as_object.cv_results_["mean_test_score"])


@pytest.mark.parametrize(
    "make, parameter, field, expected",
    [
        (lambda: BiasCorrectedGaussianClassifier(variant="per-class"), "variant", "alpha2_x",
         lambda v: PerClassVariance(alpha2_x=v)),
        (BiasCorrectedMixture, "sampler", "alpha_shape", lambda v: MixtureSampler(alpha_shape=v)),
        (lambda: CompressedInteractionClassifier(prior="gaussian"), "prior", "alpha_o",
         lambda v: GaussianPrior(alpha_o=v)),
    ],
)  # fmt: skip
def test_set_params_of_a_field_of_a_parameter_given_by_name(make, parameter, field, expected):
    """A parameter object given by name (or None) becomes the named object when one of its fields is set, also
    together with the name itself; an unknown name is refused naming the parameter."""
    model = make().set_params(**{f"{parameter}__{field}": 3.0})
    assert getattr(model, parameter) == expected(3.0)
    assert model.get_params()[f"{parameter}__{field}"] == 3.0
    named = getattr(make(), parameter)
    again = make().set_params(**{parameter: named, f"{parameter}__{field}": 2.0})
    assert getattr(again, parameter) == expected(2.0)
    with pytest.raises(ValueError, match=f"cannot set {parameter}__... fields: {parameter}='bogus'"):
        make().set_params(**{parameter: "bogus", f"{parameter}__{field}": 2.0})


@pytest.mark.parametrize(
    "variant, message",
    [
        ("per feature", "variant"),
        ("pooled", "variant"),
        (3.0, "variant"),
        (SharedSpread(alpha_x=-1.0), "alpha_x"),
        (SharedSpread(n_metropolis=0), "n_metropolis"),
        (PerFeatureSpread(alpha1_mu=0.0), "alpha1_mu"),
        (PerClassVariance(alpha2_x="learned"), "alpha2_x"),
        (PerClassVariance(class_scale="plugin"), "class_scale"),
    ],
)
def test_a_bad_variant_or_field_is_refused_naming_it(data, variant, message):
    X, y, _ = data
    with pytest.raises(InvalidParameterError, match=message) as error:
        BiasCorrectedGaussianClassifier(variant=variant, **SHORT).fit(X, y)
    assert is_input_error(error.value)
    with pytest.raises(InvalidParameterError, match=message):
        BiasCorrectedGaussianClassifier(variant=variant, **SHORT).partial_fit(X, y, classes=[0, 1, 2])


@pytest.mark.parametrize(
    "old",
    ["alpha_x", "w_x", "alpha_mu", "w_mu", "alpha_nu", "w_nu", "proposal_sd", "n_metropolis", "spread", "alpha1_mu",
     "alpha1_x", "class_variance", "alpha2_x", "class_scale"],
)  # fmt: skip
def test_the_replaced_parameters_are_gone(old):
    with pytest.raises(TypeError, match=old):
        BiasCorrectedGaussianClassifier(**{old: 1.0})
    assert old not in BiasCorrectedGaussianClassifier().get_params()


def test_the_constructor_has_fourteen_parameters():
    assert list(BiasCorrectedGaussianClassifier().get_params()) == sorted(
        ["n_features_to_select", "threshold", "correct", "class_pseudo_count", "variant", "n_mc", "predictive",
         "n_iter", "burn_in", "thin", "n_chains", "n_jobs", "random_state", "progress"]
    )  # fmt: skip


class _FixedPool(SharedSpread):
    """A variant outside the registry: the shared spread whose pool has 200 draws whatever ``n_mc``."""

    name = "fixed-pool"

    def _factor(self, threshold, class_counts, **kwargs):
        return super()._factor(threshold, class_counts, **{**kwargs, "n_mc": 200})


def test_a_new_variant_object_plugs_in_without_the_registry(data):
    X, y, test = data
    plugged = BiasCorrectedGaussianClassifier(variant=_FixedPool(alpha_x=3.0), **SHORT).fit(X, y)
    same = BiasCorrectedGaussianClassifier(variant=SharedSpread(alpha_x=3.0), n_mc=200, **SHORT).fit(X, y)
    np.testing.assert_array_equal(plugged.trace_["log_tau_mu"], same.trace_["log_tau_mu"])
    np.testing.assert_array_equal(plugged.predict_proba(test), same.predict_proba(test))
    assert plugged.adjustment_.poisson_means.shape == (200,) and clone(plugged).variant == _FixedPool(alpha_x=3.0)
    with pytest.raises(InvalidParameterError, match="variant"):
        BiasCorrectedGaussianClassifier(variant="fixed-pool", **SHORT).fit(X, y)
