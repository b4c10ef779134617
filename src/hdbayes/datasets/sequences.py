"""Data for the high-order interaction experiments of Li & Neal (thesis ch. 3).

* :func:`simulate_hmm` — binary sequences from the 8-state hidden Markov model of
  the first sequence-prediction experiment (thesis §3.4.3; Li & Neal §3.6).
* :func:`encode_english_text` and :func:`load_english_text` — text encoded as
  vowel / consonant / other, cut into overlapping windows (thesis
  §3.4.5, paper §3.7).  The paper's article is not available; the loader uses
  *Alice's Adventures in Wonderland* (Project Gutenberg eBook #11) instead.
* :func:`simulate_cauchy_classification` — discrete features and a binary
  response from a logistic model with Cauchy interaction coefficients of orders
  1 to 4 (thesis §3.5.3).

Conventions shared by all of them (thesis §3.2, and this library's): symbols and features are
0-based integer codes (the papers' 1..K shifted down by one); a sequence case is
a row of ``X`` holding the history in time order, **the last column being the
most recent symbol** :math:`x_O`, and ``y`` is the next symbol :math:`x_{O+1}`.
A model of order ``o`` smaller than the history length uses ``X[:, -o:]``.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._validation import check_count, check_generator
from hdbayes.exceptions import InputValueError

from ._common import check_probability, check_sizes, data_bunch, numbered_names
from ._fetch import REGISTRY, data_bytes

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = [
    "DEFAULT_HMM_PERMUTATION",
    "TEXT_SYMBOLS",
    "encode_english_text",
    "load_english_text",
    "simulate_cauchy_classification",
    "simulate_hmm",
]

#: Dominating transitions of the 8-state HMM, 0-based: state ``j`` moves to
#: ``DEFAULT_HMM_PERMUTATION[j]`` with the dominating probability.  In the
#: papers' 1-based numbering: 1→5, 2→3, 3→8, 4→6, 5→7, 6→2, 7→1, 8→4 — an
#: assumption of this library (the thesis's diagram of the model is lost), consistent with every fact the
#: text states about the lost diagram (2→3 is the only strong arrow from an even "rectangle" state
#: to an odd "oval" state, and it is followed by 3→8).
DEFAULT_HMM_PERMUTATION = (4, 2, 7, 5, 6, 1, 0, 3)

#: Names of the codes returned by :func:`encode_english_text`.
TEXT_SYMBOLS = ("vowel", "consonant", "other")

# Cap on the number of coefficients simulate_cauchy_classification draws eagerly.
_MAX_COEFFICIENTS = 10_000_000


def _lag_names(order: int) -> np.ndarray:
    """Feature names of histories of ``order`` symbols in time order: ``lag<order>``, ..., ``lag1``."""
    return np.asarray([f"lag{order - j}" for j in range(order)], dtype=object)


# --------------------------------------------------------------------------------------------------
# Hidden Markov model (thesis §3.4.3)
# --------------------------------------------------------------------------------------------------


def _check_permutation(permutation, n_hidden: int, rng: np.random.Generator) -> np.ndarray:
    if permutation is None:
        if n_hidden == len(DEFAULT_HMM_PERMUTATION):
            return np.asarray(DEFAULT_HMM_PERMUTATION, dtype=np.int64)
        permutation = "random"
    if isinstance(permutation, str):
        if permutation != "random":
            raise ValueError(f"permutation must be None, 'random' or an array, got {permutation!r}")
        return rng.permutation(n_hidden)
    perm = np.asarray(permutation)
    if perm.shape != (n_hidden,) or not np.issubdtype(perm.dtype, np.integer):
        raise ValueError(f"permutation must be an integer array of shape ({n_hidden},), got {permutation!r}")
    if not np.array_equal(np.sort(perm), np.arange(n_hidden)):
        raise ValueError(f"permutation must be a permutation of 0..{n_hidden - 1}, got {perm.tolist()}")
    return perm.astype(np.int64)


def _sample_rows(cdf: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Categorical draws: for each i, the first k with ``cdf[rows[i], k] > u[i]``."""
    k = (cdf[rows] <= u[:, None]).sum(axis=1)
    return np.minimum(k, cdf.shape[1] - 1)  # guards against round-off in the last cdf value


