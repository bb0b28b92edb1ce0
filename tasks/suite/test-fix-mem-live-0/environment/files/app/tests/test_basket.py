from orderlib.basket import page, totals_by_customer, with_tax


def test_page():
    items = list(range(1, 14))
    assert page(items, 1, 5) == [1,2,3,4,5]
    assert page(items, 2, 5) == [6,7,8,9,10]


def test_with_tax():
    assert with_tax(1608, 19) == 1914
    assert with_tax(8300, 21) == 10043
    assert with_tax(8796, 5) == 9236


def test_totals_by_customer():
    orders = [
        {"customer": "cobalt", "amount": 2774, "qty": 2, "status": "shipped"},
        {"customer": "fjord", "amount": 5615, "qty": 7, "status": "paid"},
        {"customer": "cobalt", "amount": 5085, "qty": 3, "status": "shipped"},
        {"customer": "cobalt", "amount": 8273, "qty": 1, "status": "paid"},
        {"customer": "fjord", "amount": 7712, "qty": 6, "status": "shipped"},
    ]
    assert totals_by_customer(orders) == {"cobalt":16132,"fjord":13327}
