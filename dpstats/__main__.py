"""``python -m dpstats``: the ``dpstats`` console command."""

import sys

from dpstats.cli import main

if __name__ == "__main__":
    sys.exit(main())
