import sys

from probekit.rehearsal import main

sys.exit(main())
