"""labml_site: turns heavily commented Python into side-by-side, translated tutorial pages."""

__version__ = "0.1.0"
