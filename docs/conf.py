"""Sphinx configuration of the hdbayes documentation site.

Build (offline, any warning fails)::

    python -m sphinx -W -b html docs docs/_build/html

The API pages are written from the packages' ``__all__`` at the start of every build
(:func:`write_api_pages`), so that every public object is documented and none is missed
when a name is added; the example gallery is run from ``examples/`` by sphinx-gallery.
"""

import dataclasses
import importlib.util
import inspect
import os
import pydoc
import re
import sys
from importlib import import_module
from pathlib import Path

from numpydoc.docscrape import ClassDoc
from sphinx.pycode import ModuleAnalyzer

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))  # the source tree, also when hdbayes is not installed editable
sys.path.insert(0, str(DOCS))
os.environ.setdefault("MPLBACKEND", "Agg")

import hdbayes  # noqa: E402

project = "hdbayes"
author = "hdbayes developers"
copyright = "hdbayes developers"
version = release = hdbayes.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "validate_docstrings.py", "_guide"]
templates_path = ["_templates"]

# -- MyST: the Markdown pages of docs/ and the project's BENCHMARKS.md ---------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# -- API reference: autosummary + numpydoc ---------------------------------------------------------------------------
toc_object_entries_show_parents = "hide"  # "fit", not "BiasCorrectedNaiveBayes.fit", in a page's contents
python_maximum_signature_line_length = 88  # a long signature gets one parameter per line
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
autodoc_default_options = {"member-order": "bysource"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Numpydoc's docstring validation (issue 16). The checks that matter for a reader: the Parameters section
# matches the signature (PR01 missing, PR02 unknown, PR03 order), each parameter has a type and a description
# (PR04, PR07), a function says what it returns (RT01), the summary is present (SS01), every public object has a
# docstring (GL08) and each See Also entry says what the reference is (SA03, SA04). The Returns section is well
# formed: one returned value is given by its type alone (RT02), every value has a description (RT03) that starts
# with a capital letter (RT04) and ends with a period (RT05); the summary fits on one line (SS06) and does not
# start with a verb in the third person ("Returns" for "Return", SS05); the closing quotes are on the line after
# the text (GL02). Module data is exempt from GL02 and scikit-learn's set_*_request from RT02 (overrides below).
# The build reports the errors as warnings, so that -W fails on them (HDBAYES_DOCS_VALIDATE=0 switches them off,
# e.g. to see a page while its docstrings are being written); docs/validate_docstrings.py prints them for the same
# objects without building. A record's fields documented under Attributes are exempt from PR01
# (numpydoc_validation_overrides, set below from the public records), and module data is documented by its "#:"
# comment (document_data).
DOCSTRING_CHECKS = ["GL02", "GL08", "PR01", "PR02", "PR03", "PR04", "PR07", "RT01", "RT02", "RT03", "RT04", "RT05",
                    "SA03", "SA04", "SS01", "SS05", "SS06"]
if os.environ.get("HDBAYES_DOCS_VALIDATE", "1") != "0":
    numpydoc_validation_checks = set(DOCSTRING_CHECKS)

# -- Example gallery ------------------------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "doc_module": ("hdbayes",),
    "reference_url": {"hdbayes": None},
    "backreferences_dir": None,
}

