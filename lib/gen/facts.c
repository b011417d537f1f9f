/*
 * facts: the device, timings and resources a prompt shows; see facts.h.
 *
 * Every figure comes from a record: the times from time.sizes, the peaks
 * from time.env (peak_gbps, peak_gflops; else time.peak), the per-size work
 * from time.sizes[].flops/.bytes or the task's formulas, the resources from
 * compile.resources.  The only table of our own is the per-SM limits of a
 * few compute capabilities (the CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability"), for the occupancy bound; a
 * capability not in it gets no occupancy figure rather than a guess.
 */
#include "facts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "strbuf.h"
#include "task.h"

static double num(const json_t *o, const char *path)
{
	json_t *v = rec_path(o, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* 3 significant figures or more, never an exponent: "3258", "85.4", "0.625". */
/* " [lo, hi]" of a speedup's 95 % interval (key in obj), "" when none. */
static const char *ci_text(const json_t *obj, const char *key, char *buf, size_t n)
{
	const json_t *ci = json_object_get(obj, key);
	double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_get(ci, 1));
	if (json_array_size(ci) != 2 || !(lo > 0) || !(hi >= lo))
		return "";
	snprintf(buf, n, " [95 %% interval %.3f-%.3f]", lo, hi);
	return buf;
}

static const char *fmt(char *buf, size_t n, double v)
{
	double a = fabs(v);
	snprintf(buf, n, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3g", v);
	return buf;
}

const json_t *fact_env(const json_t *rec, const json_t *others, const json_t *notebook, const char *task,
		       const char *backend)
{
	const json_t *e = rec_path(rec, "time.env");
	if (json_is_object(e))
		return e;
	size_t i;
	json_t *o;
	json_array_foreach(others, i, o) {
		if (json_is_object(e = rec_path(o, "time.env")))
			return e;
	}
	for (i = json_array_size(notebook); i-- > 0;) {
		o = json_array_get(notebook, i);
		const char *t = rec_str(o, "task"), *b = rec_str(o, "backend");
		if ((!task || (t && strcmp(t, task) == 0)) && (!backend || (b && strcmp(b, backend) == 0)) &&
		    json_is_object(e = rec_path(o, "time.env")))
			return e;
	}
	return NULL;
}

void fact_arch_normalise(char *a)
{
	a[strcspn(a, ":")] = '\0';
	if (strncmp(a, "sm_", 3) == 0) {
		size_t n = strlen(a);
		while (n > 3 && a[n - 1] >= 'a' && a[n - 1] <= 'z')
			a[--n] = '\0';
	}
}

const char *fact_arch(const json_t *env, const json_t *rec, char *buf, size_t n)
{
	int ma, mi;
	const char *cc = json_string_value(json_object_get(env, "cc"));
	buf[0] = '\0';
	if (cc && sscanf(cc, "%d.%d", &ma, &mi) == 2 && ma > 0) {
		snprintf(buf, n, "sm_%d%d", ma, mi);
		return buf;
	}
	size_t i;
	json_t *f;
	json_array_foreach(rec_path(rec, "compile.flags"), i, f) {
		const char *s = json_string_value(f), *p;
		if (!s)
			continue;
		if ((p = strstr(s, "code=sm_")))
			p += 5;
		else if (strncmp(s, "-arch=sm_", 9) == 0)
			p = s + 6;
		else if (strncmp(s, "--offload-arch=", 15) == 0)
			p = s + 15;
		else
			continue;
		snprintf(buf, n, "%.*s", (int)strcspn(p, ","), p);
		fact_arch_normalise(buf);
		break;
	}
	return buf;
}

const char *fact_bound_name(enum fact_bound b)
{
	static const char *const names[] = {"unknown", "memory", "compute", "mixed"};
	return names[b];
}

/* The text without its last newline: the templates lay out the lines. */
static char *done(struct strbuf *b)
{
	while (b->len > 0 && b->buf[b->len - 1] == '\n')
		b->buf[--b->len] = '\0';
	return sb_detach(b, NULL);
}

/* ---- the roofline at one size ---- */

struct peaks {
	double gbps, gflops; /* NAN when not measured */
};

static struct peaks peaks_of(const struct fact_ctx *c, const json_t *rec)
{
	struct peaks p = {num(c->env, "peak_gbps"), num(c->env, "peak_gflops")};
	if (!(p.gbps > 0))
		p.gbps = num(rec, "time.peak.copy_gbps");
	if (!(p.gflops > 0))
		p.gflops = num(rec, "time.peak.sgemm_gflops");
	if (!(p.gbps > 0))
		p.gbps = NAN;
	if (!(p.gflops > 0))
		p.gflops = NAN;
	return p;
}

/* The unit the task's work is meant for; NULL: fp32. */
static const char *flops_unit(const struct fact_ctx *c, const json_t *entry)
{
	const char *u = json_string_value(json_object_get(entry, "flops_unit"));
	if (!u && c->task)
		u = json_string_value(json_object_get(c->task->json, "flops_unit"));
	return u && strcmp(u, "fp32") != 0 ? u : NULL;
}

struct roof {
	double flops, bytes;   /* the task's work at this size; NAN: unknown */
	double t_mem, t_comp;  /* microseconds at peak; NAN: unknown */
	double floor_us;       /* the roofline's time; NAN: unknown */
	enum fact_bound bound; /* FACT_MEMORY, FACT_COMPUTE or FACT_UNKNOWN */
	const char *unit;      /* non-fp32 flops unit, or NULL */
};

/* entry: a time.sizes[] element (may be NULL); size: its size object. */
static struct roof roof_at(const struct fact_ctx *c, struct peaks p, const json_t *entry, const json_t *size)
{
	struct roof r = {rec_num(entry, "flops"), rec_num(entry, "bytes"), NAN, NAN, NAN, FACT_UNKNOWN,
			 flops_unit(c, entry)};
	if (c->task && isnan(r.flops))
		r.flops = task_formula(c->task, "flops", size);
	if (c->task && isnan(r.bytes))
		r.bytes = task_formula(c->task, "bytes", size);
	/* Bytes but no flops: the task counts no arithmetic (a copy, a
	 * transpose), so memory is all there is to bind. */
	if (isnan(r.flops) && isfinite(r.bytes) && (!c->task || !json_object_get(c->task->json, "flops")))
		r.flops = 0;
	if (isfinite(r.bytes) && isfinite(p.gbps))
		r.t_mem = r.bytes / p.gbps / 1e3;
	if (isfinite(r.flops) && isfinite(p.gflops) && !r.unit)
		r.t_comp = r.flops / p.gflops / 1e3;
	if (isfinite(r.t_mem) && isfinite(r.t_comp)) {
		r.bound = r.t_mem >= r.t_comp ? FACT_MEMORY : FACT_COMPUTE;
		r.floor_us = r.t_mem >= r.t_comp ? r.t_mem : r.t_comp;
	} else if (isfinite(r.t_mem) && r.flops == 0) {
		r.bound = FACT_MEMORY;
		r.floor_us = r.t_mem;
	} else if (isfinite(r.t_mem) && r.unit && isfinite(p.gflops) && isfinite(r.flops) &&
		   r.flops / r.bytes < p.gflops / p.gbps) {
		/* Below the fp32 ridge is below any tensor ridge too. */
		r.bound = FACT_MEMORY;
		r.floor_us = r.t_mem;
	}
	return r;
}

static void roof_text(struct strbuf *b, const struct roof *r, struct peaks p)
{
	char x[32], y[32], z[32];
	double ai = r->bytes > 0 ? r->flops / r->bytes : NAN, ridge = p.gflops / p.gbps;
	if (r->bound == FACT_UNKNOWN) {
		if (r->unit && isfinite(ai) && isfinite(ridge))
			sb_printf(b, "binding limit unknown: %s work has no measured compute peak (%s flop/byte, above "
				     "the fp32 ridge %s)", r->unit, fmt(x, sizeof x, ai), fmt(y, sizeof y, ridge));
		else if (isnan(p.gbps) && isnan(p.gflops))
			sb_add(b, "binding limit unknown: no measured peaks for this device");
		else
			sb_add(b, "binding limit unknown: the task gives no flops/bytes for this size");
		return;
	}
	sb_printf(b, "%s-bound", fact_bound_name(r->bound));
	if (isfinite(ai) && isfinite(ridge))
		sb_printf(b, " (%s flop/byte %s ridge %s)", fmt(x, sizeof x, ai), ai < ridge ? "<" : ">=",
			  fmt(y, sizeof y, ridge));
	else if (r->flops == 0)
		sb_add(b, " (no arithmetic counted)");
	sb_printf(b, ", roofline floor %s%s us", r->unit ? ">= " : "", fmt(z, sizeof z, r->floor_us));
}

/* The sizes a record's facts are about: its timed sizes, else the task's
 * benchmark sizes for the back end (then *timed = 0). */
static const json_t *sizes_of(const json_t *rec, const struct fact_ctx *c, int *timed)
{
	const json_t *s = rec_path(rec, "time.sizes");
	*timed = json_array_size(s) > 0;
	if (*timed)
		return s;
	return c->task && c->backend ? task_bench(c->task, c->backend) : NULL;
}

static enum fact_bound bound_over(const json_t *rec, const struct fact_ctx *c, const json_t *sizes, int timed,
				  int *nmem, int *ncomp)
{
	struct peaks p = peaks_of(c, rec);
	int unknown = 0;
	size_t i;
	json_t *s;
	*nmem = *ncomp = 0;
	json_array_foreach(sizes, i, s) {
		struct roof r = roof_at(c, p, timed ? s : NULL, timed ? json_object_get(s, "size") : s);
		*nmem += r.bound == FACT_MEMORY;
		*ncomp += r.bound == FACT_COMPUTE;
		unknown += r.bound == FACT_UNKNOWN;
	}
	if (unknown || (*nmem == 0 && *ncomp == 0))
		return *nmem && *ncomp ? FACT_MIXED : FACT_UNKNOWN;
	return *nmem && *ncomp ? FACT_MIXED : *nmem ? FACT_MEMORY : FACT_COMPUTE;
}

enum fact_bound fact_bound(const json_t *rec, const struct fact_ctx *c)
{
	int timed, nm, nc;
	const json_t *sizes = sizes_of(rec, c, &timed);
	return bound_over(rec, c, sizes, timed, &nm, &nc);
}

/* ---- timings ---- */

char *fact_timings(const json_t *rec, const struct fact_ctx *c)
{
	struct strbuf b = STRBUF_INIT;
	struct peaks p = peaks_of(c, rec);
	int timed, nm, nc;
	const json_t *sizes = sizes_of(rec, c, &timed);
	char x[32], y[32], sz[256];
	double best_pct = NAN;
	size_t i;
	json_t *s;
	if (!timed) {
		const char *st = rec_str(rec, "status");
		sb_printf(&b, "(not timed: status %s)\n", st ? st : "?");
		if (json_array_size(sizes))
			sb_add(&b, "The task's roofline on this device, per benchmark size:\n");
	}
	json_array_foreach(sizes, i, s) {
		const json_t *size = timed ? json_object_get(s, "size") : s;
		struct roof r = roof_at(c, p, timed ? s : NULL, size);
		task_size_str(size, sz, sizeof sz);
		sb_printf(&b, "- %s: ", sz);
		if (timed) {
			const json_t *cand = json_object_get(s, "candidate");
			double us = rec_num(cand, "median_us"), sem = rec_num(cand, "sem_us");
			double n = rec_num(cand, "n");
			sb_printf(&b, "%.2f us", us);
			if (isfinite(sem))
				sb_printf(&b, " (SEM %.3g us%s%.0f batches)", sem, isfinite(n) ? ", " : "", isfinite(n) ? n : 0);
			if (json_is_false(json_object_get(s, "converged")))
				sb_add(&b, " (not converged)");
			double bl = num(s, "baseline.median_us"), sd = num(s, "seed.median_us");
			double sb_ = rec_num(s, "speedup_vs_baseline"), ss = rec_num(s, "speedup_vs_seed");
			if (isfinite(sb_))
				sb_printf(&b, "; %.3fx vs baseline%s", sb_, ci_text(s, "speedup_vs_baseline_ci", x, sizeof x));
			if (isfinite(bl))
				sb_printf(&b, " (%.2f us)", bl);
			if (isfinite(ss))
				sb_printf(&b, ", %.3fx vs seed%s", ss, ci_text(s, "speedup_vs_seed_ci", x, sizeof x));
			if (isfinite(sd))
				sb_printf(&b, " (%.2f us)", sd);
			if (us > 0 && isfinite(r.bytes) && r.bytes > 0) {
				double gbps = r.bytes / us / 1e3;
				sb_printf(&b, "; %s GB/s", fmt(x, sizeof x, gbps));
				if (isfinite(p.gbps))
					sb_printf(&b, " = %s%% of peak bandwidth", fmt(y, sizeof y, 100 * gbps / p.gbps));
			}
			if (us > 0 && isfinite(r.flops) && r.flops > 0) {
				double gf = r.flops / us / 1e3;
				sb_printf(&b, ", %s GFLOP/s%s%s", fmt(x, sizeof x, gf), r.unit ? " " : "", r.unit ? r.unit : "");
				if (isfinite(p.gflops) && !r.unit)
					sb_printf(&b, " = %s%% of peak fp32", fmt(y, sizeof y, 100 * gf / p.gflops));
			}
			if (us > 0 && isfinite(r.floor_us) && !r.unit) {
				double pct = 100 * r.floor_us / us;
				best_pct = isnan(best_pct) || pct > best_pct ? pct : best_pct;
			}
			sb_add(&b, "; ");
		}
		roof_text(&b, &r, p);
		sb_add(&b, "\n");
	}
	if (!timed && json_array_size(sizes) == 0)
		sb_add(&b, "(no benchmark sizes known)\n");
	if (timed) {
		double gb = num(rec, "time.speedup_vs_baseline"), gs = num(rec, "time.speedup_vs_seed");
		if (isfinite(gb) || isfinite(gs)) {
			sb_add(&b, "geometric mean:");
			const json_t *t = json_object_get(rec, "time");
			if (isfinite(gb))
				sb_printf(&b, " %.3fx vs baseline%s%s", gb, ci_text(t, "speedup_vs_baseline_ci", x, sizeof x),
					  isfinite(gs) ? "," : "");
			if (isfinite(gs))
				sb_printf(&b, " %.3fx vs seed%s", gs, ci_text(t, "speedup_vs_seed_ci", x, sizeof x));
			sb_add(&b, "\n");
		}
		const json_t *slow = rec_path(rec, "time.slow");
		if (json_is_object(slow)) {
			task_size_str(json_object_get(slow, "size"), sz, sizeof sz);
			sb_printf(&b, "timing stopped early at %s: %.3fx vs seed, below the bound %.3fx\n", sz,
				  rec_num(slow, "speedup_vs_seed"), rec_num(slow, "bound"));
		}
	}
	enum fact_bound bd = bound_over(rec, c, sizes, timed, &nm, &nc);
	if (json_array_size(sizes)) {
		sb_printf(&b, "binding limit: %s", fact_bound_name(bd));
		if (bd == FACT_MEMORY || bd == FACT_COMPUTE)
			sb_printf(&b, " at every size");
		else if (bd == FACT_MIXED)
			sb_printf(&b, " (memory at %d size%s, compute at %d)", nm, nm == 1 ? "" : "s", nc);
		if (isfinite(best_pct))
			sb_printf(&b, "; at best %s%% of the roofline (its floor over the measured time)",
				  fmt(x, sizeof x, best_pct));
		sb_add(&b, "\n");
	}
	return done(&b);
}

/* ---- the device ---- */

/* Per-SM limits of the compute capabilities ksci knows (CUDA C++
 * Programming Guide, "Technical Specifications per Compute Capability"). */
static const struct sm_limits {
	int major, minor;
	int threads;   /* resident threads per SM */
	int blocks;    /* resident blocks per SM */
	int smem_kib;  /* shared memory per SM */
	int regs;      /* 32-bit registers per SM */
} SM_LIMITS[] = {
	{7, 0, 2048, 32, 96, 65536},  {7, 5, 1024, 16, 64, 65536},  {8, 0, 2048, 32, 164, 65536},
	{8, 6, 1536, 16, 100, 65536}, {8, 9, 1536, 24, 100, 65536}, {9, 0, 2048, 32, 228, 65536},
	{10, 0, 2048, 32, 228, 65536},
};

static const struct sm_limits *limits_of(const json_t *env)
{
	int ma, mi;
	const char *cc = json_string_value(json_object_get(env, "cc"));
	if (!cc || sscanf(cc, "%d.%d", &ma, &mi) != 2)
		return NULL;
	for (size_t i = 0; i < sizeof SM_LIMITS / sizeof *SM_LIMITS; i++)
		if (SM_LIMITS[i].major == ma && SM_LIMITS[i].minor == mi)
			return &SM_LIMITS[i];
	return NULL;
}

static void bytes_text(struct strbuf *b, double v)
{
	char x[32];
	if (v >= 1024.0 * 1024 * 1024)
		sb_printf(b, "%s GiB", fmt(x, sizeof x, v / (1024.0 * 1024 * 1024)));
	else if (v >= 1024.0 * 1024)
		sb_printf(b, "%s MiB", fmt(x, sizeof x, v / (1024.0 * 1024)));
	else if (v >= 1024)
		sb_printf(b, "%s KiB", fmt(x, sizeof x, v / 1024));
	else
		sb_printf(b, "%.0f B", v);
}

char *fact_device(const struct fact_ctx *c, const json_t *rec)
{
	struct strbuf b = STRBUF_INIT;
	const json_t *e = c->env;
	char x[32], y[32], arch[64];
	const char *gpu = rec_str(e, "gpu"), *cpu = rec_str(e, "cpu");
	fact_arch(e, rec, arch, sizeof arch);
	if (gpu) {
		sb_printf(&b, "GPU: %s", gpu);
		if (rec_str(e, "cc"))
			sb_printf(&b, ", compute capability %s (%s)", rec_str(e, "cc"), arch);
		double v;
		if (isfinite(v = rec_num(e, "sms")))
			sb_printf(&b, ", %.0f SMs", v);
		if (isfinite(v = rec_num(e, "l2_bytes"))) {
			sb_add(&b, ", ");
			bytes_text(&b, v);
			sb_add(&b, " L2");
		}
		if (isfinite(v = rec_num(e, "mem_bytes"))) {
			sb_add(&b, ", ");
			bytes_text(&b, v);
			sb_add(&b, " device memory");
		}
		sb_add(&b, ".\n");
		double sm = rec_num(e, "sm_clock_mhz"), smx = rec_num(e, "sm_clock_max_mhz"), mem = rec_num(e, "mem_clock_mhz");
		if (isfinite(sm) || isfinite(mem)) {
			sb_add(&b, "Clocks at the start of timing:");
			if (isfinite(sm))
				sb_printf(&b, " SM %.0f MHz", sm);
			if (isfinite(smx))
				sb_printf(&b, " (max %.0f MHz)", smx);
			if (isfinite(mem))
				sb_printf(&b, "%s memory %.0f MHz", isfinite(sm) ? "," : "", mem);
			sb_add(&b, ".\n");
		}
		const struct sm_limits *l = limits_of(e);
		if (l)
			sb_printf(&b, "Per SM (compute capability %d.%d): %d 32-bit registers, %d KiB shared memory, at most "
				      "%d resident threads (%d warps) and %d resident blocks.\n",
				  l->major, l->minor, l->regs, l->smem_kib, l->threads, l->threads / 32, l->blocks);
		const char *drv = rec_str(e, "driver");
		double rt = rec_num(e, "cuda_runtime");
		if (drv || isfinite(rt)) {
			sb_add(&b, "Software:");
			if (drv)
				sb_printf(&b, " driver %s", drv);
			if (isfinite(rt))
				sb_printf(&b, "%s CUDA runtime %d.%d", drv ? "," : "", (int)rt / 1000, ((int)rt % 1000) / 10);
			sb_add(&b, ".\n");
		}
	} else if (cpu) {
		sb_printf(&b, "CPU: %s", cpu);
		double v = rec_num(e, "cpus");
		if (isfinite(v))
			sb_printf(&b, ", %.0f logical CPUs online", v);
		if (rec_str(e, "kernel"))
			sb_printf(&b, ", Linux %s", rec_str(e, "kernel"));
		sb_add(&b, ".\n");
	} else if (e) {
		sb_printf(&b, "Device: %s (no further figures recorded).\n",
			  rec_str(e, "device") ? rec_str(e, "device") : "unnamed");
	} else {
		sb_add(&b, "No device detected yet: no timed record carries time.env.\n");
	}
	struct peaks p = peaks_of(c, rec);
	if (isfinite(p.gbps) || isfinite(p.gflops)) {
		sb_add(&b, "Measured peaks:");
		if (isfinite(p.gbps))
			sb_printf(&b, " %s GB/s copy bandwidth (device-to-device, bytes read + written)", fmt(x, sizeof x, p.gbps));
		if (isfinite(p.gflops))
			sb_printf(&b, "%s %s GFLOP/s fp32 (cuBLAS SGEMM)", isfinite(p.gbps) ? "," : "",
				  fmt(y, sizeof y, p.gflops));
		if (isfinite(p.gbps) && isfinite(p.gflops))
			sb_printf(&b, "; ridge point %s flop/byte: a task below it is memory-bound, above it compute-bound",
				  fmt(x, sizeof x, p.gflops / p.gbps));
		sb_add(&b, ".\n");
	} else if (e) {
		sb_add(&b, "No measured peaks for this device: no % of peak and no binding limit.\n");
	}
	const json_t *fl = rec_path(rec, "compile.flags");
	const char *cc = json_string_value(rec_path(rec, "compile.compiler"));
	if (cc || json_array_size(fl)) {
		sb_printf(&b, "Compiled by %s", cc ? cc : "the back end's compiler");
		size_t i;
		json_t *f;
		json_array_foreach(fl, i, f) {
			sb_printf(&b, "%s%s", i ? " " : " with: ", json_string_value(f) ? json_string_value(f) : "?");
		}
		sb_add(&b, "\n");
	} else if (!gpu && arch[0]) {
		sb_printf(&b, "Compiled for %s.\n", arch);
	}
	return done(&b);
}

/* ---- resources ---- */

char *fact_resources(const json_t *rec, const struct fact_ctx *c)
{
	struct strbuf b = STRBUF_INIT;
	const json_t *res = rec_path(rec, "compile.resources");
	const json_t *ks = json_object_get(res, "kernels");
	int hip = c->backend && strcmp(c->backend, "hip") == 0;
	if (!json_array_size(ks)) {
		if (c->backend && strcmp(c->backend, "c") == 0)
			sb_add(&b, "(the c back end reports no registers or shared memory)\n");
		else if (json_is_false(rec_path(rec, "compile.ok")))
			sb_add(&b, "(none: the kernel did not compile)\n");
		else
			sb_add(&b, "(not reported: the compile log named no kernel)\n");
		return done(&b);
	}
	size_t i;
	json_t *k;
	json_array_foreach(ks, i, k) {
		if (i == 8) {
			sb_printf(&b, "- ... and %zu more kernels\n", json_array_size(ks) - 8);
			break;
		}
		const char *name = rec_str(k, "name");
		sb_printf(&b, "- kernel %s: ", name ? name : "?");
		double r = rec_num(k, "registers"), sg = rec_num(k, "sgprs"), sm = rec_num(k, "smem_bytes");
		double st = rec_num(k, "stack_bytes"), ss = rec_num(k, "spill_stores"), sl = rec_num(k, "spill_loads");
		if (isfinite(r))
			sb_printf(&b, "%.0f %s", r, hip ? "VGPRs" : "registers/thread");
		if (isfinite(sg))
			sb_printf(&b, ", %.0f SGPRs", sg);
		if (isfinite(sm))
			sb_printf(&b, ", %.0f B %s", sm, hip ? "LDS/block" : "static shared memory/block");
		if (isfinite(st))
			sb_printf(&b, ", %.0f B %s", st, hip ? "scratch/lane" : "stack frame");
		if ((isfinite(ss) && ss > 0) || (isfinite(sl) && sl > 0)) {
			sb_printf(&b, ", SPILLS: %.0f B stored", isfinite(ss) ? ss : 0);
			if (isfinite(sl))
				sb_printf(&b, ", %.0f B loaded", sl);
			sb_add(&b, " (local memory traffic)");
		} else if (isfinite(ss) || isfinite(sl)) {
			sb_add(&b, ", no spills");
		}
		sb_add(&b, "\n");
	}
	const struct sm_limits *l = hip ? NULL : limits_of(c->env);
	double reg = rec_num(res, "max_registers"), smem = rec_num(res, "max_smem_bytes");
	if (hip) {
		sb_add(&b, "Occupancy: not estimated for hip.\n");
	} else if (!l) {
		sb_add(&b, "Occupancy: not estimated (compute capability unknown or not in ksci's table).\n");
	} else {
		int maxw = l->threads / 32;
		sb_add(&b, "Occupancy bound (the block size is not known here):");
		if (isfinite(reg) && reg > 0) {
			/* Registers are allocated per warp in units of 256 (8 per thread). */
			int per_warp = ((int)reg + 7) / 8 * 8 * 32;
			int w = l->regs / per_warp;
			w = w > maxw ? maxw : w;
			sb_printf(&b, " %.0f registers/thread allow at most %d of %d warps per SM (%.0f%%)", reg, w, maxw,
				  100.0 * w / maxw);
		}
		if (isfinite(smem) && smem > 0) {
			/* From compute capability 8.0 the system keeps 1 KiB per block. */
			double per_block = smem + (l->major >= 8 ? 1024 : 0);
			int nb = (int)(l->smem_kib * 1024.0 / per_block);
			nb = nb > l->blocks ? l->blocks : nb;
			sb_printf(&b, "%s %.0f B static shared memory/block allow at most %d blocks per SM",
				  isfinite(reg) && reg > 0 ? ";" : "", smem, nb);
		} else {
			sb_printf(&b, "%s no static shared memory (dynamic shared memory is not counted here)",
				  isfinite(reg) && reg > 0 ? ";" : "");
		}
		sb_add(&b, ".\n");
	}
	return done(&b);
}
