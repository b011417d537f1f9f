/*
 * dtype: element types a task's arguments may have, their sizes, their C
 * spelling per back end, and conversion to and from double for comparison.
 * Everything here is static data; nothing is allocated.
 */
#ifndef KSCI_DTYPE_H
#define KSCI_DTYPE_H

#include <stddef.h>

enum dtype { DT_F16, DT_BF16, DT_F32, DT_F64, DT_I8, DT_U8, DT_I32, DT_U32, DT_I64, DT_NONE };

/* DT_NONE if name is not a dtype ("f32", "bf16", ...). */
enum dtype dtype_parse(const char *name);
const char *dtype_name(enum dtype t);
size_t dtype_size(enum dtype t);
int dtype_is_float(enum dtype t);
/* The type as written in a `solve` signature for backend "c", "cuda" or "hip". */
const char *dtype_ctype(enum dtype t, const char *backend);
double dtype_get(enum dtype t, const void *base, size_t i);
void dtype_set(enum dtype t, void *base, size_t i, double v);

#endif
