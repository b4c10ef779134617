"""scikit-learn's ``set_output`` on every transformer of hdbayes (issue 26).

``set_output(transform="pandas")``, a pipeline's ``set_output`` and the global ``transform_output`` setting
give DataFrames with the transformer's output names and the input's index; the values are those of the
default (numpy) output.
"""

import inspect

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import TransformerMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.pipeline import make_pipeline

import hdbayes
from hdbayes import BayesianBernoulliNB, FeatureBinarizer, MutualInformationSelector, ShrunkCovarianceWhitener

PUBLIC = [getattr(hdbayes, name) for name in hdbayes.__all__]
TRANSFORMERS = sorted(
    (cls for cls in PUBLIC if inspect.isclass(cls) and issubclass(cls, (TransformerMixin, SelectorMixin))),
    key=lambda cls: cls.__name__,
)
OPTIONS = {"MutualInformationSelector": {"n_features_to_select": 2, "binarize": 0.0}}
NAMES = {
    "FeatureBinarizer": ["a", "b", "c", "d", "e"],
    "ShrunkCovarianceWhitener": [f"whitened{j}" for j in range(5)],
}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    X[:, 1] += np.tile([0.0, 3.0], 20)  # informative: the selector keeps it
    frame = pd.DataFrame(X, columns=list("abcde"), index=[f"case{i}" for i in range(40)])
    return frame, np.tile([0, 1], 20)


def test_every_transformer_is_listed():
    assert {cls.__name__ for cls in TRANSFORMERS} == {
        "FeatureBinarizer", "MutualInformationSelector", "ShrunkCovarianceWhitener",
    }  # fmt: skip


@pytest.mark.parametrize("cls", TRANSFORMERS, ids=lambda cls: cls.__name__)
def test_set_output_pandas_gives_a_frame_with_the_output_names_and_the_input_index(cls):
    X, y = _data()
    plain = cls(**OPTIONS.get(cls.__name__, {})).fit(X, y)
    expected = plain.transform(X)
    model = cls(**OPTIONS.get(cls.__name__, {})).set_output(transform="pandas").fit(X, y)
    out = model.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(model.get_feature_names_out())
    assert list(out.columns) == NAMES.get(cls.__name__, list(out.columns))
    assert list(out.index) == list(X.index)
    np.testing.assert_array_equal(out.to_numpy(), expected)
    np.testing.assert_array_equal(model.fit_transform(X, y).to_numpy(), expected)
    assert not isinstance(model.set_output(transform="default").transform(X), pd.DataFrame)


def test_the_selector_names_its_kept_columns():
    X, y = _data()
    out = MutualInformationSelector(**OPTIONS["MutualInformationSelector"]).set_output(transform="pandas").fit(X, y)
    assert "b" in out.transform(X).columns


@pytest.mark.parametrize("cls", TRANSFORMERS, ids=lambda cls: cls.__name__)
def test_the_global_transform_output_setting_is_followed(cls):
    X, y = _data()
    with sklearn.config_context(transform_output="pandas"):
        out = cls(**OPTIONS.get(cls.__name__, {})).fit(X, y).transform(X)
    assert isinstance(out, pd.DataFrame)
    assert not isinstance(cls(**OPTIONS.get(cls.__name__, {})).fit(X, y).transform(X), pd.DataFrame)


def test_a_pipeline_of_hdbayes_steps_takes_set_output():
    X, y = _data()

    def steps():
        return FeatureBinarizer(), MutualInformationSelector(n_features_to_select=2), BayesianBernoulliNB()

    pipeline = make_pipeline(*steps())
    reference = make_pipeline(*steps()).fit(X, y)
    pipeline.set_output(transform="pandas").fit(X, y)
    middle = pipeline[:-1].transform(X)
    assert isinstance(middle, pd.DataFrame) and list(middle.columns) == list(pipeline[:-1].get_feature_names_out())
    np.testing.assert_array_equal(pipeline.predict_proba(X), reference.predict_proba(X))


def test_the_whitener_in_a_pipeline_under_the_global_setting():
    X, y = _data()
    with sklearn.config_context(transform_output="pandas"):
        pipeline = make_pipeline(ShrunkCovarianceWhitener(), FeatureBinarizer()).fit(X, y)
        out = pipeline.transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == NAMES["ShrunkCovarianceWhitener"]


def test_sparse_input_keeps_scikit_learns_refusal_of_pandas_output():
    import scipy.sparse as sp

    X = sp.csr_matrix(np.eye(4))
    with pytest.raises(ValueError, match="outputs a scipy sparse matrix"):
        FeatureBinarizer().set_output(transform="pandas").fit(X).transform(X)
