#include "totals.h"

const struct item ITEMS[] = {
    {"pulleys", 3, 1019},
    {"valves", 5, 1276},
    {"cables", 7, 2758},
    {"brackets", 8, 4969},
};

const int ITEM_COUNT = sizeof ITEMS / sizeof ITEMS[0];
