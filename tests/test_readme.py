"""The README's Python examples run as written (the README stays true to the code)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, monkeypatch):
    if "load_colon" in BLOCKS[index]:
        from hdbayes.datasets import load_colon

        try:
            load_colon(download=False)
        except (OSError, ValueError) as error:  # no data directory here (CI has ../shared/data)
            pytest.skip(f"colon data unavailable: {error}")
    if "load_microarray" in BLOCKS[index]:
        from hdbayes.datasets import load_microarray

        try:
            load_microarray("golub", download=False)
        except (OSError, ValueError) as error:  # no data directory here (CI has ../shared/data)
            pytest.skip(f"microarray data unavailable: {error}")
    monkeypatch.chdir(tmp_path)  # nothing the examples write lands in the checkout
    namespace = {}
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), namespace)  # noqa: S102
    assert namespace  # the block defined its names
    import matplotlib.pyplot as plt

    plt.close("all")
