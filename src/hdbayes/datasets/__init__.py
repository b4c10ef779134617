"""Data for hdbayes: simulators from the papers and loaders for the real data.

Real data files are never shipped with the package; they are found in a data
directory (``HDBAYES_DATA`` or the per-user cache ``~/.cache/hdbayes``), checked
against their sha256 and downloaded from their public source when missing.
See :func:`data_path`.

Every simulator and loader returns one :class:`sklearn.utils.Bunch` layout: ``X``, ``y``
(the training cases), ``X_test``, ``y_test`` (when there is a test set), ``feature_names``,
``DESCR``, then the model-specific extras; the training size is ``n_samples`` and the
test size ``n_test`` everywhere.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {
    "DataDownloadError": "._fetch",
    "data_path": "._fetch",
    "encode_english_text": ".sequences",
    "get_data_home": "._fetch",
    "load_colon": ".real",
    "load_english_text": ".sequences",
    "load_lymphoma": ".real",
    "load_srbct": ".real",
    "measurement_rows": ".regression",
    "sample_polya_urn": ".documents",
    "simulate_block_sparse": ".regression",
    "simulate_bursty_documents": ".documents",
    "simulate_cauchy_classification": ".sequences",
    "simulate_gaussian": ".simulate",
    "simulate_hmm": ".sequences",
    "simulate_mixture": ".simulate",
    "simulate_naive_bayes": ".simulate",
}

__all__ = [
    "DataDownloadError",
    "data_path",
    "encode_english_text",
    "get_data_home",
    "load_colon",
    "load_english_text",
    "load_lymphoma",
    "load_srbct",
    "measurement_rows",
    "sample_polya_urn",
    "simulate_block_sparse",
    "simulate_bursty_documents",
    "simulate_cauchy_classification",
    "simulate_gaussian",
    "simulate_hmm",
    "simulate_mixture",
    "simulate_naive_bayes",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
