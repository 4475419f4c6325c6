"""``python -m deepvm_core.cli``: the ``deepvm`` command."""

import sys

from deepvm_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
