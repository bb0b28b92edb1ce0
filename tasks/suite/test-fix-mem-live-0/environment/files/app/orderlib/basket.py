"""Order helpers shared by the shop front end and the nightly reports."""


def page(items, number, size):
    """Return page `number` (1-based) of `items`, `size` items per page; past the end, an empty list."""
    start = (number - 1) * size
    return items[start:start + size]


def with_tax(cents, rate_percent):
    """Price in cents plus tax at `rate_percent` percent, rounded half up to a whole cent."""
    return cents * (100 + rate_percent) // 100


def totals_by_customer(orders):
    """Sum of order amounts (cents) per customer, as a dict with customers in sorted order."""
    totals = {}
    for order in orders:
        totals[order["customer"]] = totals.get(order["customer"], 0) + order["amount"]
    return dict(sorted(totals.items()))
