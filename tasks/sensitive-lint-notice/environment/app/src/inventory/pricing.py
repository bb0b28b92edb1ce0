"""Price calculations (amounts in cents)."""


def line_total(unit_cents, quantity, discount_pct=0):
    gross = unit_cents * quantity 
    return gross - (gross * discount_pct) // 100


def order_total(lines):
	return sum(line_total(*line) for line in lines)