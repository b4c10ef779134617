"""The "In practice" parts of the user guide (issue 16): docs/_guide/<page>.md, one per capability page, each with
the four subsections; included by its page; its Parameters table true to the estimators' signatures (every
parameter listed, no name that the signature lacks); every ``name=value`` in its code spans an option of the
callable it is passed to; and its links to sections of the pages pointing at headings that exist."""

import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE = DOCS / "_guide"
SUBSECTIONS = ["When to use it", "Parameters", "Diagnostics", "Pitfalls"]

#: snippet -> the callables whose parameters its Parameters subsection documents, every one of them
DOCUMENTED = {
    "naive_bayes": ["hdbayes.BiasCorrectedNaiveBayes"],
    "categorical_correction": ["hdbayes.BiasCorrectedCategoricalNB"],
    "gaussian": [
        "hdbayes.BiasCorrectedGaussianClassifier", "hdbayes.ShrunkCovarianceWhitener",
        "hdbayes.selection_bias.SharedSpread", "hdbayes.selection_bias.PerFeatureSpread",
        "hdbayes.selection_bias.PerClassVariance",
    ],  # fmt: skip
    "mixture": ["hdbayes.BiasCorrectedMixture", "hdbayes.selection_bias.MixtureSampler"],
    "interactions": [
        "hdbayes.CompressedInteractionClassifier", "hdbayes.CompressedSequenceModel",
        "hdbayes.interactions.CauchyPrior", "hdbayes.interactions.GaussianPrior",
    ],  # fmt: skip
    "spike_slab": ["hdbayes.GroupSpikeSlabRegression", "hdbayes.GroupSpikeSlabGibbs"],
    "discrete": [
        "hdbayes.BayesianBernoulliNB", "hdbayes.BayesianCategoricalNB", "hdbayes.BayesianMultinomialNB",
        "hdbayes.DCMClassifier", "hdbayes.MutualInformationSelector", "hdbayes.discrete.BayesianConceptLearner",
        "hdbayes.discrete.BetaBinomial", "hdbayes.discrete.DirichletMultinomial",
    ],  # fmt: skip
    "distributed": ["hdbayes.datasets.simulate_genotypes", "hdbayes.datasets.read_plink"],
}

#: other callables whose options a snippet names (``name=value``) without documenting them
REFERENCED = {
    "categorical_correction": ["hdbayes.FeatureBinarizer"],
    "distributed": ["hdbayes.BiasCorrectedNaiveBayes", "hdbayes.BiasCorrectedGaussianClassifier"],
}

#: modules whose public functions a snippet may call with keywords (diagnostics)
FUNCTION_MODULES = ["hdbayes.metrics", "hdbayes.plotting"]

CODE_SPAN = re.compile(r"`([^`]+)`")
CALL = re.compile(r"([A-Za-z_][\w.]*)\(([^()]*)\)")
KEYWORD = re.compile(r"(?<![\w.=!<>])([A-Za-z_]\w*)=(?!=)")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
LINK = re.compile(r"\]\(([\w./-]*?)(?:\.md)?#([^)\s]+)\)")


def resolve(dotted):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def parameters(obj):
    """The parameter names of a function, or of a class's constructor (``self``, ``*args``, ``**kwargs`` left out)."""
    return {
        name for name, parameter in inspect.signature(obj).parameters.items()
        if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }  # fmt: skip


def snippet(page):
    return (GUIDE / f"{page}.md").read_text(encoding="utf-8")


