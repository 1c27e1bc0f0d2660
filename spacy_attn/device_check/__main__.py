"""``python -m spacy_attn.device_check``: the command line of ``python -m spacy
attn device-check``, kept for the GPU checklist (docs/development.md)."""

import sys

from spacy_attn.cli import main

if __name__ == "__main__":
    main(["device-check", *sys.argv[1:]], prog_name="python -m spacy_attn.device_check")
