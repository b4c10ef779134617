"""Data for hdbayes: simulators from the papers and loaders for the real data.

Real data files are never shipped with the package; they are found in a data
directory (``HDBAYES_DATA`` or the per-user cache ``~/.cache/hdbayes``), checked
against their sha256 and downloaded from their public source when missing.
See :func:`data_path`.
"""

from ._fetch import DataDownloadError, data_path, get_data_home
from .documents import sample_polya_urn, simulate_bursty_documents
from .real import load_colon, load_lymphoma, load_srbct
from .regression import measurement_rows, simulate_block_sparse
from .sequences import encode_english_text, load_english_text, simulate_cauchy_classification, simulate_hmm
from .simulate import simulate_gaussian, simulate_mixture, simulate_naive_bayes

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
