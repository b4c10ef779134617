"""What an experiment returns, and how it is written to disk.

An experiment returns a :class:`Report`: a markdown summary, named result tables
(lists of row dicts, written as CSV) and named matplotlib figures (written as PNG).
:meth:`Report.write` writes through :func:`hdbayes._io.write_folder`: the complete set
of files is built beside the folder and swapped in at once, so the folder holds one run's
complete set, the old or the new, even if a run is killed or fails; a folder written by
hdbayes before (marked by its manifest file) is replaced as a whole; a non-empty folder
that hdbayes did not write, or one holding any entry hdbayes did not write (a user's file,
a subfolder, a symbolic link), is refused and left untouched.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from hdbayes._io import write_folder

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
    n_samples: int = 200
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
        """Write ``summary.md``, the CSV tables, the timing CSVs and the PNG figures into ``out_dir``.

        The complete set is built beside ``out_dir`` and swapped in at once: a folder that
        hdbayes wrote before is replaced as a whole (the files of its previous run that this
        run does not write are gone), and a failed or killed run leaves it as it was. A
        non-empty folder that hdbayes did not write, or one holding any entry it did not
        write (a user's file, a subfolder, a symbolic link), raises
        :class:`~hdbayes.exceptions.InputValueError` and is left untouched (see
        :func:`hdbayes._io.write_folder`).

        Returns
        -------
        pathlib.Path
            The output folder.
        """
        files = {"summary.md": lambda path: Path(path).write_text(self.summary, encoding="utf-8")}
        for stem, rows in {**self.tables, **self.timings}.items():
            files[f"{stem}.csv"] = lambda path, rows=rows: _write_rows(path, rows)
        for stem, figure in self.figures.items():
            files[f"{stem}.png"] = lambda path, figure=figure: figure.savefig(path, format="png", dpi=110)
        return write_folder(out_dir, files)


def _write_rows(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        if rows:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
