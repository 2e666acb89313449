"""Translations as untrusted input: loading a language's catalog (`catalog`), checking it with
findings that name file and line (`checks`), sanitising (`sanitize`), updating the files
(`extract`) and coverage (`stats`). Nothing here knows about pages or the build."""
