"""`python -m mnemo_client` is the `mnemo` command."""

import sys

from mnemo_client.cli import main

sys.exit(main())
