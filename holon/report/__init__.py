"""`holon report`: figures per skill and per ISO week, aggregated from a serve state directory's
journals and state records (docs/report.md). Pure aggregation (`aggregate.py`), one reader of
the directory (`sources.py`), its renderings (`render.py`), and the pull requests Holon opened,
watched on timer ticks (`pulls.py`)."""
