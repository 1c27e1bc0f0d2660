"""Repository hygiene: no committed file records where a developer's machine
keeps things. Such paths break for everyone else (a default data path that
does not exist on their machine) and leak nothing useful (a result file's
command line that cannot be re-run). Use repo-relative paths, ../shared/data
or $SPACY_ATTN_MIRROR (scripts/data_mirror.py) instead. And the package holds
what a user runs: nothing in it finds files relative to the checkout."""

import re
import subprocess
import sys

from .util import REPO

# Absolute paths of a development machine: the workplace and root home
# folders, a user's home, and any virtual environment's site-packages. Each
# pattern is written so that this file does not match itself.
MACHINE_PATHS = re.compile(
    rb"(?<![\w.~-])/(?:work|root)/"
    rb"|(?<![\w.~-])/(?:home|Users)/[A-Za-z_][\w.-]*/"
    rb"|lib/python3\.\d+/site-packages"
)


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    return [name for name in out.decode("utf8").split("\0") if name]


def find_machine_paths(files):
    """(file, line number, match) for every machine path in the files."""
    hits = []
    for rel in files:
        path = REPO / rel
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        for lineno, line in enumerate(path.read_bytes().splitlines(), 1):
            for match in MACHINE_PATHS.finditer(line):
                hits.append((rel, lineno, match.group().decode("utf8", "replace")))
    return hits


def test_pattern_finds_machine_paths():
    # The test must be able to fail: each kind of path is caught, the
    # relative ones the project uses are not.
    # Joined from pieces so that this file does not hold the paths itself.
    root = b"/"
    bad = [
        root + b"work/main/README.md",
        b"--mirror " + root + b"root/data",
        root + b"home/alice/x",
        root + b"Users/bob/y",
        b"venv/lib/" + b"python3.11/site-packages/spacy",
        b'"cmd": "' + root + b'work/x/.venv/bin/python"',
    ]
    good = [
        b"../shared/data",
        b"$SPACY_ATTN_MIRROR",
        b"corpus/sick/work/",
        b"site-packages",
        b"~" + root + b"work/x",
        b"homework/",
        b"scripts/prepare.py",
    ]
    assert all(MACHINE_PATHS.search(s) for s in bad)
    assert not any(MACHINE_PATHS.search(s) for s in good)


def test_no_machine_paths_in_tracked_files():
    files = tracked_files()
    assert "tests/test_hygiene.py" in files  # the listing is the repo's
    hits = find_machine_paths(files)
    shown = [f"{f}:{n}: {m}" for f, n, m in hits[:40]]
    more = [f"... and {len(hits) - 40} more"] if len(hits) > 40 else []
    assert not hits, (
        "absolute paths of a development machine in tracked files:\n"
        + "\n".join(shown + more)
    )


# A path computed from the package's own location up into the checkout
# (site-packages once installed), or the checkout's data folder by name.
CHECKOUT_RELATIVE = re.compile(r"parent\.parent|shared/data|\"shared\"\s*/\s*\"data\"")


def test_package_finds_nothing_relative_to_the_checkout():
    """What the wheel ships (spacy_attn/, setup.cfg's ``packages = find:``)
    names no data mirror beside the checkout: that default lives in
    scripts/data_mirror.py, and packaged commands take the folder explicitly
    (``device-check --mirror`` / ``$SPACY_ATTN_MIRROR``)."""
    package = REPO / "spacy_attn"
    assert not (package / "mirror.py").exists()
    hits = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sorted(package.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1)
        if CHECKOUT_RELATIVE.search(line)
    ]
    assert not hits, "checkout-relative paths in the package:\n" + "\n".join(hits)
    # The pattern catches what the package's mirror helper used to hold.
    assert CHECKOUT_RELATIVE.search('_CHECKOUT.parent / "shared" / "data"')
    assert CHECKOUT_RELATIVE.search("Path(__file__).resolve().parent.parent")


