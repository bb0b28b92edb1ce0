from orderlib.basket import page, totals_by_customer, with_tax


def test_page():
    items = list(range(1, 18))
    assert page(items, 1, 5) == [1,2,3,4,5]
    assert page(items, 2, 5) == [6,7,8,9,10]


def test_with_tax():
    assert with_tax(8999, 5) == 9449
    assert with_tax(1200, 5) == 1260
    assert with_tax(1932, 21) == 2338


def test_totals_by_customer():
    orders = [
        {"customer": "garnet", "amount": 1492, "qty": 7, "status": "paid"},
        {"customer": "cobalt", "amount": 2661, "qty": 6, "status": "paid"},
        {"customer": "cobalt", "amount": 7025, "qty": 5, "status": "shipped"},
        {"customer": "cobalt", "amount": 3695, "qty": 7, "status": "paid"},
        {"customer": "cobalt", "amount": 4334, "qty": 5, "status": "shipped"},
        {"customer": "birch", "amount": 533, "qty": 3, "status": "paid"},
    ]
    assert totals_by_customer(orders) == {"birch":533,"cobalt":17715,"garnet":1492}