def subsection(text, title):
    """The lines of ``### title`` up to the next heading."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line == f"### {title}"
            continue
        if inside:
            lines.append(line)
    return lines


def listed_parameters(text):
    """The parameter names a Parameters subsection lists: the code spans of the first cell of every table row
    (header and rule excepted), and the ``name=value`` spans of the prose around the table."""
    names, header_seen, prose = set(), False, []
    for line in subsection(text, "Parameters"):
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not header_seen or set(cells[0]) <= set("-: "):
                header_seen = True
                continue
            names.update(span for span in CODE_SPAN.findall(cells[0]) if IDENTIFIER.fullmatch(span))
        else:
            prose.append(line)
    names.update(keyword for function, keyword in keyword_uses("\n".join(prose)) if function is None)
    return names


def keyword_uses(text):
    """(callable name or None, keyword) for every ``name=value`` inside the code spans of ``text``: the callable is
    the innermost call the keyword is passed to (its last dotted component), None for a bare ``name=value``."""
    uses = []
    for span in CODE_SPAN.findall(text):
        span = " ".join(span.split())
        while match := CALL.search(span):
            uses += [(match.group(1).rpartition(".")[2], keyword) for keyword in KEYWORD.findall(match.group(2))]
            span = span[: match.start()] + "_" + span[match.end():]
        uses += [(None, keyword) for keyword in KEYWORD.findall(span)]
    return uses


def callable_options(page):
    """name -> parameter names, for the callables a snippet may pass keywords to: the documented and referenced
    ones, their public methods, and the public functions of :data:`FUNCTION_MODULES`."""
    options = {}
    for dotted in DOCUMENTED[page] + REFERENCED.get(page, []):
        obj = resolve(dotted)
        options[obj.__name__] = parameters(obj)
        if isinstance(obj, type):
            for name, member in inspect.getmembers(obj, callable):
                if not name.startswith("_") and not isinstance(member, type):
                    options.setdefault(name, set()).update(parameters(member))
    for module_name in FUNCTION_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            if inspect.isfunction(getattr(module, name)):
                options.setdefault(name, set()).update(parameters(getattr(module, name)))
    return options


def heading_slugs(path):
    """The MyST anchors of a page's headings (GitHub-style slugs of their text, code spans kept, as
    ``myst_heading_anchors`` makes them), repeats numbered as MyST numbers them."""
    slugify = pytest.importorskip("myst_parser.slugs").github_slugify
    slugs, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"#{1,6} (.*)", line)
        if match:
            base = slug = slugify(match.group(1).replace("`", "").replace("*", "").strip())
            number = 0
            while slug in slugs:
                number += 1
                slug = f"{base}-{number}"
            slugs.add(slug)
    return slugs


def toctree_entries():
    text = (DOCS / "user_guide.md").read_text(encoding="utf-8")
    block = text.split("```{toctree}", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith(":")]


def include_line(page):
    return f"```{{include}} _guide/{page}.md"


def test_every_snippet_is_mapped_to_its_page_and_estimators():
    assert sorted(p.stem for p in GUIDE.glob("*.md")) == sorted(DOCUMENTED)
    for page in DOCUMENTED:
        assert (DOCS / f"{page}.md").is_file(), page
    assert set(DOCUMENTED) <= set(toctree_entries())


@pytest.mark.parametrize("page", sorted(DOCUMENTED))
def test_snippet_has_the_four_subsections(page):
    text = snippet(page)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["## In practice"] + [f"### {title}" for title in SUBSECTIONS], page
    assert text.lstrip().startswith("## In practice")
    for title in SUBSECTIONS:
        assert any(line.strip() for line in subsection(text, title)), f"{page}: '{title}' is empty"
    assert 30 <= len(text.splitlines()) <= 60, f"{page}: {len(text.splitlines())} lines"


@pytest.mark.parametrize("page", sorted(DOCUMENTED))
def test_parameters_are_those_of_the_signatures(page):
    text = snippet(page)
    listed = listed_parameters(text)
    documented = {dotted: parameters(resolve(dotted)) for dotted in DOCUMENTED[page]}
    unknown = listed - set().union(*documented.values())
    assert not unknown, f"{page} lists parameters that no signature has: {sorted(unknown)}"
    for dotted, names in documented.items():
        missing = names - listed
        assert not missing, f"{page} does not list the parameters {sorted(missing)} of {dotted}"


@pytest.mark.parametrize("page", sorted(DOCUMENTED))
def test_every_keyword_is_an_option_of_its_callable(page):
    options = callable_options(page)
    own = set().union(*(parameters(resolve(dotted)) for dotted in DOCUMENTED[page] + REFERENCED.get(page, [])))
    for function, keyword in keyword_uses(snippet(page)):
        if function is None:
            assert keyword in own, f"{page}: `{keyword}=` is not a parameter of {DOCUMENTED[page]}"
        else:
            assert function in options, f"{page}: `{function}(... {keyword}=...)` calls an unknown callable"
            assert keyword in options[function], f"{page}: {function} has no parameter {keyword}"


@pytest.mark.parametrize("page", sorted(DOCUMENTED))
def test_links_point_at_existing_headings(page):
    text = snippet(page)
    own = heading_slugs(GUIDE / f"{page}.md")
    for target, anchor in LINK.findall(text):
        path = DOCS / f"{target or page}.md"
        assert path.is_file(), f"{page}: link to a missing page {target}.md"
        slugs = heading_slugs(path) | (own if not target else set())
        assert anchor in slugs, f"{page}: no heading of {path.name} has the anchor #{anchor}"


def test_the_helpers_find_what_they_should():
    """The parsers above on a made-up snippet: what they must accept and what they must catch."""
    text = "\n".join([
        "## In practice", "### Parameters", "| parameter | default |", "|---|---|",
        "| `alpha_shape`, `alpha_scale` | 0.5 |", "| `order` (see `Other`) | `k=1` |",
        "MCMC: `n_iter=10`, `thin=2`, `make(lam=1)`.", "### Diagnostics",
        "`plot(model, f(x, a=1), b=2)` and `c=3`, `x == y`.",
    ])  # fmt: skip
    assert listed_parameters(text) == {"alpha_shape", "alpha_scale", "order", "Other", "n_iter", "thin"}
    assert keyword_uses(text) == [
        (None, "k"), (None, "n_iter"), (None, "thin"), ("make", "lam"), ("f", "a"), ("plot", "b"), (None, "c"),
    ]  # fmt: skip
    assert subsection(text, "Diagnostics") == ["`plot(model, f(x, a=1), b=2)` and `c=3`, `x == y`."]


@pytest.mark.parametrize("page", sorted(DOCUMENTED))
def test_every_capability_page_includes_its_snippet(page):
    """Each capability page of the user guide includes its snippet right after its introduction (before its
    first section)."""
    lines = (DOCS / f"{page}.md").read_text(encoding="utf-8").splitlines()
    assert include_line(page) in lines, f"docs/{page}.md does not include _guide/{page}.md"
    first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
    assert lines.index(include_line(page)) < first_section
