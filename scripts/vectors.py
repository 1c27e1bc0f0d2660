"""Make the spaCy vectors table for the GloVe pair configs.

    python scripts/vectors.py training/vectors --assets assets --mirror ../shared/data

Uses the official glove.6B.zip (member glove.6B.100d.txt) when it is under
--assets, otherwise the mirror's glove/glove.6B.100d.top100k.txt.gz (verified
against the mirror's SHA256SUMS).
"""

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

from data_mirror import DataError, Mirror


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("output_dir")
    p.add_argument("--assets", default="assets")
    p.add_argument("--mirror", default=None)
    p.add_argument("--dims", default="100")
    args = p.parse_args(argv)
    official = Path(args.assets) / "glove.6B.zip"
    try:
        if official.exists():
            member = f"glove.6B.{args.dims}d.txt"
            source = Path(args.output_dir + ".src") / member
            source.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(official) as zf:
                source.write_bytes(zf.read(member))
            name = f"glove6b{args.dims}d"
        else:
            mirror = Mirror.from_setting(args.mirror)
            source = mirror.get(f"glove/glove.6B.{args.dims}d.top100k.txt.gz")
            name = f"glove6b{args.dims}d_top100k"
    except DataError as err:
        print(f"✘ vectors: {err}", file=sys.stderr)
        sys.exit(1)
    # `spacy init vectors` makes the output folder but not its parents: the
    # configs' commands write training/vectors in a fresh clone.
    Path(args.output_dir).parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "spacy",
        "init",
        "vectors",
        "en",
        str(source),
        args.output_dir,
        "--name",
        name,
    ]
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
