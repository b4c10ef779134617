"""The one estimator contract (issue 12), checked for every public estimator of hdbayes."""

import inspect
import warnings

import numpy as np
import pytest
from numpydoc.docscrape import ClassDoc
from sklearn.base import ClassifierMixin

import hdbayes
from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, BayesianClassifier, MCMCMixin

ESTIMATORS = sorted(
    (getattr(hdbayes, name) for name in hdbayes.__all__
     if inspect.isclass(getattr(hdbayes, name)) and hasattr(getattr(hdbayes, name), "fit")),
    key=lambda cls: cls.__name__,
)  # fmt: skip
CLASSIFIERS = [cls for cls in ESTIMATORS if issubclass(cls, ClassifierMixin)]
MCMC = [cls for cls in ESTIMATORS if "n_iter" in inspect.signature(cls).parameters]
SELECTING = [cls for cls in ESTIMATORS if "n_features_to_select" in inspect.signature(cls).parameters]
RETIRED = {"n_features", "f0", "f1", "dirichlet_prior", "beta", "beta0", "beta1", "alpha_min", "fit_seconds"}


def _parameters(cls):
    return set(inspect.signature(cls).parameters)


def test_the_registry_of_estimators_is_complete():
    assert len(ESTIMATORS) >= 13
    assert len(CLASSIFIERS) == 11
    assert {cls.__name__ for cls in SELECTING} == {
        "BiasCorrectedCategoricalNB", "BiasCorrectedGaussianClassifier", "BiasCorrectedMixture",
        "BiasCorrectedNaiveBayes", "MutualInformationSelector",
    }  # fmt: skip
    assert {cls.__name__ for cls in MCMC} == {
        "BiasCorrectedGaussianClassifier", "BiasCorrectedMixture", "CompressedInteractionClassifier",
        "CompressedSequenceModel", "GroupSpikeSlabGibbs",
    }  # fmt: skip


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_parameters_are_validated_by_constraints(cls):
    constraints = getattr(cls, "_parameter_constraints", None)
    assert isinstance(constraints, dict), f"{cls.__name__} has no _parameter_constraints"
    assert _parameters(cls) <= set(constraints), f"unconstrained: {_parameters(cls) - set(constraints)}"


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_glossary_names_are_used(cls):
    assert not _parameters(cls) & RETIRED
    if "alpha" in _parameters(cls):  # scikit-learn's meaning: feature smoothing, never the class prior
        assert "class_pseudo_count" in _parameters(cls) or cls.__name__ == "DCMClassifier"


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda cls: cls.__name__)
def test_every_classifier_shares_the_base(cls):
    assert issubclass(cls, BayesianClassifier)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        assert callable(getattr(cls, method, None))


@pytest.mark.parametrize("cls", SELECTING, ids=lambda cls: cls.__name__)
def test_selecting_estimators_share_one_selection_vocabulary(cls):
    parameters = inspect.signature(cls).parameters
    assert parameters["n_features_to_select"].default is None
    X = np.array([[0, 1, 1], [1, 0, 1], [0, 1, 0], [1, 0, 0]] * 3)
    y = np.array([0, 1, 0, 1] * 3)
    with pytest.raises(ValueError, match=r"n_features_to_select=4 is larger than the number of features p=3"):
        cls(n_features_to_select=4).fit(X, y)


@pytest.mark.parametrize("cls", MCMC, ids=lambda cls: cls.__name__)
def test_mcmc_estimators_share_the_common_parameters(cls):
    common = ["n_iter", "burn_in", "thin", "n_chains", "n_jobs", "random_state", "progress"]
    assert issubclass(cls, MCMCMixin)
    assert set(common) <= _parameters(cls)
    constraints = cls._parameter_constraints
    for name in common:
        assert constraints[name] == MCMC_PARAMETER_CONSTRAINTS[name], name


def _small_fit(cls):
    rng = np.random.default_rng(0)
    small = {"n_iter": 12, "burn_in": 4, "thin": 2, "n_chains": 2, "random_state": 0}
    if cls.__name__ in ("BiasCorrectedMixture",):
        return cls(**small).fit(rng.integers(0, 2, (20, 6)), np.repeat([0, 1], 10))
    if cls.__name__ == "BiasCorrectedGaussianClassifier":
        return cls(**small).fit(rng.normal(size=(20, 6)), np.repeat([0, 1], 10))
    if cls.__name__.startswith("Compressed"):
        return cls(order=2, **small).fit(rng.integers(0, 3, (30, 4)), rng.integers(0, 2, 30))
    return cls(groups=3, **small).fit(rng.normal(size=(20, 6)), rng.normal(size=20))


@pytest.mark.parametrize("cls", MCMC, ids=lambda cls: cls.__name__)
def test_mcmc_output_has_chain_and_draw_dims_and_only_post_burn_in_draws(cls):
    model = _small_fit(cls)
    assert not [name for name in vars(model) if name.endswith("seconds_")]
    idata = model.to_inference_data()
    for name, variable in idata.posterior.data_vars.items():
        assert variable.dims[:2] == ("chain", "draw"), name
    assert idata.posterior.sizes["chain"] == 2 and idata.posterior.sizes["draw"] == 4  # (12 − 4) // 2
    summary = model.mcmc_summary()
    assert summary and all({"mean", "sd", "ess_bulk", "r_hat"} <= set(row) for row in summary.values())


def _documented_names(section):
    """The names a numpydoc section documents (``a, b : type`` documents both a and b)."""
    return {name.strip() for item in section for name in item.name.split(":")[0].split(",")}


def _fit_on_some_small_data(cls):
    """``cls`` fitted on a small data set it accepts: binary features first (most of hdbayes), else continuous."""
    rng = np.random.default_rng(0)
    y = np.tile([0, 1], 20)
    parameters = inspect.signature(cls).parameters
    short = {"n_iter": 20, "burn_in": 5, "progress": False}
    kwargs = {name: value for name, value in short.items() if name in parameters}
    failures = []
    for X in (rng.integers(0, 2, size=(40, 6)), rng.standard_normal((40, 6))):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls(**kwargs).fit(X, y)
        except (ValueError, TypeError) as error:  # the other kind of data
            failures.append(error)
    raise AssertionError(f"{cls.__name__} fits neither small data set: {failures}")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_every_estimator_documents_its_fitted_attributes_and_has_examples(cls):
    doc = ClassDoc(cls)
    assert doc["Examples"], f"{cls.__name__} has no Examples section"
    documented = _documented_names(doc["Attributes"])
    fitted = {name for name in vars(_fit_on_some_small_data(cls)) if name.endswith("_") and not name.startswith("_")}
    assert not fitted - documented, f"{cls.__name__}: fitted attributes missing under Attributes"
