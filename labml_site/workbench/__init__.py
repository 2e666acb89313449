"""The translator's workbench: edit translations in the page (`translate`), review a branch's
translation changes as pages (`review`). After `build` in the layers: it runs builds and serves
what they write; only `cli` comes after it."""
