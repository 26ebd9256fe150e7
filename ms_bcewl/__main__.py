"""`python -m ms_bcewl info|check|bench`: the ms-bcewl command (ms_bcewl/bcewl_cli.py)."""
import sys

from ms_bcewl.bcewl_cli import main

sys.exit(main())
