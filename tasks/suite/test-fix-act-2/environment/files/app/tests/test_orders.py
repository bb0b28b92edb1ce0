from tillbox.orders import page, totals_by_customer, with_tax


def test_page():
    items = list(range(1, 18))
    assert page(items, 1, 4) == [1,2,3,4]
    assert page(items, 2, 4) == [5,6,7,8]


def test_with_tax():
    assert with_tax(8403, 21) == 10168
    assert with_tax(3600, 8) == 3888
    assert with_tax(7940, 7) == 8496


def test_totals_by_customer():
    orders = [
        {"customer": "birch", "amount": 9422, "qty": 2, "status": "shipped"},
        {"customer": "fjord", "amount": 4360, "qty": 8, "status": "shipped"},
        {"customer": "fjord", "amount": 7120, "qty": 3, "status": "paid"},
        {"customer": "fjord", "amount": 5602, "qty": 4, "status": "paid"},
        {"customer": "cobalt", "amount": 4341, "qty": 3, "status": "paid"},
        {"customer": "cobalt", "amount": 7942, "qty": 1, "status": "paid"},
        {"customer": "cobalt", "amount": 7715, "qty": 3, "status": "paid"},
        {"customer": "ember", "amount": 2033, "qty": 7, "status": "paid"},
    ]
    assert totals_by_customer(orders) == {"birch":9422,"cobalt":19998,"ember":2033,"fjord":17082}
