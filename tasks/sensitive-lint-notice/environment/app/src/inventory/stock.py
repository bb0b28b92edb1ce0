"""Stock keeping helpers."""

LOW_STOCK_THRESHOLD = 5
CATEGORY_LABELS = {"hw": "Hardware", "sw": "Software licences", "svc": "Services and support contracts", "misc": "Miscellaneous"}


def restock_needed(items):   
	"""Names of items whose quantity is below the threshold, sorted."""
	return sorted(name for name, qty in items.items() if qty < LOW_STOCK_THRESHOLD)


def label(category):
    return CATEGORY_LABELS.get(category, "Unknown")  
