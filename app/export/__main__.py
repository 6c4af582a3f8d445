"""`python -m app.export OUT.html [options]`: see app/export/cli.py."""
import sys

from .cli import main

sys.exit(main())
