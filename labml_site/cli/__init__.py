"""The command line: parses arguments, calls the library, prints findings. No build logic here."""
from .main import main

__all__ = ["main"]
