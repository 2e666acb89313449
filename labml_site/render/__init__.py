"""Rendering one language: a page's text in it (`localize`), the theme's Jinja2 templates
(`theme`), UI strings (`i18n`), and the extras a reader gets: search index, notebooks, sitemap."""
