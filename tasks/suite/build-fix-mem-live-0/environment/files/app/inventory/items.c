#include "stats.h"

const struct item ITEMS[] = {
    {"clamps", 16, 602},
    {"brackets", 7, 4254},
    {"springs", 17, 4512},
    {"gaskets", 11, 3825},
};

const int ITEM_COUNT = sizeof ITEMS / sizeof ITEMS[0];
