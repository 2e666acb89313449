"""`python -m labml_site …` is `labml-site …`."""
from .cli import run

run()
