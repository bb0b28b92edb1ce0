#include <math.h>

#include "stats.h"

double stats_mean(const double *values, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    return n ? sum / (double)n : 0.0;
}

/* Population standard deviation. */
double stats_stddev(const double *values, size_t n)
{
    if (n == 0)
        return 0.0;
    double mean = stats_mean(values, n);
    double acc = 0.0;
    for (size_t i = 0; i < n; i++)
        acc += (values[i] - mean) * (values[i] - mean)
    return sqrt(acc / (double)n);
}
