"""Tests for hdbayes.datasets: file location, checksums, downloads, loaders, simulator.

No test touches the network: downloads are served by a patched ``urlopen``.
Tests of the real data sets use the shared data folder (``HDBAYES_DATA`` or
``../shared/data`` next to the repository) and are skipped when it is absent.
"""

from __future__ import annotations

import hashlib
import io
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from hdbayes.datasets import (
    DataDownloadError,
    _fetch,
    data_path,
    get_data_home,
    load_colon,
    load_lymphoma,
    load_srbct,
    real,
    simulate_naive_bayes,
)


def _shared_data_dir() -> Path | None:
    """The folder holding the real data files, or None if not available."""
    candidates = []
    if os.environ.get("HDBAYES_DATA"):
        candidates.append(Path(os.environ["HDBAYES_DATA"]).expanduser())
    # /work/main/tests/test_datasets.py -> /work/shared/data
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for folder in candidates:
        if (folder / "colon.rda").is_file():
            return folder
    return None


SHARED = _shared_data_dir()
needs_shared = pytest.mark.skipif(
    SHARED is None,
    reason="real data files not available (set HDBAYES_DATA to a folder holding colon.rda, SRBCT.rda, lymphoma.RData)",
)

FAKE = "fake.bin"
FAKE_URL = "https://example.invalid/data/fake.bin"
PAYLOAD = b"hdbayes test payload\n" * 1000


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated environment: no HDBAYES_DATA, user cache under tmp_path, no parsed files cached."""
    monkeypatch.delenv("HDBAYES_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    real._parsed_cache.clear()
    yield tmp_path
    real._parsed_cache.clear()


@pytest.fixture
def fake_entry(monkeypatch):
    """Register ``fake.bin`` whose expected content is PAYLOAD."""
    entry = _fetch.RemoteFile(sha256=_sha(PAYLOAD), url=FAKE_URL)
    monkeypatch.setitem(_fetch.REGISTRY, FAKE, entry)
    return entry


def _no_network(*args, **kwargs):
    raise AssertionError("unexpected network access")


class _FakeResponse(io.BytesIO):
    """Minimal stand-in for the object returned by urllib.request.urlopen."""

    def __init__(self, data: bytes, on_read=None, fail_after: int | None = None):
        super().__init__(data)
        self.on_read = on_read
        self.fail_after = fail_after
        self.n_reads = 0

    def read(self, size=-1):
        if self.on_read is not None:
            self.on_read()
        if self.fail_after is not None and self.n_reads >= self.fail_after:
            raise ConnectionResetError("connection reset by peer (simulated)")
        self.n_reads += 1
        # small chunks so that the download takes several reads
        return super().read(min(size, 4096) if size and size > 0 else 4096)


def _serve(monkeypatch, data: bytes, **kwargs):
    calls = []

    def fake_urlopen(url, timeout=None):
        calls.append(url)
        return _FakeResponse(data, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    return calls


# ---------------------------------------------------------------------------
# data directories


def test_get_data_home_precedence(env, monkeypatch):
    assert get_data_home() == env / "xdg" / "hdbayes"
    monkeypatch.setenv("HDBAYES_DATA", str(env / "data"))
    assert get_data_home() == env / "data"
    assert get_data_home(env / "explicit") == env / "explicit"
    monkeypatch.delenv("HDBAYES_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # invalid per XDG spec
    assert get_data_home() == Path.home() / ".cache" / "hdbayes"
    assert not (env / "xdg").exists()  # nothing is created


MICROARRAY = ["alon", "borovecki", "chowdary", "christensen", "golub", "gordon", "gravier", "khan", "nakayama",
              "pomeroy", "shipp", "singh", "sorlie", "su", "subramanian", "west"]


def test_registry_matches_manifest():
    expected = {
        "colon.rda",
        "alon.RData",
        "SRBCT.rda",
        "lymphoma.RData",
        "prostate.RData",
        "golub.RData",
        "alice-gutenberg-11.txt",
    } | {f"microarray/{stem}.RData" for stem in MICROARRAY}
    assert set(_fetch.REGISTRY) == expected
    for entry in _fetch.REGISTRY.values():
        assert len(entry.sha256) == 64 and entry.url.startswith("https://")
    if SHARED is None:
        return
    for name, entry in _fetch.REGISTRY.items():
        manifest = SHARED / Path(name).parent / "MANIFEST.md"  # microarray/ has its own manifest
        if manifest.is_file():
            text = manifest.read_text()
            assert entry.sha256 in text, name
            base = "https://raw.githubusercontent.com/ramhiser/datamicroarray/"
            assert entry.url in text or (name.startswith("microarray/") and entry.url.startswith(base)), name


@needs_shared
def test_shared_files_verify(env):
    for name in _fetch.REGISTRY:
        if (SHARED / name).is_file():
            assert data_path(name, data_home=SHARED, download=False) == SHARED / name


def test_unknown_name(env):
    with pytest.raises(ValueError, match="unknown data file 'nope.rda'"):
        data_path("nope.rda", download=False)


# ---------------------------------------------------------------------------
# checksums


def test_checksum_mismatch_raises(env, fake_entry, monkeypatch):
    folder = env / "data"
    folder.mkdir()
    bad = b"not the right content"
    (folder / FAKE).write_bytes(bad)
    monkeypatch.setenv("HDBAYES_DATA", str(folder))
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(ValueError) as info:
        data_path(FAKE)
    msg = str(info.value)
    assert FAKE in msg and fake_entry.sha256 in msg and _sha(bad) in msg
    # also with an explicit data_home, and never silently downloaded over
    with pytest.raises(ValueError, match="checksum mismatch"):
        data_path(FAKE, data_home=folder)
    assert (folder / FAKE).read_bytes() == bad


def test_found_in_env_dir_then_cache(env, fake_entry, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    folder = env / "data"
    folder.mkdir()
    monkeypatch.setenv("HDBAYES_DATA", str(folder))
    cache = env / "xdg" / "hdbayes"
    cache.mkdir(parents=True)
    (cache / FAKE).write_bytes(PAYLOAD)
    assert data_path(FAKE) == cache / FAKE  # not in HDBAYES_DATA: cache is searched
    (folder / FAKE).write_bytes(PAYLOAD)
    assert data_path(FAKE) == folder / FAKE  # HDBAYES_DATA comes first


def _change_in_place(path: Path, content: bytes) -> None:
    """Overwrite ``path`` with ``content`` (same size), keeping its inode and modification time."""
    st = path.stat()
    assert len(content) == st.st_size
    with open(path, "r+b") as fh:
        fh.write(content)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size


def test_file_changed_in_place_is_hashed_again(env, fake_entry, monkeypatch):
    """Issue 26: a file changed in place with the same size and modification time is refused, not served
    from a digest cached by (path, inode, mtime, size)."""
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    path = env / FAKE
    path.write_bytes(PAYLOAD)
    assert data_path(FAKE, data_home=env) == path
    corrupted = bytearray(PAYLOAD)
    corrupted[0] ^= 0xFF
    _change_in_place(path, bytes(corrupted))
    with pytest.raises(ValueError, match="checksum mismatch"):
        data_path(FAKE, data_home=env)
    with pytest.raises(ValueError, match="checksum mismatch"):
        _fetch.data_bytes(FAKE, data_home=env)


def test_data_bytes_returns_the_verified_bytes(env, fake_entry, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    (env / FAKE).write_bytes(PAYLOAD)
    path, data = _fetch.data_bytes(FAKE, data_home=env, download=False)
    assert path == env / FAKE and data == PAYLOAD


def _colon_file(X, y, path: Path) -> bytes:
    """Bytes of an uncompressed R file holding the list ``colon`` with ``X`` and ``y``, as ``colon.rda`` does."""
    rdata = pytest.importorskip("rdata")
    rdata.write_rda(path, {"colon": {"X": X, "y": y}}, compression=None)
    return path.read_bytes()


def _two_colon_files(tmp_path) -> tuple[bytes, bytes]:
    """Two valid colon files of the same size that differ in their data."""
    y = np.array([0.0, 1.0, 1.0])
    first = _colon_file(np.arange(6.0).reshape(3, 2), y, tmp_path / "first.rda")
    second = _colon_file(np.arange(6.0).reshape(3, 2) + 100.0, y, tmp_path / "second.rda")
    assert len(first) == len(second) and first != second
    return first, second


def test_loader_refuses_file_changed_in_place(env, monkeypatch):
    """Issue 26: after a load, a data file changed in place (same size and mtime) is refused by the next load,
    not answered from a parse cache keyed by (path, mtime, size)."""
    first, second = _two_colon_files(env)
    _register_local(monkeypatch, env, "colon.rda", first)
    assert load_colon(data_home=env, download=False).X[2, 1] == 5.0
    _change_in_place(env / "colon.rda", second)
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_colon(data_home=env, download=False)


def test_loader_parses_the_bytes_it_verified(env, monkeypatch):
    """Issue 26: the file is read once; a change on disk after the checksum is computed does not reach the
    parser (before, the file was hashed, then parsed again by path)."""
    first, second = _two_colon_files(env)
    _register_local(monkeypatch, env, "colon.rda", first)
    real_sha256 = hashlib.sha256
    swapped = []

    class SwapAfterHashing:
        """hashlib.sha256 whose hexdigest() replaces the colon file on disk by ``second`` (once)."""

        def __init__(self, data=b""):
            self._h = real_sha256(data)

        def update(self, data):
            self._h.update(data)

        def hexdigest(self):
            digest = self._h.hexdigest()
            if not swapped:
                swapped.append(True)
                (env / "colon.rda").write_bytes(second)
            return digest

    monkeypatch.setattr(hashlib, "sha256", SwapAfterHashing)
    colon = load_colon(data_home=env, download=False)
    monkeypatch.setattr(hashlib, "sha256", real_sha256)
    assert swapped and (env / "colon.rda").read_bytes() == second
    np.testing.assert_array_equal(colon.X, np.arange(6.0).reshape(3, 2))  # the verified content


def test_parse_cache_is_keyed_by_digest(env, monkeypatch):
    first, _ = _two_colon_files(env)
    _register_local(monkeypatch, env, "colon.rda", first)
    load_colon(data_home=env, download=False)
    other = env / "other"
    other.mkdir()
    (other / "colon.rda").write_bytes(first)  # same bytes elsewhere: served from the cache
    calls = []
    monkeypatch.setattr(real, "_read_r_file", lambda *args: calls.append(args) or {})
    assert load_colon(data_home=other, download=False).X.shape == (3, 2)
    assert calls == [] and len(real._parsed_cache) == 1


def test_missing_without_download(env, fake_entry, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(FileNotFoundError) as info:
        data_path(FAKE, download=False)
    msg = str(info.value)
    assert FAKE in msg and "HDBAYES_DATA" in msg and FAKE_URL in msg
    assert not (env / "xdg").exists()


# ---------------------------------------------------------------------------
# downloads (served by a patched urlopen: no network)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_is_atomic(env, fake_entry, monkeypatch):
    cache = env / "xdg" / "hdbayes"
    target = cache / FAKE
    seen_partial = []

    def check_not_visible():
        # while streaming, the final name must not exist yet
        assert not target.exists()
        seen_partial.append(len(_leftovers(cache)))

    calls = _serve(monkeypatch, PAYLOAD, on_read=check_not_visible)
    path = data_path(FAKE)
    assert path == target
    assert path.read_bytes() == PAYLOAD
    assert calls == [FAKE_URL]
    assert len(seen_partial) > 2 and all(n == 1 for n in seen_partial)  # one temp file
    assert _leftovers(cache) == [FAKE]  # temp file gone
    # second call: found locally, no download
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    assert data_path(FAKE) == target


def test_download_goes_to_explicit_data_home(env, fake_entry, monkeypatch):
    _serve(monkeypatch, PAYLOAD)
    folder = env / "mine" / "nested"
    assert data_path(FAKE, data_home=folder) == folder / FAKE
    assert _leftovers(folder) == [FAKE]
    assert not (env / "xdg").exists()


def test_download_not_into_hdbayes_data(env, fake_entry, monkeypatch):
    folder = env / "data"
    folder.mkdir()
    monkeypatch.setenv("HDBAYES_DATA", str(folder))
    _serve(monkeypatch, PAYLOAD)
    assert data_path(FAKE) == env / "xdg" / "hdbayes" / FAKE
    assert _leftovers(folder) == []


def test_download_checksum_failure_leaves_no_file(env, fake_entry, monkeypatch):
    _serve(monkeypatch, PAYLOAD + b"tampered")
    with pytest.raises(DataDownloadError) as info:
        data_path(FAKE)
    err = info.value
    assert isinstance(err, OSError) and isinstance(err, RuntimeError)
    msg = str(err)
    assert "could not download fake.bin" in msg and FAKE_URL in msg
    assert fake_entry.sha256 in msg and _sha(PAYLOAD + b"tampered") in msg
    assert "HDBAYES_DATA" in msg
    assert _leftovers(env / "xdg" / "hdbayes") == []


def test_download_interrupted_leaves_no_file(env, fake_entry, monkeypatch):
    _serve(monkeypatch, PAYLOAD, fail_after=3)
    with pytest.raises(DataDownloadError, match="could not download fake.bin from"):
        data_path(FAKE)
    assert _leftovers(env / "xdg" / "hdbayes") == []


def test_folder_at_target_name(env, fake_entry, monkeypatch):
    """Issue 26: a folder standing at the file's target name is a DataDownloadError, not a bare
    IsADirectoryError, and nothing is downloaded or left behind."""
    cache = env / "xdg" / "hdbayes"
    (cache / FAKE).mkdir(parents=True)
    (cache / FAKE / "keep.txt").write_text("mine")
    _serve(monkeypatch, PAYLOAD)
    with pytest.raises(DataDownloadError, match="not a regular file") as info:
        data_path(FAKE)
    assert str(cache / FAKE) in str(info.value)
    assert _leftovers(cache) == [FAKE] and (cache / FAKE / "keep.txt").read_text() == "mine"
    with pytest.raises(DataDownloadError, match="not a regular file"):
        _fetch.data_bytes(FAKE)


def test_folder_appearing_during_download(env, fake_entry, monkeypatch):
    cache = env / "xdg" / "hdbayes"

    def make_folder():
        (cache / FAKE).mkdir(exist_ok=True)

    _serve(monkeypatch, PAYLOAD, on_read=make_folder)
    with pytest.raises(DataDownloadError, match="not a regular file"):
        data_path(FAKE)
    assert _leftovers(cache) == [FAKE] and (cache / FAKE).is_dir()


def test_download_into_sub_folder(env, fake_entry, monkeypatch):
    monkeypatch.setitem(_fetch.REGISTRY, "sub/" + FAKE, fake_entry)
    _serve(monkeypatch, PAYLOAD)
    path, data = _fetch.data_bytes("sub/" + FAKE, data_home=env / "home")
    assert path == env / "home" / "sub" / FAKE and data == PAYLOAD
    assert _leftovers(env / "home" / "sub") == [FAKE]


def test_download_network_error(env, fake_entry, monkeypatch):
    def refuse(url, timeout=None):
        raise urllib.error.URLError("name resolution failed (simulated)")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(OSError, match="set HDBAYES_DATA to a folder holding it"):
        data_path(FAKE)
    assert _leftovers(env / "xdg" / "hdbayes") == []


@needs_shared
def test_download_then_load_colon(env, monkeypatch):
    """Full path: colon.rda 'downloaded' (bytes of the shared copy) into the cache."""
    calls = _serve(monkeypatch, (SHARED / "colon.rda").read_bytes())
    colon = load_colon()
    assert calls == [_fetch.REGISTRY["colon.rda"].url]
    assert colon.X.shape == (62, 2000)
    assert Path(colon.filename) == env / "xdg" / "hdbayes" / "colon.rda"


# ---------------------------------------------------------------------------
# real data loaders


@needs_shared
def test_load_colon(env, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    monkeypatch.setenv("HDBAYES_DATA", str(SHARED))
    colon = load_colon(download=False)
    X, y = colon.X, colon.y
    assert X.shape == (62, 2000) and X.dtype == np.float64
    assert np.isfinite(X).all()
    assert y.shape == (62,) and set(np.unique(y)) == {0, 1}
    assert np.bincount(y).tolist() == [22, 40]
    assert list(colon.target_names) == ["normal", "tumour"]
    assert colon.feature_names.shape == (2000,) and colon.feature_names[0] == "V1"
    assert colon.X_binary.shape == (62, 2000) and colon.X_binary.dtype == np.int8
    assert "median" in colon.DESCR

    binary = load_colon(binarize=True, data_home=SHARED, download=False)
    B = binary.X
    assert B.dtype == np.int8 and B.shape == (62, 2000)
    assert set(np.unique(B)) == {0, 1}
    np.testing.assert_array_equal(B, (X > np.median(X, axis=0)).astype(np.int8))
    frac = B.mean(axis=0)
    assert np.all(np.abs(frac - 0.5) <= 0.05)  # strict > median: 31 of 62 without ties
    np.testing.assert_array_equal(binary.y, y)


@needs_shared
def test_load_colon_returns_copies(env):
    a = load_colon(data_home=SHARED, download=False)
    a.X[:] = 0.0
    a.y[:] = 7
    b = load_colon(data_home=SHARED, download=False)
    assert np.abs(b.X).sum() > 0 and np.bincount(b.y).tolist() == [22, 40]
    assert b.X.flags.writeable


@needs_shared
def test_load_srbct(env):
    srbct = load_srbct(data_home=SHARED, download=False)
    assert srbct.X.shape == (83, 2308) and srbct.X.dtype == np.float64
    assert np.bincount(srbct.y).tolist() == [29, 11, 18, 25]
    assert list(srbct.target_names) == ["EWS", "BL/NHL", "NB", "RMS"]
    assert srbct.feature_names.shape == (2308,)
    assert len(set(srbct.feature_names)) == 2308
    assert srbct.feature_names[0] == "IMAGE:21652"
    assert srbct.gene_descriptions.shape == (2308,)
    assert srbct.khan_test_mask.sum() == 20
    # Khan's 20 SRBCT test samples: EWS 6, BL 3, NB 6, RMS 5
    assert np.bincount(srbct.y[srbct.khan_test_mask]).tolist() == [6, 3, 6, 5]


@needs_shared
def test_load_lymphoma(env):
    lymph = load_lymphoma(data_home=SHARED, download=False)
    assert lymph.X.shape == (62, 4026) and lymph.X.dtype == np.float64
    assert np.bincount(lymph.y).tolist() == [42, 9, 11]
    assert list(lymph.target_names) == ["DLBCL", "FL", "CLL"]
    assert lymph.feature_names is None


def test_loader_missing_file_is_clear(env, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(FileNotFoundError, match="colon.rda"):
        load_colon(download=False)


def _register_local(monkeypatch, folder: Path, name: str, content: bytes):
    (folder / name).write_bytes(content)
    entry = _fetch.RemoteFile(sha256=_sha(content), url="https://example.invalid/x")
    monkeypatch.setitem(_fetch.REGISTRY, name, entry)


def test_malformed_not_r_file(env, monkeypatch):
    _register_local(monkeypatch, env, "colon.rda", b"this is not an R file at all")
    with pytest.raises(ValueError, match="malformed data file colon.rda"):
        load_colon(data_home=env, download=False)


@pytest.mark.parametrize(
    "name, objects, loader, message",
    [
        (
            "colon.rda",
            {"colon": {"X": np.ones((3, 2)), "z": np.array([0.0, 1.0, 1.0])}},
            load_colon,
            "object 'y' not found",
        ),
        (
            "colon.rda",
            {"colon": {"X": np.ones((3, 2)), "y": np.array([0.0, 1.0, 2.0])}},
            load_colon,
            "values outside",
        ),
        (
            "colon.rda",
            {"colon": {"X": np.ones(3), "y": np.array([0.0, 1.0, 1.0])}},
            load_colon,
            "should be a non-empty matrix",
        ),
        (
            "lymphoma.RData",
            {"lymph.X": np.ones((3, 2)), "lymph.y": np.array([1.0, 2.0])},
            load_lymphoma,
            "length 3",
        ),
        (
            "SRBCT.rda",
            {"srbct": {"X": np.ones((3, 2)), "Y": np.array([1.0, 2.0, 4.0])}},
            load_srbct,
            "object 'SRBCT' not found",
        ),
    ],
)
def test_malformed_structure(env, monkeypatch, name, objects, loader, message):
    rdata = pytest.importorskip("rdata")
    tmp = env / "build.rda"
    rdata.write_rda(tmp, objects)
    _register_local(monkeypatch, env, name, tmp.read_bytes())
    with pytest.raises(ValueError, match=message):
        loader(data_home=env, download=False)


def test_unique_names():
    names = real._unique_names(["a", "b", "a", "a.1", "a"])
    assert len(set(names)) == 5
    assert list(names[:2]) == ["a", "b"]


# ---------------------------------------------------------------------------
# simulator (thesis §2.3.5)


def test_simulate_shapes_and_balance():
    sim = simulate_naive_bayes(n_features=300, n_samples=40, n_test=60, random_state=0)
    assert sim.X.shape == (40, 300) and sim.X_test.shape == (60, 300)
    assert sim.X.dtype == np.int8 and sim.X_test.dtype == np.int8
    assert set(np.unique(sim.X)) <= {0, 1}
    assert sim.theta.shape == (300,) and sim.phi.shape == (2, 300)
    assert np.all((sim.theta > 0) & (sim.theta < 1))
    assert np.all((sim.phi >= 0) & (sim.phi <= 1))
    assert np.bincount(sim.y).tolist() == [20, 20]
    assert np.bincount(sim.y_test).tolist() == [30, 30]
    # labels come in shuffled order, not sorted
    assert not np.all(np.diff(sim.y) >= 0)


def test_simulate_defaults_match_thesis():
    sim = simulate_naive_bayes(random_state=1)
    assert sim.X.shape == (200, 10000) and sim.X_test.shape == (2000, 10000)
    assert np.bincount(sim.y).tolist() == [100, 100]
    assert np.bincount(sim.y_test).tolist() == [1000, 1000]
    assert sim.alpha == 300.0


def test_simulate_odd_balanced_and_unbalanced():
    sim = simulate_naive_bayes(n_features=5, n_samples=7, n_test=9, random_state=3)
    assert sorted(np.bincount(sim.y, minlength=2).tolist()) == [3, 4]
    assert sorted(np.bincount(sim.y_test, minlength=2).tolist()) == [4, 5]
    free = simulate_naive_bayes(n_features=5, n_samples=4000, n_test=1, balanced=False, random_state=3)
    assert 0.45 < free.y.mean() < 0.55


def test_simulate_reproducible():
    kw = dict(alpha=50.0, n_features=1000, n_samples=30, n_test=20)
    a = simulate_naive_bayes(**kw, random_state=42)
    b = simulate_naive_bayes(**kw, random_state=42)
    c = simulate_naive_bayes(**kw, random_state=np.random.default_rng(42))
    for key in ("X", "y", "X_test", "y_test", "theta", "phi"):
        np.testing.assert_array_equal(a[key], b[key])
        np.testing.assert_array_equal(a[key], c[key])
    d = simulate_naive_bayes(**kw, random_state=43)
    assert not np.array_equal(a.X, d.X)
    # a Generator is advanced, so two calls with the same generator differ
    rng = np.random.default_rng(0)
    e1 = simulate_naive_bayes(**kw, random_state=rng)
    e2 = simulate_naive_bayes(**kw, random_state=rng)
    assert not np.array_equal(e1.theta, e2.theta)


def test_simulate_sparse_equals_dense():
    kw = dict(n_features=2500, n_samples=50, n_test=31, random_state=7)
    dense = simulate_naive_bayes(**kw)
    sparse = simulate_naive_bayes(**kw, sparse=True)
    for key in ("X", "X_test"):
        S = sparse[key]
        assert sp.issparse(S) and S.format == "csc" and S.dtype == np.int8
        assert S.shape == dense[key].shape
        S.check_format(full_check=True)
        np.testing.assert_array_equal(S.toarray(), dense[key])
    for key in ("y", "y_test", "theta", "phi"):
        np.testing.assert_array_equal(sparse[key], dense[key])


def test_simulate_sparse_spans_several_blocks(monkeypatch):
    from hdbayes.datasets import simulate as simulate_module

    monkeypatch.setattr(simulate_module, "BLOCK_ELEMENTS", 1000)  # blocks of 10 columns
    kw = dict(n_features=95, n_samples=60, n_test=40, random_state=5)
    dense = simulate_naive_bayes(**kw)
    sparse = simulate_naive_bayes(**kw, sparse=True)
    np.testing.assert_array_equal(sparse.X.toarray(), dense.X)
    np.testing.assert_array_equal(sparse.X_test.toarray(), dense.X_test)


def test_simulate_phi_close_for_large_alpha():
    """With alpha = 300, phi_0 and phi_1 differ by about sqrt(2 theta(1-theta)/(alpha+1))."""
    alpha = 300.0
    sim = simulate_naive_bayes(alpha=alpha, n_features=20000, n_samples=2, n_test=2, random_state=11)
    theta, phi = sim.theta, sim.phi
    np.testing.assert_allclose(theta.mean(), 0.5, atol=0.01)
    var = theta * (1 - theta) / (alpha + 1)  # Var(phi_cj | theta_j), thesis §2.3.1
    # E phi = theta, Var phi = theta(1-theta)/(alpha+1)
    for c in (0, 1):
        ratio = np.mean((phi[c] - theta) ** 2) / np.mean(var)
        assert 0.95 < ratio < 1.05
    diff = np.abs(phi[0] - phi[1])
    # phi0 - phi1 ~ approx N(0, 2 var): E|D| = sqrt(2/pi) * sqrt(2 var)
    expected = np.mean(np.sqrt(4 * var / np.pi))
    assert diff.mean() < 0.05
    np.testing.assert_allclose(diff.mean(), expected, rtol=0.05)
    # small alpha makes classes differ much more
    loose = simulate_naive_bayes(alpha=2.0, n_features=20000, n_samples=2, n_test=2, random_state=11)
    assert np.abs(loose.phi[0] - loose.phi[1]).mean() > 5 * diff.mean()


def test_simulate_x_follows_phi():
    sim = simulate_naive_bayes(alpha=1.0, n_features=50, n_samples=4000, n_test=4000, random_state=2)
    for X, y in ((sim.X, sim.y), (sim.X_test, sim.y_test)):
        for c in (0, 1):
            freq = X[y == c].mean(axis=0)
            se = np.sqrt(sim.phi[c] * (1 - sim.phi[c]) / (y == c).sum()) + 1e-3
            assert np.all(np.abs(freq - sim.phi[c]) < 5 * se)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(alpha=0.0), ValueError),
        (dict(alpha=-1.0), ValueError),
        (dict(alpha=float("nan")), ValueError),
        (dict(alpha="300"), TypeError),
        (dict(n_features=0), ValueError),
        (dict(n_samples=0), ValueError),
        (dict(n_test=0), ValueError),
        (dict(n_samples=2.5), TypeError),
        (dict(random_state="seed"), TypeError),
    ],
)
def test_simulate_validates(kwargs, error):
    base = dict(n_features=3, n_samples=2, n_test=2, random_state=0)
    with pytest.raises(error):
        simulate_naive_bayes(**{**base, **kwargs})


# ---------------------------------------------------------------------------
# one Bunch layout and one size name for every simulator and loader


def _simulators():
    from hdbayes.datasets import (
        simulate_block_sparse,
        simulate_bursty_documents,
        simulate_cauchy_classification,
        simulate_gaussian,
        simulate_hmm,
        simulate_mixture,
    )

    return [
        (simulate_naive_bayes, dict(n_features=30)),
        (simulate_gaussian, dict(n_classes=3, n_features=30)),
        (simulate_mixture, dict(n_features=30)),
        (simulate_hmm, dict(length=8)),
        (simulate_cauchy_classification, dict(n_features=4, order=2)),
        (simulate_bursty_documents, dict(n_words=50, mean_length=5)),
        (simulate_block_sparse, dict(n_features=32, group_size=4, n_active_groups=2)),
    ]


@pytest.mark.parametrize("simulate, kwargs", _simulators(), ids=lambda v: getattr(v, "__name__", ""))
def test_every_simulator_has_one_layout(simulate, kwargs):
    data = simulate(n_samples=12, n_test=5, random_state=0, **kwargs)
    assert list(data)[:6] == ["X", "y", "X_test", "y_test", "feature_names", "DESCR"]
    assert data.X.shape[0] == data.y.shape[0] == 12 and data.X_test.shape[0] == data.y_test.shape[0] == 5
    assert data.feature_names.shape == (data.X.shape[1],) and len(set(data.feature_names)) == data.X.shape[1]
    assert isinstance(data.DESCR, str) and "12 training" in data.DESCR
    again = simulate(n_samples=12, n_test=5, random_state=0, **kwargs)
    for key in ("X", "y", "X_test", "y_test"):
        a, b = data[key], again[key]
        np.testing.assert_array_equal(a.toarray() if sp.issparse(a) else a, b.toarray() if sp.issparse(b) else b)
    with pytest.raises(ValueError, match="n_samples must be at least 1"):
        simulate(n_samples=0, n_test=5, random_state=0, **kwargs)
    with pytest.raises(TypeError, match="n_samples must be an integer"):
        simulate(n_samples=2.5, n_test=5, random_state=0, **kwargs)


def test_test_cases_do_not_change_the_training_cases():
    from hdbayes.datasets import simulate_bursty_documents

    alone = simulate_bursty_documents(30, 40, random_state=1)
    with_test = simulate_bursty_documents(30, 40, n_test=10, random_state=1)
    assert alone.X_test.shape == (0, 40) and with_test.X_test.shape == (10, 40)
    assert (alone.X != with_test.X).nnz == 0 and np.array_equal(alone.y, with_test.y)


@needs_shared
@pytest.mark.parametrize("loader", [load_colon, load_srbct, load_lymphoma])
def test_every_loader_has_one_layout(env, loader):
    data = loader(data_home=SHARED, download=False)
    assert list(data)[:4] == ["X", "y", "feature_names", "DESCR"]
    assert data.X.shape[0] == data.y.shape[0]
    assert data.feature_names is None or data.feature_names.shape == (data.X.shape[1],)
    assert list(data)[-1] == "filename" and Path(data.filename).parent == SHARED
    assert "X_train" not in data and "data" not in data and "target" not in data
