"""python -m bench [--quick] [--list] [--only NAME]: print the benchmark table."""

import sys

from bench.cli import main

sys.exit(main())
