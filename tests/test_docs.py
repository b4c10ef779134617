"""The documentation site builds with ``-W`` (every warning an error), documents every public object and runs
the gallery; the docs' own Python files pass the lint rules."""

import shutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_docs_and_examples_pass_ruff():
    ruff = shutil.which("ruff") or (Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    result = subprocess.run([str(ruff), "check", "docs", "examples"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_api_pages_list_every_public_name(tmp_path):
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(DOCS))
    try:
        conf = import_module("conf")
    finally:
        sys.path.remove(str(DOCS))
    documented = set(conf.write_api_pages(tmp_path))
    for package, _ in conf.API_PACKAGES:
        module = import_module(package)
        for name in module.__all__:
            if name == "__version__":
                continue
            # a name exported at the top level is documented there once
            home = "hdbayes" if name in import_module("hdbayes").__all__ else package
            assert f"{home}.{name}" in documented, f"{package}.{name} has no API page"
            assert name in (tmp_path / f"{home}.rst").read_text()
    packages = {p.name for p in (ROOT / "src" / "hdbayes").iterdir() if (p / "__init__.py").exists()}
    assert {f"hdbayes.{p}" for p in packages} <= {package for package, _ in conf.API_PACKAGES}


def test_site_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    for extension in ("pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "myst_parser"):
        pytest.importorskip(extension)
    out = tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "-b", "html", "-q", "-d", str(tmp_path / "doctrees"),
               str(DOCS), str(out)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]

    for page in ("index", "getting_started", "user_guide", "naive_bayes", "benchmarks", "contributing",
                 "api/index", "auto_examples/index"):
        assert (out / f"{page}.html").is_file(), page
    # BENCHMARKS.md is included, not copied
    assert "Speed and memory are measured by scripts" in (out / "benchmarks.html").read_text()
    # an API page for every documented object, with its docstring rendered
    page = (out / "api" / "generated" / "hdbayes.BiasCorrectedNaiveBayes.html").read_text()
    assert "selection" in page and "predict_proba" in page
    generated = {p.stem for p in (out / "api" / "generated").glob("*.html")}
    sys.path.insert(0, str(DOCS))
    try:
        conf = import_module("conf")
    finally:
        sys.path.remove(str(DOCS))
    missing = set(conf.API_OBJECTS) - generated
    assert not missing, sorted(missing)
    # conf.py's escapes of |x| and name_ never show (doctest output and literals are left alone)
    for path in (out / "api" / "generated").glob("*.html"):
        text = path.read_text()
        assert "\\|" not in text and "\\_" not in text, path.name
    # every example ran and ended in a figure
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 3
    for name in examples:
        assert list((out / "_images").glob(f"sphx_glr_{name}_*.png")), f"{name} made no figure"


def test_getting_started_prints_what_the_page_shows():
    """The page's first calibrated prediction runs and prints the output shown under it."""
    text = (DOCS / "getting_started.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    shown = text.split("```text\n", 1)[1].split("```", 1)[0]
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown
    assert len(code.strip().splitlines()) <= 10
