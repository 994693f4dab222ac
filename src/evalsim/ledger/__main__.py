"""``python -m evalsim.ledger``."""

from evalsim.ledger.cli import main

raise SystemExit(main())
