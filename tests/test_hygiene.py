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
