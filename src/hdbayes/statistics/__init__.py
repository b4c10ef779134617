"""Mergeable sufficient statistics.

A fit that depends on the data only through sums over the cases can be computed shard by
shard: the statistics of two shards add up to the statistics of their union, so data held
in pieces (chunks of a large matrix, a stream, the sites of a consortium) never has to be
gathered in one place. The objects here can be added, compared, pickled and stored.

* :class:`BinaryClassCounts` — binary features and a binary class: the class sizes
  (N_0, N_1) and the number of ones of every feature in each class, (I_{0,j}, I_{1,j}).
  They determine the absolute correlation ``|COR_j|`` (thesis eq. 2.1, the statistic of the correlation selection), the
  Bayesian naive Bayes model of the selected features and its adjustment factor (which
  needs only N_0, N_1 and γ).

:meth:`BinaryClassCounts.from_dask` computes them from a chunked ``dask.array`` on the
workers (one chunk at a time, tree-reduced), so X is never gathered; dask is an optional
dependency, imported only there (importing hdbayes never imports dask).

* :class:`GaussianClassMoments` — real features and a class with G values: per class the
  size n_g, the means and the centred sums of squares of every feature, merged by the
  pairwise update of Chan, Golub & LeVeque (stable at a large offset); they give the
  one-way ANOVA F statistic (Li 2009 eq. 25) and the Gaussian classifier's class moments.

* :class:`CategoricalClassCounts` — categorical features (level codes 0..L−1) and a class with G
  values: the class sizes and, per feature, the G × L table of class by level. They determine
  Pearson's X² of every feature (docs/categorical_correction.md eq. C7), the categorical naive Bayes
  model of the selected features and its adjustment factor (which needs only the class sizes, L and γ).

One module a statistic (:mod:`~hdbayes.statistics.binary_counts`,
:mod:`~hdbayes.statistics.gaussian_moments`, :mod:`~hdbayes.statistics.categorical_counts`, on the shared
base of :mod:`~hdbayes.statistics._base`), and :mod:`~hdbayes.statistics.chunks`, the one way over the
chunks of a dask array used by every chunked fit of the package: :func:`reduce_chunks` (a mergeable
statistic of every block, merged by a tree over the row chunks and joined over the column chunks, input
errors re-raised naming the chunk, see :func:`chunk_label`), :func:`map_row_chunks` (a prediction of
every row chunk, as a dask array), :func:`align_rows` and :func:`dask_class_codes` (labels re-chunked and
coded).

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    "hdbayes._validation": ("is_dask_array",),
    ".binary_counts": ("BinaryClassCounts",),
    ".categorical_counts": ("CategoricalClassCounts",),
    ".gaussian_moments": ("GaussianClassMoments",),
}

__all__ = ["BinaryClassCounts", "CategoricalClassCounts", "GaussianClassMoments", "is_dask_array"]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
