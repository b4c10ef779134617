"""Data for hdbayes: simulators from the papers and loaders for the real data.

Real data files are never shipped with the package; they are found in a data
directory (``HDBAYES_DATA`` or the per-user cache ``~/.cache/hdbayes``), checked
against their sha256 and downloaded from their public source when missing.
See :func:`data_path` and :func:`data_bytes` (which returns the verified bytes
themselves, what the loaders parse).

Every simulator and loader returns one :class:`sklearn.utils.Bunch` layout: ``X``, ``y``
(the training cases), ``X_test``, ``y_test`` (when there is a test set), ``feature_names``,
``DESCR``, then the model-specific extras; the training size is ``n_samples`` and the
test size ``n_test`` everywhere.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    "._fetch": ("DataDownloadError", "data_bytes", "data_path", "get_data_home"),
    ".categorical": ("simulate_categorical_naive_bayes",),
    ".documents": ("sample_polya_urn", "simulate_bursty_documents"),
    ".genotypes": ("read_plink", "simulate_genotypes"),
    ".microarray": ("MICROARRAY_DATASETS", "load_microarray"),
    ".real": ("load_colon", "load_lymphoma", "load_srbct"),
    ".regression": ("measurement_rows", "simulate_block_sparse"),
    ".sequences": ("encode_english_text", "load_english_text", "simulate_cauchy_classification", "simulate_hmm"),
    ".simulate": ("simulate_gaussian", "simulate_mixture", "simulate_naive_bayes", "simulate_probit"),
}

__all__ = [
    "DataDownloadError", "MICROARRAY_DATASETS", "data_bytes", "data_path", "encode_english_text", "get_data_home",
    "load_colon", "load_english_text", "load_lymphoma", "load_microarray", "load_srbct", "measurement_rows",
    "read_plink", "sample_polya_urn", "simulate_block_sparse", "simulate_bursty_documents",
    "simulate_categorical_naive_bayes", "simulate_cauchy_classification", "simulate_gaussian", "simulate_genotypes",
    "simulate_hmm", "simulate_mixture", "simulate_naive_bayes", "simulate_probit",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
