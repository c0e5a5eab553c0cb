"""`python -m plmail.cli`, the same as the `plmail` command."""

import sys

from plmail.cli import main

sys.exit(main())
