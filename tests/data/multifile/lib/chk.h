/* chk.h -- the library prog.c links with (-lchk). */
#ifndef CHK_H
#define CHK_H
const char *chk_hex(const double *a, long n);
#endif
