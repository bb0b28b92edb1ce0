#include "stats.h"

long total_units(const struct item *items, int n)
{
    long units = 0;
    for (int i = 0; i < n; i++)
        units += items[i].qty;
    return units;
}

long total_cents(const struct item *items, int n)
{
    long cents = 0;
    for (int i = 0; i < n; i++)
        cents += items[i].qty * items[i].price_cents;
    return cents;
}

int count_over(const struct item *items, int n, long threshold_cents)
{
    int over = 0;
    for (int i = 0; i < n; i++)
        if (items[i].qty * items[i].price_cents > threshold_cents)
            over++;
    return over;
}

const struct item *largest_line(const struct item *items, int n)
{
    const struct item *best = &items[0];
    for (int i = 1; i < n; i++)
        if (items[i].qty * items[i].price_cents > best->qty * best->price_cents)
            best = &items[i];
    return best;
}
