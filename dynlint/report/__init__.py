"""Output formats (text, json, sarif, github, html), the display helpers that make project text safe to show,
and the progress bars. Pure functions of findings, files and verify results."""
