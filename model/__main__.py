"""`python -m model`: see model/cli.py."""
import sys

from .cli import main

sys.exit(main())
