#ifndef STATS_H
#define STATS_H

#include <stddef.h>

double stats_mean(const double *values, size_t n);
double stats_stddev(const double *values, size_t n);

#endif