def simulate_hmm(
    n_samples: int = 500,
    n_test: int = 5000,
    length: int = 21,
    random_state: RandomStateLike = None,
    *,
    n_hidden: int = 8,
    p_transition: float = 0.95,
    p_emission: float = 0.95,
    permutation: Literal["random"] | ArrayLike | None = None,
) -> Bunch:
    r"""Simulate binary sequences from the hidden Markov model of Li & Neal (thesis §3.4.3).

    The data of the first sequence-prediction experiment (thesis §3.4.3, paper
    §3.6): a hidden chain :math:`h_t` on 8 states, each having one dominating
    transition of probability 0.95; the remaining 0.05 of each row of the
    transition matrix is spread over the other states in proportion to i.i.d.
    Uniform(0, 1) weights (as in the author's ``gen_hmm`` in BPHO).  The
    dominating transitions form a permutation of the states.  The observation
    :math:`x_t` is binary: the papers' even states (the diagram's "rectangles")
    emit the papers' symbol 1 with probability 0.95, the odd states ("ovals")
    emit symbol 2 with probability 0.95.  :math:`h_1` is uniform on the states
    and every sequence is generated independently.

    The paper generates 5500 sequences of length 21, 500 for training and 5000
    for testing, and predicts :math:`x_{21}` from the preceding
    :math:`O \le 20` symbols: the defaults.  ``X`` holds the 20 history symbols,
    so a model of order ``O`` uses ``X[:, -O:]``.

    Codes are 0-based: hidden state ``j`` here is the papers' state ``j + 1``
    and observation code ``c`` the papers' symbol ``c + 1``.  Hence hidden codes
    1, 3, 5, 7 (papers' even states) emit code 0 with probability
    ``p_emission`` and hidden codes 0, 2, 4, 6 emit code 1 with that
    probability (for other ``n_hidden`` the same parity rule applies).

    Parameters
    ----------
    n_samples, n_test : int, default=500, 5000
        Numbers of training and test sequences (each >= 1).
    length : int, default=21
        Length of each whole sequence (history plus the symbol to predict),
        >= 2; ``X`` has ``length - 1`` columns.
    random_state : None, int or numpy.random.Generator, default=None
        Seed or generator (see :func:`hdbayes._validation.check_generator`).
        The same seed and arguments give identical output.
    n_hidden : int, default=8
        Number of hidden states (>= 2).
    p_transition : float, default=0.95
        Probability of each state's dominating transition.
    p_emission : float, default=0.95
        Probability that a state emits the symbol of its parity class.
    permutation : None, "random" or array of int, default=None
        Dominating transitions, 0-based: state ``j`` moves to
        ``permutation[j]`` with probability ``p_transition``.  The true
        permutation of the paper's figure is lost; ``None`` uses
        :data:`DEFAULT_HMM_PERMUTATION` (an assumption, see there) when ``n_hidden == 8``
        and a random permutation otherwise; ``"random"`` draws one from
        ``random_state``.

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n_samples, length - 1), int8
            Histories in time order; ``X[:, -1]`` is the most recent symbol.
        y : ndarray of shape (n_samples,), int64
            The symbol following each history (0 or 1).
        X_test : ndarray of shape (n_test, length - 1), int8
        y_test : ndarray of shape (n_test,), int64
        feature_names : ndarray of str
            ``lag<length - 1>``, ..., ``lag1`` (``lag1`` is the most recent symbol).
        DESCR : str
        hidden, hidden_test : ndarray of shape (n, length), int8
            The hidden state paths of the training and test sequences (the last
            column is the state emitting the target).
        transition : ndarray of shape (n_hidden, n_hidden)
            ``transition[i, j] = P(h_{t+1} = j | h_t = i)``.
        emission : ndarray of shape (n_hidden, 2)
            ``emission[i, c] = P(x_t = c | h_t = i)``.
        initial : ndarray of shape (n_hidden,)
            Distribution of :math:`h_1` (uniform).
        permutation : ndarray of shape (n_hidden,), int64
            The dominating transitions: state ``j`` moves to ``permutation[j]`` with probability
            ``p_transition``.

    Notes
    -----
    Draw order for a given generator: the permutation (only if random), the
    off-dominant transition weights, then for all ``n_samples + n_test``
    sequences together (training rows first) the hidden path and the
    observations, one time step at a time.  The HMM parameters thus depend only
    on the seed and ``n_hidden``, not on the sample sizes.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_hmm
    >>> hmm = simulate_hmm(n_samples=50, n_test=20, random_state=0)
    >>> hmm.X.shape, hmm.y_test.shape, hmm.transition.shape
    ((50, 20), (20,), (8, 8))
    """
    n_train, n_test = check_sizes(n_samples, n_test)
    length = check_count("length", length, minimum=2)
    n_hidden = check_count("n_hidden", n_hidden, minimum=2)
    p_transition = check_probability("p_transition", p_transition)
    p_emission = check_probability("p_emission", p_emission)
    rng = check_generator(random_state)
    perm = _check_permutation(permutation, n_hidden, rng)

    rows = np.arange(n_hidden)
    weights = 1.0 - rng.random((n_hidden, n_hidden))  # in (0, 1]
    weights[rows, perm] = 0.0
    transition = (1.0 - p_transition) * weights / weights.sum(axis=1, keepdims=True)
    transition[rows, perm] = p_transition
    # papers' state j + 1 even <=> j odd: emits code 0 (papers' symbol 1) with probability p_emission
    emission = np.empty((n_hidden, 2))
    odd = rows % 2 == 1
    emission[odd] = (p_emission, 1.0 - p_emission)
    emission[~odd] = (1.0 - p_emission, p_emission)
    initial = np.full(n_hidden, 1.0 / n_hidden)

    n = n_train + n_test
    cdf = np.cumsum(transition, axis=1)
    hidden = np.empty((n, length), dtype=np.int8)
    obs = np.empty((n, length), dtype=np.int8)
    h = rng.integers(0, n_hidden, size=n)
    for t in range(length):
        if t > 0:
            h = _sample_rows(cdf, h, rng.random(n))
        hidden[:, t] = h
        obs[:, t] = rng.random(n) >= emission[h, 0]  # 0 with probability emission[h, 0]

    descr = (
        f"Binary sequences from a hidden Markov model with {n_hidden} states (Li & Neal; thesis §3.4.3): "
        f"p_transition = {p_transition:g}, p_emission = {p_emission:g}, sequences of {length} symbols, "
        f"{n_train} training and {n_test} test cases."
    )
    return data_bunch(
        obs[:n_train, :-1].copy(), obs[:n_train, -1].astype(np.int64),
        obs[n_train:, :-1].copy(), obs[n_train:, -1].astype(np.int64),
        feature_names=_lag_names(length - 1), DESCR=descr,
        hidden=hidden[:n_train].copy(), hidden_test=hidden[n_train:].copy(),
        transition=transition, emission=emission, initial=initial, permutation=perm,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------
# English text (thesis §3.4.5)
# --------------------------------------------------------------------------------------------------

_CODE_TABLE = np.full(256, 2, dtype=np.int8)
_CODE_TABLE[np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", dtype=np.uint8)] = 1
_CODE_TABLE[np.frombuffer(b"aeiouAEIOU", dtype=np.uint8)] = 0


def encode_english_text(text: str, *, collapse_other: bool = True) -> np.ndarray:
    """Encode text as vowel (0), consonant (1) or other (2), as in thesis §3.4.5.

    The encoding of the English-text experiment (thesis §3.4.5, paper §3.7):
    each character becomes 0 if it is a vowel letter ``a e i o u``, 1 if it is
    any other letter, and 2 for everything else (spaces, line breaks, digits,
    punctuation, special symbols); then every run of consecutive 2s is
    collapsed into a single 2.  The papers' codes 1, 2, 3 are shifted to 0, 1, 2.

    Details the papers leave open, resolved by this library: letters are
    case-insensitive; ``y`` is a consonant; only the 26 ASCII letters are
    letters (accented and other non-ASCII characters are "other"); leading and
    trailing "other" characters are kept (collapsed to one symbol each) — strip
    the text first if they are unwanted.

    Parameters
    ----------
    text : str
        The text to encode.
    collapse_other : bool, default=True
        Collapse runs of "other" into a single symbol (as in the papers).

    Returns
    -------
    ndarray of shape (n_symbols,), int8
        Codes in {0, 1, 2}; see ``TEXT_SYMBOLS`` for their names.

    Examples
    --------
    >>> from hdbayes.datasets import encode_english_text
    >>> encode_english_text("Hey, you!").tolist()
    [1, 0, 1, 2, 1, 0, 0, 2]
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    # one byte per code point: every non-ASCII character becomes b"?" ("other")
    raw = np.frombuffer(text.encode("ascii", errors="replace"), dtype=np.uint8)
    codes = _CODE_TABLE[raw]
    if collapse_other and codes.size:
        other = codes == 2
        keep = np.ones(codes.shape, dtype=bool)
        keep[1:] = ~(other[1:] & other[:-1])
        codes = codes[keep]
    return codes.copy()


def _gutenberg_body(text: str, file: str = "the text") -> str:
    """The text between the ``*** START OF`` and ``*** END OF`` lines of a Gutenberg file."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("*** START OF")), None)
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("*** END OF")), None)
    if start is None or end is None or end <= start:
        raise ValueError(f"{file} lacks the Project Gutenberg '*** START OF' / '*** END OF' lines")
    return "\n".join(lines[start + 1 : end]).strip()


