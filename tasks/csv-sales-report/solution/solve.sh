#!/bin/bash
# Oracle: build /app/report.json from /app/data/sales.csv.
set -euo pipefail

python3 - <<'PY'
import csv
import json
from decimal import Decimal, InvalidOperation

revenue_by_region = {}
revenue_by_product = {}
units_by_product = {}
invalid = []
counted = 0

with open("/app/data/sales.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        try:
            qty = int(row["quantity"])
            price = Decimal(row["unit_price"])
            if qty <= 0:
                raise ValueError
        except (ValueError, InvalidOperation):
            invalid.append(row["order_id"])
            continue
        if row["status"] != "completed":
            continue
        counted += 1
        amount = price * qty
        revenue_by_region[row["region"]] = revenue_by_region.get(row["region"], Decimal(0)) + amount
        revenue_by_product[row["product"]] = revenue_by_product.get(row["product"], Decimal(0)) + amount
        units_by_product[row["product"]] = units_by_product.get(row["product"], 0) + qty

report = {
    "orders_counted": counted,
    "total_revenue": float(round(sum(revenue_by_region.values(), Decimal(0)), 2)),
    "revenue_by_region": {k: float(round(v, 2)) for k, v in sorted(revenue_by_region.items())},
    "units_by_product": dict(sorted(units_by_product.items())),
    "top_product": max(sorted(revenue_by_product), key=lambda p: revenue_by_product[p]),
    "invalid_rows": sorted(invalid),
}
with open("/app/report.json", "w") as fh:
    json.dump(report, fh, indent=2)
    fh.write("\n")
PY
