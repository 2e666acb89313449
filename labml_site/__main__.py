"""`python -m labml_site …` is `labml-site …`."""
from .cli import main

raise SystemExit(main())