@functools.lru_cache(maxsize=2)
def _alice_codes(digest: str, data: bytes, file: str) -> np.ndarray:
    """The encoded text of the verified bytes ``data`` (cached per digest; ``data`` and ``file`` are equal for
    equal digests, so they do not split the cache)."""
    text = data.decode("utf-8-sig")
    codes = encode_english_text(_gutenberg_body(text, file))
    codes.flags.writeable = False
    return codes


def _windows(seq: np.ndarray, width: int, start: int, count: int) -> np.ndarray:
    """``count`` overlapping windows of ``width`` symbols beginning at ``seq[start]``."""
    view = np.lib.stride_tricks.sliding_window_view(seq, width)
    return view[start : start + count].copy()


_ALICE_DESCR = """\
English text encoded as vowel / consonant / other (Li & Neal; thesis §3.4.5).

The papers used an article from the web site of the Department of Statistics,
University of Toronto (3930 symbols after encoding, 3910 windows of 21 symbols:
1000 for training, 2910 for testing).  That article is not available; this
loader substitutes Lewis Carroll, *Alice's Adventures in Wonderland* (Project
Gutenberg eBook #11, public domain), keeping only the text between the
"*** START OF" and "*** END OF" lines (the Gutenberg header and licence are
dropped) with leading and trailing white space removed.  Codes: 0 = vowel
(a e i o u), 1 = consonant (other letters, including y), 2 = other (runs
collapsed).  Cases are consecutive overlapping windows; the first ``n_samples``
are the training cases and the next ``n_test`` the test cases.
"""