IMPORT_PATCHES_NOTHING = """
import sys
from spacy.training.corpus import Corpus
spacys_own = Corpus._make_example
import spacy_attn, spacy_attn.layers, spacy_attn.pipeline
patchers = sorted(
    name for name, module in list(sys.modules.items())
    if name.startswith("spacy_attn") and hasattr(module, "carry_pair_spans")
)
assert not patchers, patchers
assert Corpus._make_example is spacys_own
"""


def test_import_neither_loads_nor_installs_the_corpus_patch():
    """``import spacy_attn`` (layers and pipeline included) leaves spaCy's
    ``Corpus`` alone and does not even import the module that can patch it:
    only a config naming ``spacy-attn.carry_pairs.v1`` or ``--code`` does.
    A fresh process, since this one's tests may have imported it."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PATCHES_NOTHING],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]


# A pipeline used from Python (spacy.load, nlp(doc)) and spaCy's command line
# with the attn group loaded (its entry point imports spacy_attn.cli): the
# batch tool and the device check stay unimported until a command needs them.
BATCH_TOOL_UNUSED = """
import sys, spacy, spacy_attn
nlp = spacy.load(sys.argv[1])
nlp(spacy_attn.make_pair(nlp, "A dog runs.", "An animal moves."))
import spacy_attn.cli
{extra}
loaded = sorted(
    name for name in sys.modules
    if name.startswith(("spacy_attn.batch", "spacy_attn.device_check"))
)
assert not loaded, loaded
"""


def test_a_user_who_predicts_no_files_imports_no_batch_tool(tmp_path):
    """``spacy_attn.batch`` (engines, worker pool, Dask) and the device check
    are imported by the commands that use them, not by ``import spacy_attn``,
    a loaded pipeline or the command group. A fresh process each, the second
    showing that the check sees an import of the batch tool."""
    from .test_multiprocess import build_pipeline

    build_pipeline("pair", n_iter=1).to_disk(tmp_path / "pair")
    results = [
        subprocess.run(
            [sys.executable, "-c", BATCH_TOOL_UNUSED.format(extra=extra)]
            + [str(tmp_path / "pair")],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        for extra in ("", "import spacy_attn.batch")
    ]
    assert results[0].returncode == 0, results[0].stderr[-2000:]
    assert "spacy_attn.batch" in results[1].stderr, results[1].stderr[-2000:]


def private_imports(paths):
    """(file:line, statement) for every import of another module's private
    (single-underscore) name from spacy_attn: ``from .x import _y``,
    ``from spacy_attn.x import _y``. A package's ``_util`` module of shared
    helpers is not a private name (its names are public to the package)."""
    import ast

    hits = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            module = node.module or ""
            if node.level == 0 and not module.startswith("spacy_attn"):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    stmt = f"from {'.' * node.level}{module} import {alias.name}"
                    hits.append((f"{path}:{node.lineno}", stmt))
    return hits


def test_no_module_imports_another_modules_private_names():
    files = [
        path
        for folder in ("spacy_attn", "scripts", "benchmarks")
        for path in sorted((REPO / folder).glob("**/*.py"))
    ]
    hits = private_imports(files)
    assert not hits, "imports of private names:\n" + "\n".join(
        f"{where}: {stmt}" for where, stmt in hits
    )


def test_private_import_check_can_fail(tmp_path):
    # What the package held before (models/siamese.py, squad/__init__.py).
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from .self_attention import _SelfAttentionBase\n"
        "from spacy_attn.squad import _find_near\n"
        "from ._util import length_mask\n"
        "from os import _exit\n"
    )
    assert [stmt for _, stmt in private_imports([bad])] == [
        "from .self_attention import _SelfAttentionBase",
        "from spacy_attn.squad import _find_near",
    ]


def path_edits(paths):
    """(file:line, what) for every edit of Python's import path: a call of a
    ``sys.path`` method that changes it, an assignment to ``sys.path`` or to
    an item of it, ``from sys import path`` and ``site.addsitedir``. Read
    from the syntax tree, so a docstring or comment naming them is no hit."""
    import ast

    changers = {
        "append",
        "insert",
        "extend",
        "remove",
        "pop",
        "clear",
        "reverse",
        "sort",
    }

    def is_sys_path(node):
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "path"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        )

    hits = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf8"), str(path))
        for node in ast.walk(tree):
            what = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if is_sys_path(node.func.value) and node.func.attr in changers:
                    what = f"sys.path.{node.func.attr}(...)"
                elif node.func.attr == "addsitedir":
                    what = "site.addsitedir(...)"
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                for target in targets:
                    base = target.value if isinstance(target, ast.Subscript) else target
                    if is_sys_path(base):
                        what = "assignment to sys.path"
            elif isinstance(node, ast.Delete):
                if any(
                    is_sys_path(t.value if isinstance(t, ast.Subscript) else t)
                    for t in node.targets
                ):
                    what = "del sys.path[...]"
            elif isinstance(node, ast.ImportFrom) and node.module == "sys":
                if any(alias.name == "path" for alias in node.names):
                    what = "from sys import path"
            if what:
                hits.append((path, node.lineno, what))
    return [(f"{path}:{line}", what) for path, line, what in sorted(hits)]


def test_no_sys_path_edits_anywhere():
    """Scripts, benchmarks and tests import their helpers without editing
    Python's path: a script's own folder is on it when it runs as a file,
    pytest adds scripts/ and benchmarks/ (pyproject.toml's ``pythonpath``),
    and a helper in another folder is imported by its file (importlib)."""
    files = [REPO / rel for rel in tracked_files() if rel.endswith(".py")]
    files = [path for path in files if path.is_file()]
    assert REPO / "benchmarks" / "bench" / "machine.py" in files
    hits = path_edits(files)
    assert not hits, "edits of sys.path:\n" + "\n".join(
        f"{where}: {what}" for where, what in hits
    )


def test_sys_path_check_can_fail(tmp_path):
    # What benchmarks/bench/machine.py, tests/util.py and
    # tests/fixtures/cut.py held before, and the other ways to do it.
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import site\nimport sys\nfrom sys import path\n"
        'sys.path.append("scripts")\n'
        'sys.path.insert(0, "scripts")\n'
        'sys.path[:0] = ["x"]\n'
        'sys.path += ["x"]\n'
        'site.addsitedir("x")\n'
    )
    good = tmp_path / "good.py"
    good.write_text(
        '"""No sys.path.append here."""\n'
        "import sys\n"
        "# sys.path.insert(0, x) in a comment\n"
        "print(sys.path)\n"
        "paths = list(sys.path)\n"
        "paths.append('x')\n"
    )
    assert [what for _, what in path_edits([bad, good])] == [
        "from sys import path",
        "sys.path.append(...)",
        "sys.path.insert(...)",
        "assignment to sys.path",
        "assignment to sys.path",
        "site.addsitedir(...)",
    ]


MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
SIZE_SECTION = "## Size limits"
SIZE_ENTRY = re.compile(
    r"^- `((?:spacy_attn|benchmarks|scripts)/[\w/]+\.py)(?:::([\w.]+))?`:\s*(\S.*)?$"
)


def size_exceptions(text):
    """The files and functions docs/development.md's "Size limits" section
    lets run over the limits: ``{"path" or "path::Qual.name": why}``, from
    its list items ``- `spacy_attn/x.py`: why`` and
    ``- `spacy_attn/x.py::function`: why``."""
    lines = text.splitlines()
    start = lines.index(SIZE_SECTION) + 1
    exceptions = {}
    for line in lines[start:]:
        if line.startswith("## "):
            break
        match = SIZE_ENTRY.match(line)
        if match:
            path, function, why = match.groups()
            assert why, f"an exception without a why in docs/development.md: {line}"
            exceptions[f"{path}::{function}" if function else path] = why
    return exceptions


def oversized(paths, root):
    """``{"path": lines}`` for files over MAX_FILE_LINES and
    ``{"path::Qual.name": lines}`` for functions (and methods, by class)
    over MAX_FUNCTION_LINES, counted from ``def`` to their last line."""
    import ast

    found = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf8")
        if len(text.splitlines()) > MAX_FILE_LINES:
            found[rel] = len(text.splitlines())
        scopes = [(ast.parse(text, str(path)), "")]
        while scopes:
            node, prefix = scopes.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    name = prefix + child.name
                    if not isinstance(child, ast.ClassDef):
                        length = child.end_lineno - child.lineno + 1
                        if length > MAX_FUNCTION_LINES:
                            found[f"{rel}::{name}"] = length
                    scopes.append((child, name + "."))
                else:
                    scopes.append((child, prefix))
    return found


def test_package_files_and_functions_keep_to_their_size():
    docs = (REPO / "docs" / "development.md").read_text(encoding="utf8")
    allowed = size_exceptions(docs)
    # The package's rules hold for the checkout's tooling too.
    paths = [
        p
        for d in ("spacy_attn", "benchmarks", "scripts")
        for p in (REPO / d).rglob("*.py")
    ]
    found = oversized(sorted(paths), REPO)
    over = [
        f"{name}: {n} lines" for name, n in sorted(found.items()) if name not in allowed
    ]
    assert not over, (
        f"over {MAX_FILE_LINES} lines a file or {MAX_FUNCTION_LINES} a function, "
        "and not named in docs/development.md's size limits:\n" + "\n".join(over)
    )
    stale = sorted(set(allowed) - set(found))
    assert not stale, (
        "named as exceptions in docs/development.md but within the limits "
        "(remove them from the list):\n" + "\n".join(stale)
    )


def test_size_check_can_fail(tmp_path):
    package = tmp_path / "spacy_attn"
    package.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (package / "long.py").write_text(
        f"def short():\n    pass\n\n\nclass C:\n    def long(self):\n{body}\n"
    )
    (package / "big.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    (package / "fits.py").write_text("x = 1\n" * MAX_FILE_LINES)
    assert oversized(sorted(package.glob("*.py")), tmp_path) == {
        "spacy_attn/big.py": MAX_FILE_LINES + 1,
        "spacy_attn/long.py::C.long": MAX_FUNCTION_LINES + 1,
    }
    docs = (
        "# Dev\n\n## Size limits\n\ntext\n\n### Pending\n\n"
        "- `spacy_attn/big.py`: because\n"
        "- `spacy_attn/long.py::C.long`: one loop\n\n"
        "## Next\n\n- `spacy_attn/fits.py`: not in the section\n"
    )
    assert size_exceptions(docs) == {
        "spacy_attn/big.py": "because",
        "spacy_attn/long.py::C.long": "one loop",
    }


# A command (a ``*_cli`` function of spacy_attn/cli/) parses its options and
# calls one documented library function, as spaCy's ``evaluate_cli`` calls
# ``evaluate``: checks and work live in the library, where Python callers and
# tests reach them. Its body is counted from the first statement after the
# docstring to its last line, blank lines and comments between included; the
# signature (the options) and the docstring (the --help text) are not.
MAX_COMMAND_BODY_LINES = 30


def thick_commands(paths, root):
    """``{"path::name": lines}`` for every ``*_cli`` function (at any depth)
    whose body, without its docstring, runs over MAX_COMMAND_BODY_LINES."""
    import ast

    found = {}
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not node.name.endswith("_cli"):
                continue
            body = node.body
            if ast.get_docstring(node, clean=False) is not None:
                body = body[1:]
            if not body:
                continue
            lines = node.end_lineno - body[0].lineno + 1
            if lines > MAX_COMMAND_BODY_LINES:
                found[f"{path.relative_to(root).as_posix()}::{node.name}"] = lines
    return found


def test_commands_are_thin():
    paths = sorted((REPO / "spacy_attn" / "cli").glob("*.py"))
    assert REPO / "spacy_attn" / "cli" / "predict.py" in paths
    found = thick_commands(paths, REPO)
    assert not found, (
        f"commands whose body runs over {MAX_COMMAND_BODY_LINES} lines; move "
        "the checks and the work into a documented library function that the "
        "command calls with its options (a settings dataclass where there are "
        "many):\n" + "\n".join(f"{name}: {n} lines" for name, n in found.items())
    )


def test_command_size_check_can_fail(tmp_path):
    cli = tmp_path / "spacy_attn" / "cli"
    cli.mkdir(parents=True)
    fits = "\n".join(f"    x{i} = {i}" for i in range(MAX_COMMAND_BODY_LINES))
    over = "\n".join(f"    x{i} = {i}" for i in range(MAX_COMMAND_BODY_LINES + 1))
    # The docstring, however long, is --help text and not counted; a helper
    # that is no command is not either.
    doc = '    """Help.\n\n' + "    More help.\n" * 40 + '    """\n'
    (cli / "cmd.py").write_text(
        f"def fits_cli(\n    a: int,\n    b: int,\n) -> None:\n{doc}{fits}\n\n\n"
        f"def thick_cli() -> None:\n{over}\n\n\n"
        f"def helper() -> None:\n{over}\n\n\n"
        f"class App:\n    def method_cli(self) -> None:\n"
        + "\n".join(f"    {line}" for line in over.splitlines())
        + "\n"
    )
    assert thick_commands([cli / "cmd.py"], tmp_path) == {
        "spacy_attn/cli/cmd.py::thick_cli": MAX_COMMAND_BODY_LINES + 1,
        "spacy_attn/cli/cmd.py::method_cli": MAX_COMMAND_BODY_LINES + 1,
    }


def framework_imports(paths):
    """(file:line, module) for every import of spaCy or Thinc in the files."""
    import ast

    hits = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                if name.split(".")[0] in ("spacy", "thinc"):
                    hits.append((f"{path}:{node.lineno}", name))
    return hits


def test_torch_modules_import_neither_spacy_nor_thinc(tmp_path):
    """spacy_attn/models/ is torch only (docs/development.md, "Names"): the
    Thinc builders are in layers/, the components in pipeline/."""
    hits = framework_imports(sorted((REPO / "spacy_attn" / "models").glob("*.py")))
    assert not hits, "spaCy or Thinc imported in spacy_attn/models/:\n" + "\n".join(
        f"{where}: {name}" for where, name in hits
    )
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import torch\nfrom thinc.api import Model\nimport spacy.tokens\n"
        "from .self_attention import SelfAttentionBase\n"
    )
    assert [name for _, name in framework_imports([bad])] == [
        "thinc.api",
        "spacy.tokens",
    ]


MAX_PARAGRAPH_WORDS = 120
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def paragraphs(text):
    """(first line number, word count) of every paragraph of a markdown text.

    A paragraph is a run of consecutive non-blank lines outside ``` fences
    that are neither table rows (``|``), headings (``#``), HTML (``<``) nor
    list items. A list item is a line starting with ``-``, ``*``, ``+`` or
    ``1.`` / ``1)`` and the lines that follow it up to the next blank line
    (its continuation): lists, tables and code are not prose to read in one
    go, and a list item ends the paragraph before it. Words are what
    ``str.split`` splits, so a link or an inline code span counts as one or
    more words as written."""
    found = []
    fence = in_list = False
    start, words = 0, 0

    def close():
        if words:
            found.append((start, words))
        return 0

    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = not fence
            words, in_list = close(), False
        elif fence:
            continue
        elif not stripped or stripped.startswith(("|", "#", "<")):
            words, in_list = close(), False
        elif LIST_ITEM.match(line):
            words, in_list = close(), True
        elif not in_list:
            if not words:
                start = number
            words += len(stripped.split())
    close()
    return found


def guide_pages():
    return [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def test_no_guide_paragraph_over_120_words():
    """README.md and docs/*.md lead with commands and short explanations;
    measured results live in tables under benchmarks/results/ (long notes
    too: benchmarks/results/notes_*.md) and are linked, not retold."""
    pages = guide_pages()
    assert REPO / "docs" / "own_data.md" in pages
    long = [
        f"{path.relative_to(REPO)}:{line}: {words} words"
        for path in pages
        for line, words in paragraphs(path.read_text(encoding="utf8"))
        if words > MAX_PARAGRAPH_WORDS
    ]
    assert not long, (
        f"paragraphs over {MAX_PARAGRAPH_WORDS} words (split them, or move "
        "measured prose to benchmarks/results/ and link it):\n" + "\n".join(long)
    )


def test_paragraph_count_can_fail():
    long = " ".join(["word"] * 121)
    text = (
        f"# Title\n\n{long}\n\nshort one\nsecond line\n\n"
        f"```bash\n{long}\n```\n\n| {long} |\n\n- {long}\n  {long}\n\n"
        f"before a list\n- item\n{long}\n\n1. {long}\n"
    )
    assert paragraphs(text) == [(3, 121), (5, 4), (17, 3)]


MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(path):
    """The anchors GitHub makes of a markdown file's headings: lower case,
    punctuation dropped, spaces as hyphens, ``-1``, ``-2`` for repeats."""
    anchors, seen, fence = set(), {}, False
    for line in path.read_text(encoding="utf8").splitlines():
        if line.strip().startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchor = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(f"{anchor}-{count}" if count else anchor)
    return anchors


def broken_links(paths, root=REPO):
    """file:line: target for every relative markdown link, outside code
    fences, to a file that does not exist or a heading its file lacks."""
    bad = []
    for path in paths:
        fence = False
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
            if line.strip().startswith("```"):
                fence = not fence
                continue
            for target in [] if fence else MD_LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                name, _, anchor = target.partition("#")
                linked = path.parent / name if name else path
                where = f"{path.relative_to(root)}:{number}: {target}"
                if not linked.exists():
                    bad.append(where + " (no such file)")
                elif anchor and linked.suffix == ".md":
                    if anchor not in heading_anchors(linked):
                        bad.append(where + " (no such heading)")
    return bad


def test_markdown_links_resolve():
    """Every relative link of every tracked markdown file (README, docs,
    results) names a file that exists and, for a .md file, a heading in it."""
    paths = [REPO / rel for rel in tracked_files() if rel.endswith(".md")]
    paths = [path for path in paths if path.is_file()]
    assert REPO / "README.md" in paths
    bad = broken_links(paths)
    assert not bad, "broken links:\n" + "\n".join(bad)


def test_link_check_can_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## Its part: one, two\n\n"
        "[ok](#its-part-one-two) [ok](page.md#a-page) [web](https://x.org/y)\n"
        "[gone](missing.md) [no heading](page.md#nowhere)\n"
        "```\n[in code](missing.md)\n```\n"
    )
    assert broken_links([page], root=tmp_path) == [
        "page.md:6: missing.md (no such file)",
        "page.md:6: page.md#nowhere (no such heading)",
    ]


def readme_command_rows(text):
    """``{command: row}`` of the table in README.md's "Commands" section."""
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {row.split("`")[1]: row for row in rows}


def test_readme_lists_every_command():
    """The README's command table names every ``spacy attn`` command, in
    --help's order, each with what it does and a link to its doc."""
    import typer.main

    from spacy_attn.cli import attn_cli

    commands = list(typer.main.get_command(attn_cli).commands)
    assert "distill" in commands
    rows = readme_command_rows((REPO / "README.md").read_text(encoding="utf8"))
    assert list(rows) == commands, "README.md's Commands table against --help"
    for name, row in rows.items():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 3 and cells[1], row
        assert MD_LINK.search(cells[2]), f"no doc link for {name}: {row}"


def test_command_table_check_can_fail():
    text = (
        "# X\n\n## Commands\n\n| command | what it does | doc |\n| --- | --- | --- |\n"
        "| `predict` | predicts | [batch.md](docs/batch.md) |\n\n## Next\n\n| `rank` | no |\n"
    )
    assert list(readme_command_rows(text)) == ["predict"]
