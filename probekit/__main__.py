"""``python -m probekit ...``, the ``probekit`` command; also what ``torchrun ... -m probekit run CHAPTER`` starts on
each rank (see :mod:`probekit.shard`)."""

import sys

from probekit.cli import main

sys.exit(main())
