"""Analyses over analysed graphs that return data: compare two partitions (diff), gate on expectations (check), sweep."""
