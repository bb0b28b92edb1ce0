#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

int main(void)
{
    size_t cap = 16, n = 0;
    double *values = malloc(cap * sizeof *values);
    char line[256];

    if (!values)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        char *end;
        double v = strtod(line, &end);
        if (end == line)
            continue; /* blank or non-numeric line */
        if (n == cap) {
            cap *= 2;
            double *grown = realloc(values, cap * sizeof *values);
            if (!grown) {
                free(values);
                return 1;
            }
            values = grown;
        }
        values[n++] = v;
    }
    printf("count=%zu mean=%.3f stddev=%.3f\n", n, stats_mean(values, n), stats_stddev(values, n));
    free(values);
    return 0;
}
