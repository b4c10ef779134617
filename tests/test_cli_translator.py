"""The command line as a translator: its ranges are the estimators' constraints, and the estimators' errors about
one value of the data come through with the file, line and column of the CSV cell (issue 30)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.utils._param_validation import Interval, InvalidParameterError

import hdbayes
from hdbayes import cli
from hdbayes.cli import main
from hdbayes.exceptions import InputValueError

CANDIDATES = (-1.0, 0.0, 0.5, 1.0, 2.0, math.inf, math.nan)
INTEGER_OPTIONS = {"n_features", "n_iter", "burn_in", "thin", "chains", "n_levels", "n_categories"}


def _estimator_refuses(cls, parameter, value):
    """The oracle: scikit-learn's validation of the estimator's own ``_parameter_constraints``."""
    try:
        cls(**{parameter: value})._validate_params()
    except InvalidParameterError:
        return True
    return False


def _cases():
    parameters = cli._classify_parameters()
    for model in cli.MODELS:
        owner = cli._classify_owner(model)
        for option, parameter in parameters.items():
            rule = cli._MODEL_OPTIONS[option]
            if model not in rule.models:
                continue
            found = owner(parameter)
            if found is not None and any(isinstance(c, Interval) for c in found[0]._parameter_constraints[found[1]]):
                yield model, option, parameter, found  # a numeric option


def _id(value):
    return value if isinstance(value, str) else ""


@pytest.mark.parametrize("model, option, parameter, found", list(_cases()), ids=_id)
def test_the_command_refuses_what_the_estimator_refuses(model, option, parameter, found):
    cls, name = found
    integral = option in INTEGER_OPTIONS
    values = [int(v) for v in CANDIDATES if math.isfinite(v) and v == int(v)] if integral else CANDIDATES
    for value in values:
        args = SimpleNamespace(**{o: None for o in cli._MODEL_OPTIONS}, model=model, command="classify")
        setattr(args, option, value)
        try:
            cli._check_option_ranges(args, {option: parameter}, cli._classify_owner(model))
            refused = False
        except cli.InputError as error:
            refused = True
            assert str(error).startswith(f"--{option.replace('_', '-')} must be ")
            assert str(error).endswith(f"got {value:g}")
        expected = not math.isfinite(value) or _estimator_refuses(cls, name, value)
        assert refused == expected, (model, option, value)


def test_regress_ranges_are_the_estimator_s():
    owner = lambda parameter: (hdbayes.GroupSpikeSlabRegression, parameter)  # noqa: E731
    for option in ("prior_inclusion", "slab_variance", "noise_variance"):
        for value in CANDIDATES:
            args = SimpleNamespace(prior_inclusion=0.5, slab_variance=1.0, noise_variance=1.0)
            setattr(args, option, value)
            try:
                cli._check_option_ranges(args, {option: option}, owner)
                refused = False
            except cli.InputError:
                refused = True
            expected = not math.isfinite(value) or _estimator_refuses(hdbayes.GroupSpikeSlabRegression, option, value)
            assert refused == expected, (option, value)


def test_an_option_the_estimator_allows_is_passed_on():
    # --alpha 0 is the maximum-likelihood smoothing the discrete estimators accept; the command no longer refuses it
    args = SimpleNamespace(**{o: None for o in cli._MODEL_OPTIONS}, model="bernoulli-nb", command="classify")
    args.alpha = 0.0
    cli._check_option_ranges(args, cli._classify_parameters(), cli._classify_owner("bernoulli-nb"))


def test_input_value_error_keeps_its_location_through_pickle():
    import pickle

    error = pickle.loads(pickle.dumps(InputValueError("bad value", location=(3, "g1"))))
    assert error.location == (3, "g1") and str(error) == "bad value"
    assert InputValueError("no cell").location is None


def test_a_prediction_error_names_the_row_of_x_across_batches(monkeypatch):
    import hdbayes._validation as validation

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(40, 6)).astype(float)
    y = np.repeat([0, 1], 20)
    model = hdbayes.BiasCorrectedNaiveBayes(n_features_to_select=6, binarize=None).fit(X, y)
    X_test = rng.integers(0, 2, size=(30, 6)).astype(float)
    X_test[23, 4] = 0.5
    monkeypatch.setattr(validation, "PREDICTION_BATCH_BYTES", 1)  # one row a batch
    with pytest.raises(InputValueError, match="feature 4 has the value 0.5") as caught:
        model.predict_proba(X_test)
    assert caught.value.location == (23, 4)


def _write(path, frame):
    frame.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("where", ["train", "test"])
def test_a_bad_value_is_named_by_file_line_and_column(tmp_path, capsys, where):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.integers(0, 3, size=(30, 4)), columns=["a", "b", "c", "d"])
    frame["cls"] = np.repeat(["x", "y"], 15)
    train, test = frame.iloc[:20].copy(), frame.iloc[20:].copy()
    target = train if where == "train" else test
    target.loc[target.index[6], "c"] = -2  # negative: not a count
    paths = _write(tmp_path / "train.csv", train), _write(tmp_path / "test.csv", test)
    out = tmp_path / "p.csv"
    status = main(["classify", "--train", paths[0], "--test", paths[1], "--target", "cls", "--model",
                   "multinomial-nb", "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    name = "training" if where == "train" else "test"
    assert status == 2 and err.count("\n") == 1, err
    assert f"{name} file {paths[0 if where == 'train' else 1]}, line 8, column 'c': " in err
    assert "has the value -2" in err
    assert not out.exists()


def test_the_option_table_is_the_estimators_parameters():
    """An option that sets a parameter is listed for exactly the models whose estimator has the parameter (a
    variant's field: for the variant it needs); the selection options of the generative models are the command's
    own selection step (MutualInformationSelector), not a parameter of theirs."""
    import hdbayes
    from hdbayes.selection_bias.gaussian.estimator import VARIANTS

    selection = {**cli._SELECTION_PARAMETERS, "no_correct": "correct"}  # the options whose rule names no parameter
    selected_by_the_command = {"bernoulli-nb", "categorical-nb", "multinomial-nb", "dcm"}
    for option, rule in cli._MODEL_OPTIONS.items():
        parameter = rule.parameter or selection[option]
        if rule.needs is not None:
            assert rule.needs[0] == "variant" and set(rule.models) == {"gaussian"}, option
            having = {name for name, variant in VARIANTS.items() if parameter in variant().get_params()}
            assert having == {rule.needs[1]}, option
            continue
        having = {model for model, name in cli._ESTIMATORS.items()
                  if parameter in getattr(hdbayes, name)().get_params(deep=False)}  # fmt: skip
        if option in ("n_features", "threshold"):
            having |= selected_by_the_command
        assert having == set(rule.models), (option, sorted(having ^ set(rule.models)))