# -- HTML: the PyData theme ---------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"hdbayes {release}"
html_static_path = ["_static"]
html_css_files = ["hdbayes.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_context = {"default_mode": "light"}
# pages without sub-pages get no (empty) section navigation, so their text and code use the width
html_sidebars = {page: [] for page in ("index", "getting_started", "benchmarks", "contributing")}

# -- The API pages, one per public package, written from __all__ -----------------------------------------------------
# (package, title); the top level first: a name exported by hdbayes itself is documented there once, and the
# subpackage that defines it links to it.
API_PACKAGES = [
    ("hdbayes", "Estimators (``hdbayes``)"),
    ("hdbayes.selection_bias", "Selection-bias correction (``hdbayes.selection_bias``)"),
    ("hdbayes.discrete", "Discrete data (``hdbayes.discrete``)"),
    ("hdbayes.interactions", "High-order interactions (``hdbayes.interactions``)"),
    ("hdbayes.spike_slab", "Group spike-and-slab regression (``hdbayes.spike_slab``)"),
    ("hdbayes.linear", "Bayesian linear classification on all features (``hdbayes.linear``)"),
    ("hdbayes.datasets", "Data sets and simulators (``hdbayes.datasets``)"),
    ("hdbayes.metrics", "Scores and calibration (``hdbayes.metrics``)"),
    ("hdbayes.statistics", "Mergeable sufficient statistics (``hdbayes.statistics``)"),
    ("hdbayes.exceptions", "Input errors (``hdbayes.exceptions``)"),
    ("hdbayes.mcmc", "MCMC core (``hdbayes.mcmc``)"),
    ("hdbayes.experiments", "Reproductions (``hdbayes.experiments``)"),
]


def public_names(package):
    """The documented names of one package: its ``__all__`` without ``__version__``.

    Parameters
    ----------
    package : str
        A package's dotted name, such as ``"hdbayes.discrete"``.

    Returns
    -------
    list of str
        The names, in the order of ``__all__``.
    """
    return [name for name in import_module(package).__all__ if name != "__version__"]


def _kind(obj):
    if isinstance(obj, type):
        return "classes"
    if callable(obj):
        return "functions"
    return "data"


def _reader_docstring(module):
    """The package docstring's paragraphs for a user: those before the export rule (written for developers)."""
    paragraphs = inspect.cleandoc(module.__doc__ or "").split("\n\n")
    kept = []
    for paragraph in paragraphs:
        if paragraph.startswith(("Export rule", "Exports follow")):
            break
        kept.append(paragraph)
    return "\n\n".join(kept).splitlines()


def write_api_pages(out=DOCS / "api"):
    """Write ``<package>.rst`` for every package of :data:`API_PACKAGES` into ``out``.

    Parameters
    ----------
    out : pathlib.Path
        The folder (``docs/api``); files are rewritten only when their text changes, so that
        Sphinx's incremental build is not invalidated.

    Returns
    -------
    list of str
        The documented objects' full names (``package.name``), each once.
    """
    top = set(public_names("hdbayes"))
    documented = []
    for package, title in API_PACKAGES:
        module = import_module(package)
        names = public_names(package)
        own = names if package == "hdbayes" else [name for name in names if name not in top]
        shared = [] if package == "hdbayes" else [name for name in names if name in top]
        lines = [title, "=" * len(title), "", f".. module:: {package}", "", *_reader_docstring(module), ""]
        if shared:
            links = ", ".join(f":class:`~hdbayes.{name}`" for name in shared)
            lines += [f"Also exported here, documented under :mod:`hdbayes`: {links}.", ""]
        lines += [f".. currentmodule:: {package}", ""]
        groups = {"classes": [], "functions": [], "data": []}
        for name in own:
            groups[_kind(getattr(module, name))].append(name)
        headings = {"classes": "Classes", "functions": "Functions", "data": "Data"}
        for kind, members in groups.items():
            if not members:
                continue
            # the stub of each object is written from docs/_templates/autosummary/<its type>.rst
            lines += [headings[kind], "-" * len(headings[kind]), "", ".. autosummary::", "   :toctree: generated/",
                      "   :nosignatures:", ""]
            lines += [f"   {name}" for name in members] + [""]
            documented += [f"{package}.{name}" for name in members]
        path = out / f"{package}.rst"
        text = "\n".join(lines)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return documented


API_OBJECTS = write_api_pages()


# -- Docstring validation of records and module data ------------------------------------------------------------------
def public_object(full_name):
    """The object of a public full name.

    Parameters
    ----------
    full_name : str
        ``package.name``, such as ``"hdbayes.spike_slab.EPResult"``.

    Returns
    -------
    object
        ``getattr(import_module(package), name)``.
    """
    package, _, name = full_name.rpartition(".")
    return getattr(import_module(package), name)


def is_record(obj):
    """Whether ``obj`` is a record class: a dataclass or a NamedTuple, whose constructor's parameters are its fields.

    Parameters
    ----------
    obj : object
        Any public object.

    Returns
    -------
    bool
        True for a dataclass or NamedTuple class.
    """
    if not isinstance(obj, type):
        return False
    return dataclasses.is_dataclass(obj) or (issubclass(obj, tuple) and hasattr(obj, "_fields"))


def record_fields(record):
    """The fields of a record, the parameters of its constructor.

    Parameters
    ----------
    record : type
        A dataclass or NamedTuple class.

    Returns
    -------
    set of str
        The names of the fields its constructor takes.
    """
    if dataclasses.is_dataclass(record):
        return {field.name for field in dataclasses.fields(record) if field.init}
    return set(record._fields)


def documented_attributes(cls):
    """The names in the Attributes section of a class's docstring ("a, b : type" counts both).

    Parameters
    ----------
    cls : type
        A class.

    Returns
    -------
    set of str
        The documented attribute names.
    """
    names = set()
    for attribute in ClassDoc(cls, config={"show_class_members": False})["Attributes"]:
        names.update(part.strip() for part in attribute.name.split(","))
    return names


def records_documented_by_attributes(full_names):
    """The public records whose every field is documented under Attributes.

    A record is built by hdbayes (or a factory of hdbayes) and read by the user, so its fields are documented
    once, as attributes; numpydoc's PR01 ("parameters not documented") does not apply to it. A record with a field
    missing from its Attributes is not listed, so that PR01 still names its fields.

    Parameters
    ----------
    full_names : list of str
        Public full names (:data:`API_OBJECTS`).

    Returns
    -------
    list of str
        The full names of those records, in the given order.
    """
    records = []
    for full_name in full_names:
        obj = public_object(full_name)
        if is_record(obj) and record_fields(obj) <= documented_attributes(obj):
            records.append(full_name)
    return records


RECORDS = records_documented_by_attributes(API_OBJECTS)
# numpydoc matches an override's patterns against the object's docstring: each record's whole docstring, exactly
numpydoc_validation_overrides = {
    "PR01": [rf"\A{re.escape(pydoc.getdoc(public_object(name)))}\Z" for name in RECORDS],
    # module data, which has no docstring of its own (""): numpydoc checks the closing quotes (GL02) of its
    # value's type's docstring (dict's), not of its "#:" comment
    "GL02": [r"\A\Z"],
    # scikit-learn's set_*_request methods ("self : object"): left out of the site, listed by validate_docstrings
    "RT02": [r"\AConfigure whether metadata should be requested to be passed to the ``\w+`` method\."],
}


def data_docstring(full_name):
    """The docstring of public module data: the ``#:`` comment above its assignment (Sphinx's convention).

    Autodoc reads the comment in the module named by the API page (the package, such as
    ``hdbayes.experiments``), while the assignment is in the submodule that the package exports it from lazily
    (its ``_EXPORTS`` table); this reads it there.

    Parameters
    ----------
    full_name : str
        ``package.name`` of a data object, such as ``"hdbayes.experiments.EXPERIMENTS"``.

    Returns
    -------
    list of str
        The comment's lines without the ``#:`` markers (empty when there is none).
    """
    package, _, name = full_name.rpartition(".")
    module = package
    for source, names in getattr(import_module(package), "_EXPORTS", {}).items():
        if name in names:
            module = importlib.util.resolve_name(source, package)
    return list(ModuleAnalyzer.for_module(module).find_attr_docs().get(("", name), []))


def document_data(app, what, name, obj, options, lines):
    """Autodoc handler: module data gets its ``#:`` comment (:func:`data_docstring`) as its docstring.

    Without it autodoc would pass on the docstring of the value's type (``dict``'s). Run before numpydoc
    (priority 400 < 500), which renders and validates it like any docstring.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    what, name : str
        The object's kind and full name.
    obj : object
        The object.
    options : dict
        The directive's options.
    lines : list of str
        The docstring's lines, replaced in place when there is a comment.
    """
    if what == "data":
        comment = data_docstring(name)
        if comment:
            lines[:] = comment


# -- Plain-text conventions of the docstrings, rendered as reStructuredText -----------------------------------------
# The docstrings are written to be read in a terminal (``help()``) as well: they write |x| for an absolute value,
# name fitted attributes with their trailing underscore (``n_features_in_``) in running text and in types, and list
# the keys of a returned ``Bunch`` as nested "name : type" lines, some without a description. In reStructuredText
# the first is a substitution, the second a hyperlink reference and the third a malformed definition list. The
# handler below, run after numpydoc, escapes the first two outside literals, roles and math, and renders a nested
# "name : type" list as a bullet list.
_INLINE_MARKUP = re.compile(r"(``.+?``|:[\w:.-]+:`[^`]*`|`[^`]+`_{0,2}|\*\*[^*]+\*\*)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\\`\w])([A-Za-z]\w*?)_(?![\w`])")
_KEY_LINE = re.compile(r"^(\s+)([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) : (\S.*)$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _escape_text(text):
    parts = _INLINE_MARKUP.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside inline markup
        parts[i] = _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def _key_lists(lines):
    """Nested "name : type" lines (with optional indented descriptions) → a bullet list."""
    out, i = [], 0
    while i < len(lines):
        match = _KEY_LINE.match(lines[i])
        previous = next((line for line in reversed(out) if line.strip()), "")
        if not match or _indent(previous) > len(match.group(1)) or previous.rstrip().endswith("::"):
            out.append(lines[i])
            i += 1
            continue
        indent = match.group(1)
        if out and out[-1].strip():
            out.append("")
        while i < len(lines):
            match = _KEY_LINE.match(lines[i])
            if not match or match.group(1) != indent:
                break
            names = ", ".join(f"``{name}``" for name in match.group(2).split(", "))
            out.append(f"{indent}- {names} : {match.group(3)}")
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(indent)):
                body.append(lines[i])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            if body:
                shift = min(_indent(line) for line in body if line.strip()) - len(indent) - 2
                out.append("")
                out += [line[shift:] if line.strip() else "" for line in body]
                out.append("")
        if out and out[-1].strip():
            out.append("")
    return out


def render_plain_text(app, what, name, obj, options, lines):
    """Autodoc handler: escape ``|`` and trailing underscores, render nested key lists (see above).

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    what, name : str
        The object's kind and full name.
    obj : object
        The object.
    options : dict
        The directive's options.
    lines : list of str
        The docstring's lines after numpydoc, changed in place.
    """
    result, block_indent, doctest = [], None, False
    for line in _key_lists(list(lines)):
        stripped = line.strip()
        if block_indent is not None and stripped and _indent(line) <= block_indent:
            block_indent = None
        doctest = bool(stripped) and (doctest or stripped.startswith(">>>"))  # a doctest block ends at a blank line
        if block_indent is not None or doctest or not stripped or stripped.startswith(".. "):
            if stripped.startswith(".. ") or stripped.endswith("::"):
                block_indent = _indent(line)
            result.append(line)
            continue
        if stripped.endswith("::"):
            block_indent = _indent(line)
        result.append(_escape_text(line))
    lines[:] = result


_SKLEARN_MACHINERY = re.compile(r"set_\w+_request|get_metadata_routing|set_output")


def skip_sklearn_machinery(app, what, name, obj, skip, options):
    """Autodoc handler: leave out scikit-learn's metadata-routing and output-container methods.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    what, name : str
        The parent's kind and the member's name.
    obj : object
        The member.
    skip : bool
        Whether autodoc would skip it.
    options : dict
        The directive's options.

    Returns
    -------
    bool or None
        True to skip ``set_*_request``, ``get_metadata_routing`` and ``set_output`` (scikit-learn's, documented
        there), else None (autodoc decides).
    """
    return True if _SKLEARN_MACHINERY.fullmatch(name) else None


def setup(app):
    app.connect("autodoc-process-docstring", document_data, priority=400)  # before numpydoc's (500)
    app.connect("autodoc-skip-member", skip_sklearn_machinery)
    app.connect("autodoc-process-docstring", render_plain_text, priority=600)  # after numpydoc's (500)
