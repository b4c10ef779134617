"""What every simulator and loader of :mod:`hdbayes.datasets` shares: the Bunch layout and argument checks.

Every data set is a :class:`sklearn.utils.Bunch` with the keys, in this order,

``X``, ``y``
    The training cases (``n_samples`` rows) and their targets.
``X_test``, ``y_test``
    The test cases (``n_test`` rows), when the data set has a test set.
``feature_names``
    One name per column of ``X`` (an object array; ``None`` when a file gives no names).
``DESCR``
    A description of the data set.

followed by the model-specific extras (true parameters, latent variables, file names).
"""

from __future__ import annotations

import numbers
import os
import re
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from hdbayes._validation import check_count
from hdbayes.exceptions import InputTypeError, InputValueError

__all__ = [
    "BLOCK_ELEMENTS",
    "check_probability",
    "check_sizes",
    "data_bunch",
    "file_key",
    "numbered_names",
    "shared_doc",
]

#: Random uniforms the simulators draw per column block of X (float32: about 8 MB of temporaries per block,
#: whatever p is). Fixed, so the output for a given seed depends on nothing but the arguments (in particular
#: not on ``sparse``).
BLOCK_ELEMENTS = 1 << 21


def file_key(path: Path) -> tuple[str, int, int]:
    """``(resolved path, mtime_ns, size)``: a cheap name for a file version (``read_plink``'s dask task names).

    Not a content check: a file changed in place can keep its size and modification time, so the loaders of the
    registry files key their caches by the sha256 of the bytes they parsed instead."""
    st = path.stat()
    return os.fspath(path.resolve()), st.st_mtime_ns, st.st_size


def numbered_names(n_features, prefix="x"):
    """``prefix0``, ``prefix1``, ... as an object array: the feature names of a simulated data set."""
    return np.asarray([f"{prefix}{j}" for j in range(n_features)], dtype=object)


def data_bunch(X, y, X_test=None, y_test=None, *, feature_names, DESCR, **extras):
    """The one Bunch layout of the data sets (see the module docstring); ``X_test`` and ``y_test`` are
    left out when ``X_test`` is None."""
    test = {} if X_test is None else {"X_test": X_test, "y_test": y_test}
    return Bunch(X=X, y=y, **test, feature_names=feature_names, DESCR=DESCR, **extras)


def check_sizes(n_samples, n_test, *, test_minimum=1):
    """The two size arguments of every simulator: ``n_samples >= 1`` training and ``n_test`` test cases."""
    return check_count("n_samples", n_samples), check_count("n_test", n_test, minimum=test_minimum)


def check_probability(name, value):
    """A real number in [0, 1]; raises InputTypeError/InputValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a probability, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise InputValueError(f"{name} must lie in [0, 1], got {value}")
    return value


def shared_doc(texts):
    """Decorator: replace every docstring line ``{name}`` by ``texts[name]``, indented like that line, so that
    the documentation several functions share is written once."""

    def fill(match):
        return "\n".join(match.group(1) + line for line in texts[match.group(2)].splitlines())

    def decorate(func):
        func.__doc__ = re.sub(r"^([ \t]*)\{(\w+)\}$", fill, func.__doc__, flags=re.MULTILINE)
        return func

    return decorate
