"""Everything a run gives back: the run record, terminal text, reports."""