def load_english_text(
    order: int = 20,
    n_samples: int = 1000,
    n_test: int | None = 2910,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    random_state: RandomStateLike = None,
    *,
    start: int | Literal["random"] = 0,
) -> Bunch:
    """Load English text as vowel/consonant/other sequence-prediction data (thesis §3.4.5).

    The data of the second sequence-prediction experiment (thesis §3.4.5,
    paper §3.7), with *Alice's Adventures in Wonderland* standing in for the
    lost article (see ``DESCR``).  The body of the book (Project Gutenberg
    header and licence removed) is encoded by :func:`encode_english_text` into
    about 140,000 symbols.  A contiguous stretch of ``order + n_samples +
    n_test`` symbols beginning at symbol ``start`` is cut into ``n_samples +
    n_test`` overlapping windows of ``order + 1`` symbols (``order`` history
    symbols and the symbol to predict); as in the paper the first ``n_samples``
    windows are the training cases and the following ``n_test`` the test cases.
    The defaults reproduce the paper's design: windows of 21 symbols (history
    20 = the maximum order fitted), 1000 training and 2910 test cases, so 3930
    symbols are used — the length of the paper's encoded article.

    Parameters
    ----------
    order : int, default=20
        Number of history symbols per case (>= 1); a model of order ``O <=
        order`` uses ``X[:, -O:]``.
    n_samples : int, default=1000
        Number of training windows (>= 1).
    n_test : int or None, default=2910
        Number of test windows (>= 1); ``None`` takes every window left after
        the training ones.
    data_home : str or path-like, optional
        Folder holding ``alice-gutenberg-11.txt``; see
        :func:`hdbayes.datasets.data_path`.
    download : bool, default=True
        Whether to download the file when it is not found locally.
    random_state : None, int or numpy.random.Generator, default=None
        Used only when ``start="random"``.
    start : int or "random", default=0
        Index of the first symbol used (0 = the start of the book).  With
        ``"random"`` it is drawn uniformly among the offsets that leave room
        for all the windows, from ``random_state``.

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n_samples, order), int8
            Histories in time order; ``X[:, -1]`` is the most recent symbol.
        y : ndarray of shape (n_samples,), int64
            The symbol following each history (0 vowel, 1 consonant, 2 other).
        X_test : ndarray of shape (n_test, order), int8
        y_test : ndarray of shape (n_test,), int64
        feature_names : ndarray of str
            ``lag<order>``, ..., ``lag1`` (``lag1`` is the most recent symbol).
        DESCR : str
        sequence : ndarray of shape (order + n_samples + n_test,), int8
            The encoded stretch the windows were cut from: window ``i`` (training
            then test) is ``sequence[i : i + order + 1]``.
        start : int
            Index of ``sequence[0]`` in the encoded book.
        n_symbols : int
            Length of the whole encoded book.
        symbol_names : tuple of str
            ``("vowel", "consonant", "other")``.
        filename : str
            Path of the file read.

    Raises
    ------
    FileNotFoundError, DataDownloadError
        If the file is missing and cannot be obtained.
    ValueError
        If the file's checksum differs from the registry, it lacks the
        Gutenberg markers, or the text is too short for the windows asked for.

    Examples
    --------
    >>> from hdbayes.datasets import load_english_text
    >>> text = load_english_text()  # doctest: +SKIP
    >>> text.X.shape, text.X_test.shape  # doctest: +SKIP
    ((1000, 20), (2910, 20))
    """
    order = check_count("order", order)
    n_train = check_count("n_samples", n_samples)
    if n_test is not None:
        n_test = check_count("n_test", n_test)
    if isinstance(start, str):
        if start != "random":
            raise InputValueError(f"start must be a non-negative integer or 'random', got {start!r}")
    else:
        start = check_count("start", start, minimum=0)
    rng = check_generator(random_state) if start == "random" else None

    name = "alice-gutenberg-11.txt"
    path, data = data_bytes(name, data_home=data_home, download=download)  # read once, verified, parsed
    codes = _alice_codes(REGISTRY[name].sha256, data, name)
    n_symbols = codes.shape[0]
    n_windows_total = n_symbols - order  # windows of order + 1 symbols

    if n_test is None:
        first = 0 if start == "random" else start
        n_test = n_windows_total - first - n_train
        if n_test < 1:
            raise ValueError(
                f"the encoded text has {n_symbols} symbols: no test windows are left after "
                f"{n_train} training windows of {order + 1} symbols starting at {first}"
            )
    n_windows = n_train + n_test
    last_start = n_windows_total - n_windows
    if last_start < 0:
        raise ValueError(
            f"the encoded text has {n_symbols} symbols, too few for {n_windows} windows of {order + 1} symbols"
        )
    if start == "random":
        start = int(rng.integers(0, last_start + 1))
    elif start > last_start:
        raise ValueError(
            f"start={start} leaves too few symbols for {n_windows} windows of {order + 1} symbols "
            f"(the encoded text has {n_symbols}; start must be <= {last_start})"
        )

    windows = _windows(codes, order + 1, start, n_windows)
    return data_bunch(
        windows[:n_train, :-1].copy(), windows[:n_train, -1].astype(np.int64),
        windows[n_train:, :-1].copy(), windows[n_train:, -1].astype(np.int64),
        feature_names=_lag_names(order), DESCR=_ALICE_DESCR,
        sequence=codes[start : start + order + n_windows].copy(), start=start, n_symbols=int(n_symbols),
        symbol_names=TEXT_SYMBOLS, filename=os.fspath(path),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------
# Classification data from a Cauchy interaction model (thesis §3.5.3)
# --------------------------------------------------------------------------------------------------


def simulate_cauchy_classification(
    n_samples: int = 500,
    n_test: int = 5000,
    n_features: int = 7,
    n_values: int = 3,
    order: int = 4,
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate classification data from a logistic model with Cauchy interactions (thesis §3.5.3).

    The data of the classification experiment of thesis §3.5.3: ``p = 7``
    features, each i.i.d. uniform on 3 values, and a binary response from the
    interaction model of thesis §3.2.3 with interactions of orders
    0 to 4 only,

    .. math::

        P(y = 1 \mid x) = \mathrm{logistic}\Big(\beta_0
            + \sum_{o=1}^{4} \sum_{\mathcal P \in \mathcal P^o_x} \beta_{\mathcal P}\Big),
        \qquad \beta_{\mathcal P} \sim \mathrm{Cauchy}(0, \sigma_{o(\mathcal P)}),
        \quad \sigma_o = 1/o,

    with the intercept :math:`\beta_0 = 0`.  Every coefficient of every
    pattern of order 1 to ``order`` is drawn (3990 of them for the defaults,
    :math:`\sum_{o=1}^{4} \binom{7}{o} 3^o`; 3991 with the intercept, as
    counted in thesis §3.5.3); each case uses
    :math:`\sum_{o=1}^{4} \binom{7}{o} = 98` of them (99 with the intercept).  The paper draws 5500
    cases, 500 for training and 5000 for testing: the defaults.  Codes are
    0-based: feature values 0..``n_values - 1`` and ``y = 1`` for the papers'
    class 2 (the one with the non-zero linear function).

    Parameters
    ----------
    n_samples, n_test : int, default=500, 5000
        Numbers of training and test cases (each >= 1).
    n_features : int, default=7
        Number of features ``p`` (>= 1).
    n_values : int, default=3
        Number of values ``K`` of every feature (>= 2).
    order : int, default=4
        Highest interaction order of the true model, ``1 <= order <= n_features``.
    random_state : None, int or numpy.random.Generator, default=None
        Seed or generator; the same seed and arguments give identical output,
        and the coefficients depend only on the seed, ``n_features``,
        ``n_values`` and ``order`` (not on the sample sizes).

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n_samples, n_features), int8
        y : ndarray of shape (n_samples,), int64 (0/1)
        X_test : ndarray of shape (n_test, n_features), int8
        y_test : ndarray of shape (n_test,), int64 (0/1)
        feature_names : ndarray of str
            ``x0``, ``x1``, ...
        DESCR : str
        proba, proba_test : ndarray of shape (n,)
            The true :math:`P(y = 1 \mid x)` of each case (the Bayes rule
            predicts ``proba > 0.5``).
        coefficients : dict
            Maps a tuple of feature positions ``(t_1 < ... < t_o)`` to an
            ndarray of shape ``(n_values,) * o``: the coefficient of the pattern
            fixing ``x[t_1], ..., x[t_o]`` to the values ``v_1, ..., v_o`` is
            ``coefficients[(t_1, ..., t_o)][v_1, ..., v_o]``.
        sigmas : ndarray of shape (order + 1,)
            ``sigmas[o]`` is the Cauchy scale of the order-``o`` coefficients
            (``1/o``); ``sigmas[0] = 0`` as the intercept is fixed at 0.
        intercept : float
            0.0.

    Notes
    -----
    Draw order: the coefficients, order by order and, within an order, by
    position tuples in lexicographic order (each block as a C-ordered array);
    then the features of all ``n_samples + n_test`` cases (training rows first);
    then one uniform per case for the response.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_cauchy_classification
    >>> sim = simulate_cauchy_classification(n_samples=50, n_test=20, random_state=0)
    >>> sim.X.shape, sim.y_test.shape, sum(c.size for c in sim.coefficients.values())
    ((50, 7), (20,), 3990)
    """
    n_train, n_test = check_sizes(n_samples, n_test)
    p = check_count("n_features", n_features)
    K = check_count("n_values", n_values, minimum=2)
    if K > 127:
        raise InputValueError(f"n_values must be <= 127 (codes are stored as int8), got {K}")
    order = check_count("order", order)
    if order > p:
        raise InputValueError(f"order must be <= n_features = {p}, got {order}")
    total = sum(math.comb(p, o) * K**o for o in range(1, order + 1))
    if total > _MAX_COEFFICIENTS:
        raise InputValueError(
            f"the true model would have {total} coefficients (more than {_MAX_COEFFICIENTS}); "
            "reduce n_features, n_values or order"
        )
    rng = check_generator(random_state)

    sigmas = np.zeros(order + 1)
    sigmas[1:] = 1.0 / np.arange(1, order + 1)
    coefficients = {}
    for o in range(1, order + 1):
        for positions in itertools.combinations(range(p), o):
            coefficients[positions] = sigmas[o] * rng.standard_cauchy((K,) * o)

    n = n_train + n_test
    X = rng.integers(0, K, size=(n, p), dtype=np.int8)
    logit = np.zeros(n)
    for positions, coef in coefficients.items():
        logit += coef[tuple(X[:, t] for t in positions)]
    proba = 0.5 * (1.0 + np.tanh(0.5 * logit))  # logistic, overflow-free
    y = (rng.random(n) < proba).astype(np.int64)

    descr = (
        f"Classification data from a logistic model with Cauchy interactions of orders 1 to {order} "
        f"(Li & Neal; thesis §3.5.3): p = {p} features with {K} values, {n_train} training and {n_test} test cases."
    )
    return data_bunch(X[:n_train], y[:n_train], X[n_train:], y[n_train:], feature_names=numbered_names(p),
                      DESCR=descr, proba=proba[:n_train], proba_test=proba[n_train:], coefficients=coefficients,
                      sigmas=sigmas, intercept=0.0)  # fmt: skip
