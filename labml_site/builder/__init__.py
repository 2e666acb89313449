"""The engine around the pipeline: what a build is asked to do (`config`), the build top to
bottom (`site`), scheduling and memoising the per-file stages (`prepare`), producing and writing
outputs (`outputs`), the content-hash store (`cache`), per-page summaries (`heads`), worker
processes (`workers`) and the preview server (`serve`)."""
