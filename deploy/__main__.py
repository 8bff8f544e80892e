"""``python -m deploy flash|rollback ...`` (what the Makefile calls)."""

import sys

from deploy.cli import main

raise SystemExit(main(sys.argv[1:]))
