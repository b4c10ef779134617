"""What an experiment returns, and how it is written to disk.

An experiment returns a :class:`Report`: a markdown summary, named result tables
(lists of row dicts, written as CSV) and named matplotlib figures (written as PNG).
:meth:`Report.write` writes everything into a fresh temporary folder beside the
target and renames it into place, so an interrupted or failed run never leaves a
half-written output folder.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Report", "Size", "checks_markdown", "markdown_table"]


def _format_cell(value):
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


def markdown_table(rows, columns=None):
    """Render a list of dicts as a markdown table (floats to 4 significant digits)."""
    if not rows:
        return "(no rows)\n"
    columns = columns or list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    lines += ["| " + " | ".join(_format_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def checks_markdown(checks):
    """The acceptance checks as a markdown task list: ``- [x] name`` or ``- [ ] name``."""
    return [f"- [{'x' if ok else ' '}] {name}" for name, ok in checks.items()]


@dataclass(frozen=True)
class Size:
    """The size of a simulation experiment: its default (small) or the paper's (full)."""

    n_features: int
    n_test: int
    ks: tuple
    n_train: int = 200
    n_iter: int | None = None
    burn_in: int | None = None
    thin: int | None = None


@dataclass
class Report:
    """Results of one experiment run.

    Attributes
    ----------
    name : str
        Experiment name (``hdbayes reproduce NAME``).
    summary : str
        Markdown text: settings, result tables and the acceptance checks.
    tables : dict of str to list of dict
        Result tables by file stem (written as ``<stem>.csv``).
    figures : dict of str to matplotlib Figure
        Figures by file stem (written as ``<stem>.png``).
    checks : dict of str to bool
        Named acceptance checks and whether they held.
    timings : dict of str to list of dict
        Wall-clock measurements by file stem (written as ``<stem>.csv``, e.g.
        ``timing.csv``), kept apart from ``summary.md`` and the result tables so that two
        runs with the same seed write byte-identical results.
    """

    name: str
    summary: str = ""
    tables: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def write(self, out_dir):
        """Write ``summary.md``, the CSV tables and the PNG figures into ``out_dir``.

        The folder is replaced as a whole: files are written into a temporary
        sibling folder first and moved into place at the end.

        Returns
        -------
        pathlib.Path
            The output folder.
        """
        out_dir = Path(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
        try:
            (staging / "summary.md").write_text(self.summary, encoding="utf-8")
            for stem, rows in {**self.tables, **self.timings}.items():
                with open(staging / f"{stem}.csv", "w", newline="", encoding="utf-8") as handle:
                    if rows:
                        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                        writer.writeheader()
                        writer.writerows(rows)
            for stem, figure in self.figures.items():
                figure.savefig(staging / f"{stem}.png", dpi=110)
            if out_dir.exists():
                shutil.rmtree(out_dir)
            os.replace(staging, out_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return out_dir
