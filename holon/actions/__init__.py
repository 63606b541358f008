"""The GitHub Actions runtime edge: workflow commands, the step's output and summary files."""
