"""Reports of scenario runs and episodes: one self-contained HTML page each (acres_report)."""
