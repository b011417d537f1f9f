/*
 * dtype: half and bfloat16 are converted by bit manipulation (round to
 * nearest even), so the host side needs no compiler support for them.
 */
#include "dtype.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
	const char *c, *cuda, *hip;
} T[] = {
	[DT_F16] = {"f16", 2, "_Float16", "half", "half"},
	[DT_BF16] = {"bf16", 2, "uint16_t", "__nv_bfloat16", "hip_bfloat16"},
	[DT_F32] = {"f32", 4, "float", "float", "float"},
	[DT_F64] = {"f64", 8, "double", "double", "double"},
	[DT_I8] = {"i8", 1, "int8_t", "int8_t", "int8_t"},
	[DT_U8] = {"u8", 1, "uint8_t", "uint8_t", "uint8_t"},
	[DT_I32] = {"i32", 4, "int", "int", "int"},
	[DT_U32] = {"u32", 4, "unsigned int", "unsigned int", "unsigned int"},
	[DT_I64] = {"i64", 8, "long long", "long long", "long long"},
};

enum dtype dtype_parse(const char *name)
{
	for (int i = 0; i < DT_NONE; i++)
		if (name && strcmp(name, T[i].name) == 0)
			return (enum dtype)i;
	return DT_NONE;
}

const char *dtype_name(enum dtype t) { return t < DT_NONE ? T[t].name : "?"; }
size_t dtype_size(enum dtype t) { return t < DT_NONE ? T[t].size : 0; }
int dtype_is_float(enum dtype t) { return t <= DT_F64; }

const char *dtype_ctype(enum dtype t, const char *backend)
{
	if (t >= DT_NONE)
		return "void";
	if (strcmp(backend, "cuda") == 0)
		return T[t].cuda;
	if (strcmp(backend, "hip") == 0)
		return T[t].hip;
	return T[t].c;
}

static float f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t bits_from_f32(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static double half_to_double(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	double v;
	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return s ? -v : v;
}

static uint16_t double_to_half(double d)
{
	float f = (float)d;
	uint32_t x = bits_from_f32(f);
	uint16_t s = (uint16_t)((x >> 16) & 0x8000);
	if (isnan(f))
		return s | 0x7e00;
	double a = fabs(d);
	if (a >= 65520.0)
		return s | 0x7c00;
	if (a < ldexp(1, -25))
		return s;
	int e;
	frexp(a, &e); /* a = m * 2^e, m in [0.5,1) */
	int exp16 = e - 1 + 15;
	double scaled;
	if (exp16 <= 0) /* subnormal: units of 2^-24 */
		scaled = a * ldexp(1, 24);
	else
		scaled = ldexp(a, 10 - (e - 1));
	double r = nearbyint(scaled); /* ties to even under the default rounding mode */
	if (exp16 <= 0)
		return s | (uint16_t)r; /* may round up into the smallest normal: same encoding */
	uint32_t mant = (uint32_t)r; /* 1024..2048 */
	if (mant == 2048) {
		mant = 1024;
		exp16++;
	}
	if (exp16 >= 31)
		return s | 0x7c00;
	return s | (uint16_t)(exp16 << 10) | (uint16_t)(mant - 1024);
}

static uint16_t double_to_bf16(double d)
{
	uint32_t x = bits_from_f32((float)d);
	if (isnan(d))
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

double dtype_get(enum dtype t, const void *base, size_t i)
{
	switch (t) {
	case DT_F16: return half_to_double(((const uint16_t *)base)[i]);
	case DT_BF16: return f32_from_bits((uint32_t)((const uint16_t *)base)[i] << 16);
	case DT_F32: return ((const float *)base)[i];
	case DT_F64: return ((const double *)base)[i];
	case DT_I8: return ((const int8_t *)base)[i];
	case DT_U8: return ((const uint8_t *)base)[i];
	case DT_I32: return ((const int32_t *)base)[i];
	case DT_U32: return ((const uint32_t *)base)[i];
	case DT_I64: return (double)((const int64_t *)base)[i];
	default: return NAN;
	}
}

void dtype_set(enum dtype t, void *base, size_t i, double v)
{
	switch (t) {
	case DT_F16: ((uint16_t *)base)[i] = double_to_half(v); break;
	case DT_BF16: ((uint16_t *)base)[i] = double_to_bf16(v); break;
	case DT_F32: ((float *)base)[i] = (float)v; break;
	case DT_F64: ((double *)base)[i] = v; break;
	case DT_I8: ((int8_t *)base)[i] = (int8_t)v; break;
	case DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
	case DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
	case DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
	case DT_I64: ((int64_t *)base)[i] = (int64_t)v; break;
	default: break;
	}
}
