#ifndef STATS_H
#define STATS_H

/* Line totals above this amount (in cents) are reported as "over". */
#define THRESHOLD_CENTS 2725

struct item {
    const char *name;
    int qty;
    long price_cents;
};

extern const struct item ITEMS[];
extern const int ITEM_COUNT;

long total_units(const struct item *items, int n);
long total_cents(const struct item *items, int n);
int count_over(const struct item *items, int n, long threshold_cents);
const struct item *largest_line(const struct item *items, int n);

#endif
