"""Typesetting: TeX → MathML (`math`), highlighted code (`highlight`), one file → language-free
`PageData` (`page`), and names in code linked to their definitions across the site (`linking`)."""
