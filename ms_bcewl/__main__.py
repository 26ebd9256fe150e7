"""`python -m ms_bcewl info|check|bench`: the ms-bcewl command (ms_bcewl/cli.py)."""
import sys

from ms_bcewl.cli import main

sys.exit(main())
