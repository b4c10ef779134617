"""The Reproductions pages of the documentation site (docs/reproductions/, issue 16).

Every experiment of ``hdbayes reproduce`` has a page; every CSV a page includes exists and parses; the summary
table of the index counts exactly the verdicts listed on the pages; each page's comparison table is the join of the
paper's hand-written values with the measured table; and the script's extraction, run on a quick default-size
``reproduce`` run, gives the table the pages expect.
"""

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from hdbayes.experiments import EXPERIMENTS

PAGES = Path(__file__).resolve().parent.parent / "docs" / "reproductions"
VERDICTS = ("reproduced", "partly", "not reproduced")
_INCLUDE = re.compile(r"^:file: (\S+)$", re.MULTILINE)


def _load_script():
    spec = importlib.util.spec_from_file_location("make_results", PAGES / "make_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _index_table():
    """The summary table of index.md: {experiment page stem: (claims, reproduced, partly, not reproduced)}."""
    text = (PAGES / "index.md").read_text()
    table = {}
    for line in text.splitlines():
        match = re.match(r"^\| \[[^]]+\]\(([\w-]+)\.md\) \|.*\| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", line)
        if match:
            table[match.group(1)] = tuple(int(match.group(i)) for i in range(2, 6))
    return table


def test_every_experiment_has_a_page_with_claims():
    for name in EXPERIMENTS:
        page = PAGES / f"{name}.md"
        assert page.exists(), f"no page for {name}"
        assert f"claims/{name}.csv" in page.read_text(), f"{name}.md does not include its claims"
        assert f"tables/{name}.csv" in page.read_text(), f"{name}.md does not include its measured table"


def test_included_csv_files_exist_and_parse():
    for page in PAGES.glob("*.md"):
        for included in _INCLUDE.findall(page.read_text()):
            path = page.parent / included
            assert path.exists(), f"{page.name} includes {included}, which does not exist"
            rows = _rows(path)
            assert rows, f"{included} is empty"
            width = len(rows[0])
            assert all(len(row) == width and None not in row.values() for row in rows), f"{included}: ragged rows"


def test_claims_have_a_known_verdict_and_a_source():
    for name in EXPERIMENTS:
        rows = _rows(PAGES / "claims" / f"{name}.csv")
        assert list(rows[0]) == ["claim", "paper", "verdict", "measured"]
        for row in rows:
            assert row["verdict"] in VERDICTS, f"{name}: verdict {row['verdict']!r}"
            assert row["paper"].strip() and row["measured"].strip() and row["claim"].strip()


def test_index_counts_equal_the_pages_verdicts():
    table = _index_table()
    assert set(table) == set(EXPERIMENTS), "the index's summary table must list every experiment once"
    totals = [0, 0, 0, 0]
    for name, (claims, reproduced, partly, not_reproduced) in table.items():
        verdicts = [row["verdict"] for row in _rows(PAGES / "claims" / f"{name}.csv")]
        counted = (len(verdicts), verdicts.count("reproduced"), verdicts.count("partly"),
                   verdicts.count("not reproduced"))  # fmt: skip
        listed = (claims, reproduced, partly, not_reproduced)
        assert listed == counted, f"{name}: the index says {listed}, the page's claims {counted}"
        totals = [t + c for t, c in zip(totals, counted)]
    match = re.search(r"^\| \*\*all\*\* \|.*\| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$",
                      (PAGES / "index.md").read_text(), re.MULTILINE)  # fmt: skip
    assert match, "the index's summary table has no total row"
    assert [int(g) for g in match.groups()] == totals
    # the sentence under the table counts the papers' claims: every experiment but ours (issue 15)
    papers = [t - c for t, c in zip(totals, table["categorical-simulation"])]
    pattern = r"Of the (\d+) claims taken from the papers .*?, (\d+) are reproduced, (\d+) partly and (\d+) not\."
    sentence = re.search(pattern, (PAGES / "index.md").read_text(), re.DOTALL)
    assert sentence and [int(g) for g in sentence.groups()] == papers


def test_comparison_tables_are_the_join_of_paper_and_measured():
    script = _load_script()
    for paper_file in (PAGES / "paper").glob("paper_*.csv"):
        name = paper_file.stem.removeprefix("paper_")
        assert name in EXPERIMENTS, paper_file.name
        paper = _rows(paper_file)
        assert all(row["source"].strip() for row in paper), f"{paper_file.name}: a row without its source"
        expected = script.compare(paper, _rows(PAGES / "tables" / f"{name}.csv"))
        assert _rows(PAGES / "tables" / f"compare_{name}.csv") == expected, f"compare_{name}.csv is stale"


def test_runs_table_records_every_experiment():
    runs = {row["experiment"]: row for row in _rows(PAGES / "tables" / "runs.csv")}
    assert set(runs) == set(EXPERIMENTS)
    for name, row in runs.items():
        assert row["command"].startswith(f"hdbayes reproduce {name} --full"), row["command"]
        assert float(row["wall_time_s"]) > 0 and row["hdbayes_version"] and row["started_utc"]


def test_compare_refuses_a_paper_key_without_a_measurement():
    script = _load_script()
    paper = [{"key": "k=1/gamma", "quantity": "γ", "setting": "k = 1", "paper": "0.36", "source": "§2.3.5"}]
    with pytest.raises(KeyError, match="k=1/gamma"):
        script.compare(paper, [{"key": "k=10/gamma", "quantity": "γ", "setting": "k = 10", "value": "0.25"}])


def test_extraction_of_a_quick_run(tmp_path):
    """The script's extraction on a default-size discrete-models run (about 1 s, in process)."""
    script = _load_script()
    out = tmp_path / "run"
    EXPERIMENTS["discrete-models"].load().run(full=False, random_state=0, progress=False).write(out)
    rows = script.extract("discrete-models", out)
    assert rows and all(list(row) == script.MEASURED_COLUMNS for row in rows)
    values = {row["key"]: row["value"] for row in rows}
    assert values["beta_binomial/posterior mean"] == "0.2083"  # 5/24, the chapter's worked example
    dcm, multinomial = "corpus/DCM classifier/log_loss", "corpus/multinomial NB, posterior mean/log_loss"
    assert float(values[dcm]) < float(values[multinomial])
    assert float(values["predictive/tail6/beta_binomial"]) > float(values["predictive/tail6/plugin_map"])
    checks = script.read_checks(out)
    assert len(checks) >= 10 and all(row["held"] in ("yes", "no") for row in checks)
    # the paper's discrete-models keys that the page compares are all measured at the default size too
    script.compare(_rows(PAGES / "paper" / "paper_discrete-models.csv"), rows)


@pytest.mark.slow
def test_run_and_write_results(tmp_path):
    """The script's own run (a subprocess of ``hdbayes reproduce``) and the tables it writes."""
    script = _load_script()
    out = tmp_path / "run"
    meta = script.run_experiment("interaction-counts", out, size="small")
    assert meta["exit_status"] == 0 and meta["command"] == "hdbayes reproduce interaction-counts --seed 0 --n-jobs 1"
    rows = script.write_results("interaction-counts", out, results=tmp_path / "tables", paper=tmp_path)
    assert {"sequence/O=1/original", "sequence/O=1/compressed", "sequence/O=1/ratio"} <= {row["key"] for row in rows}
    assert _rows(tmp_path / "tables" / "interaction-counts_checks.csv")
    assert [row["experiment"] for row in _rows(tmp_path / "tables" / "runs.csv")] == ["interaction-counts"]


def test_the_script_never_deletes_a_run_folder_it_did_not_make(tmp_path):
    """An existing folder in a user-given --workdir is refused (exit 2) and left as it was, never replaced."""
    mine = tmp_path / "colon" / "mine.txt"
    mine.parent.mkdir()
    mine.write_text("keep")
    with pytest.raises(SystemExit) as exit_info:
        _load_script().main(["--workdir", str(tmp_path), "colon"])
    assert exit_info.value.code == 2
    assert mine.read_text() == "keep" and sorted(p.name for p in tmp_path.rglob("*")) == ["colon", "mine.txt"]
