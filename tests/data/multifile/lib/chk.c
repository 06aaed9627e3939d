/* chk.c -- built into libchk.a by the tests: an FNV-1a hash of the bytes of an array, as hex. */
#include <stdio.h>

#include "chk.h"

const char *chk_hex(const double *a, long n)
{
  static char buf[17];
  unsigned long long h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)a;
  for (long i = 0; i < n * (long)sizeof(double); i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  snprintf(buf, sizeof buf, "%016llx", h);
  return buf;
}
