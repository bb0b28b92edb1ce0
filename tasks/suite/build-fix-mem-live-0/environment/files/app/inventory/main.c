#include <stdio.h>
#include "stats.h"

static void money(const char *label, long cents)
{
    printf("%s%ld.%02ld\n", label, cents / 100, cents % 100);
}

int main(void)
{
    long units = total_units(ITEMS, ITEM_COUNT);
    long cents = total_cent(ITEMS, ITEM_COUNT);

    printf("items: %d\n", ITEM_COUNT);
    printf("units: %ld\n", units);
    money("total: ", cents);
    printf("over %ld.%02ld: %d\n", (long)THRESHOLD_CENTS / 100, (long)THRESHOLD_CENTS % 100,
           count_over(ITEMS, ITEM_COUNT, THRESHOLD_CENTS));
#ifdef SHOW_AVERAGE
    money("average: ", units ? cents / units : 0);
#endif
#ifdef SHOW_LARGEST
    printf("largest: %s\n", largest_line(ITEMS, ITEM_COUNT)->name);
#endif
    return 0;
}
