#include "calc.h"

const struct item ITEMS[] = {
    {"brackets", 11, 3454},
    {"clamps", 14, 3004},
    {"gaskets", 6, 2224},
    {"rivets", 20, 3608},
    {"springs", 19, 822},
    {"washers", 1, 2455},
    {"hinges", 7, 528},
    {"bolts", 14, 93},
};

const int ITEM_COUNT = sizeof ITEMS / sizeof ITEMS[0];
