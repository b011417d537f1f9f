/*
 * dev_cuda: the device layer for the `cuda` back end (struct dev_ops, see
 * harness.h).  Candidates follow the LeetGPU convention: solve() receives
 * device pointers and launches on the default stream.  Candidates are built
 * with `-cudart shared`, so they and this file share one CUDA runtime: a
 * launch error a candidate leaves behind is seen by cudaGetLastError here.
 *
 * Every runtime call is checked; after every candidate call come
 * cudaGetLastError and a full cudaDeviceSynchronize, so an illegal address
 * or a launch failure becomes the call's error, with CUDA's own message.
 *
 * Timing: per call, CUDA events on the default stream bracket fn(), and the
 * host clock brackets the same region from a full device sync before to a
 * full device sync after.  Events alone miss work the candidate left on a
 * non-blocking stream; the host clock alone carries launch overhead.  We
 * report the event time, unless the host time exceeds it by more than the
 * call path's own overhead (measured at init with an empty call) plus slack:
 * then the call reports the host time and returns 1, and the harness fails
 * the candidate if that happens on more than a tenth of its calls.
 *
 * Between timed calls flush() overwrites a buffer of twice the L2 size and
 * resets persisting L2 lines; the persisting-L2 limit is set to 0 at init.
 * peak() measures device-to-device copy bandwidth and the cuBLAS SGEMM rate
 * once per device (cuBLAS and NVML are dlopen'ed: neither is needed to run)
 * and caches them under <cache>/device/.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "file.h"
#include "dev.h"
#include "envknob.h"
#include "proc.h"

static struct {
	int dev;
	cudaEvent_t ev0, ev1;
	void *flushbuf;
	size_t flushbytes;
	double dram_gbps; /* the DRAM's rated bandwidth (NVML), 0: unknown */
	unsigned char flushval;
	json_t *env;
	struct cudaDeviceProp prop;
	/* NVML, kept open for state(): NULL when it could not be loaded. */
	void *nvdev;
	int (*clk)(void *, int, unsigned *);
	int (*temp)(void *, int, unsigned *);
	int (*power)(void *, unsigned *);
	int (*reasons)(void *, unsigned long long *);
} G;

#define CK(call, what)                                                                                     \
	do {                                                                                               \
		cudaError_t ck_ = (call);                                                                  \
		if (ck_ != cudaSuccess)                                                                    \
			return errf(e, "%s: CUDA error %d %s: %s", what, (int)ck_, cudaGetErrorName(ck_),  \
				    cudaGetErrorString(ck_));                                              \
	} while (0)

/* NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 */
static int c_state(struct dev_state *st)
{
	*st = (struct dev_state){NAN, NAN, NAN, NAN, 0};
	if (!G.nvdev)
		return -1;
	unsigned v;
	unsigned long long r;
	if (G.clk && G.clk(G.nvdev, 1, &v) == 0)
		st->sm_mhz = v;
	if (G.clk && G.clk(G.nvdev, 2, &v) == 0)
		st->mem_mhz = v;
	if (G.temp && G.temp(G.nvdev, 0, &v) == 0)
		st->temp_c = v;
	if (G.power && G.power(G.nvdev, &v) == 0)
		st->power_w = v / 1000.0;
	if (G.reasons && G.reasons(G.nvdev, &r) == 0)
		st->limits = r;
	return 0;
}

/* NVML, optional: clocks, driver string, temperature; its handles stay in G
 * for c_state(). */
static void nvml_facts(json_t *env)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	int (*init)(void);
	int (*bybus)(const char *, void **);
	int (*maxclk)(void *, int, unsigned *);
	int (*drv)(char *, unsigned);
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&bybus = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&G.clk = dlsym(h, "nvmlDeviceGetClockInfo");
	*(void **)&maxclk = dlsym(h, "nvmlDeviceGetMaxClockInfo");
	*(void **)&G.temp = dlsym(h, "nvmlDeviceGetTemperature");
	*(void **)&G.power = dlsym(h, "nvmlDeviceGetPowerUsage");
	*(void **)&G.reasons = dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!G.reasons)
		*(void **)&G.reasons = dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&drv = dlsym(h, "nvmlSystemGetDriverVersion");
	if (!init || init() != 0)
		return;
	char s[96];
	if (drv && drv(s, sizeof s) == 0)
		json_object_set_new(env, "driver", json_string(s));
	char bus[64];
	void *d = NULL;
	if (cudaDeviceGetPCIBusId(bus, sizeof bus, G.dev) != cudaSuccess || !bybus || bybus(bus, &d) != 0)
		return;
	G.nvdev = d;
	struct dev_state st;
	if (c_state(&st) == 0) {
		if (!isnan(st.sm_mhz))
			json_object_set_new(env, "sm_clock_mhz", json_integer((json_int_t)st.sm_mhz));
		if (!isnan(st.mem_mhz))
			json_object_set_new(env, "mem_clock_mhz", json_integer((json_int_t)st.mem_mhz));
		if (!isnan(st.temp_c))
			json_object_set_new(env, "temperature_c", json_integer((json_int_t)st.temp_c));
		if (!isnan(st.power_w))
			json_object_set_new(env, "power_w", json_real(st.power_w));
	}
	unsigned v, mem = 0, bits = 0;
	if (maxclk && maxclk(d, 1, &v) == 0)
		json_object_set_new(env, "sm_clock_max_mhz", json_integer(v));
	/* The DRAM's rated bandwidth: bus width x the highest memory clock x 2
	 * (double data rate) — 3352 GB/s on an H100 SXM (2619 MHz, 5120 bits),
	 * the bound no kernel's own bytes can beat, where a memcpy reaches 3.0. */
	int (*buswidth)(void *, unsigned *);
	*(void **)&buswidth = dlsym(h, "nvmlDeviceGetMemoryBusWidth");
	if (maxclk && buswidth && maxclk(d, 2, &mem) == 0 && buswidth(d, &bits) == 0 && mem > 0 && bits > 0)
		G.dram_gbps = 2.0 * mem * 1e6 * bits / 8 / 1e9;
}

static int c_init(char *e)
{
	int n = 0;
	cudaError_t r = cudaGetDeviceCount(&n);
	if (r != cudaSuccess || n == 0) {
		errf(e, "no CUDA device (cudaGetDeviceCount: %s)", r != cudaSuccess ? cudaGetErrorString(r) : "0 devices");
		(void)cudaGetLastError();
		return -2;
	}
	/* A device the machine lacks is the machine's "no device here", not a
	 * crash of the candidate (which the pipelines would send to be fixed). */
	G.dev = envknob_device();
	if (G.dev >= n) {
		errf(e, "no CUDA device %d here (KSCI_CUDA_DEVICE; %d visible)", G.dev, n);
		return -2;
	}
	CK(cudaSetDevice(G.dev), "cudaSetDevice");
	CK(cudaFree(0), "creating the CUDA context");
	CK(cudaGetDeviceProperties(&G.prop, G.dev), "cudaGetDeviceProperties");
	/* No persisting L2 carve-out: a candidate must not keep lines across calls. */
	if (G.prop.persistingL2CacheMaxSize > 0)
		CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "resetting the persisting-L2 limit");
	CK(cudaEventCreate(&G.ev0), "cudaEventCreate");
	CK(cudaEventCreate(&G.ev1), "cudaEventCreate");
	G.flushbytes = 2 * (size_t)(G.prop.l2CacheSize > 0 ? G.prop.l2CacheSize : 32 << 20);
	CK(cudaMalloc(&G.flushbuf, G.flushbytes), "allocating the L2 flush buffer");

	int rt = 0, dv = 0;
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&dv);
	G.env = json_pack("{s:s, s:s, s:i, s:s, s:i, s:I, s:I, s:i, s:i}", "device", "cuda", "gpu", G.prop.name,
			  "cuda_device", G.dev, "cc", "", "sms", G.prop.multiProcessorCount, "l2_bytes",
			  (json_int_t)G.prop.l2CacheSize, "mem_bytes", (json_int_t)G.prop.totalGlobalMem,
			  "cuda_runtime", rt, "cuda_driver_api", dv);
	json_object_set_new(G.env, "cc", json_sprintf("%d.%d", G.prop.major, G.prop.minor));
	/* Which physical GPU (cuda_device is an index among the visible ones):
	 * its UUID as nvidia-smi writes it, and its PCI address. */
	const unsigned char *u = (const unsigned char *)G.prop.uuid.bytes;
	char uuid[64] = "GPU-";
	for (int i = 0, k = 4; i < 16; i++)
		k += snprintf(uuid + k, sizeof uuid - (size_t)k, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
	json_object_set_new(G.env, "gpu_uuid", json_string(uuid));
	json_object_set_new(G.env, "pci_bus_id",
			    json_sprintf("%04x:%02x:%02x.0", G.prop.pciDomainID, G.prop.pciBusID, G.prop.pciDeviceID));
	nvml_facts(G.env);

	return 0;
}

static void *c_alloc(size_t n, char *e)
{
	void *p = NULL;
	cudaError_t r = cudaMalloc(&p, n);
	if (r != cudaSuccess) {
		errf(e, "cudaMalloc(%zu): CUDA error %d %s: %s", n, (int)r, cudaGetErrorName(r), cudaGetErrorString(r));
		return NULL;
	}
	return p;
}

static void c_release(void *p) { (void)cudaFree(p); }

static int c_to_dev(void *dst, const void *src, size_t n, char *e)
{
	CK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
	return 0;
}

static int c_to_host(void *dst, const void *src, size_t n, char *e)
{
	CK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy from the device (after the kernel)");
	return 0;
}

static int c_call(ksci_call_fn fn, void **args, char *e)
{
	fn(args);
	CK(cudaGetLastError(), "kernel launch");
	CK(cudaDeviceSynchronize(), "kernel execution");
	return 0;
}

static int c_flush(const void *p, size_t n, char *e)
{
	(void)p, (void)n; /* the whole L2: a memset of twice its size */
	CK(cudaMemsetAsync(G.flushbuf, G.flushval++, G.flushbytes, 0), "L2 flush");
	if (G.prop.persistingL2CacheMaxSize > 0)
		CK(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
	return 0;
}

static json_t *c_env(void) { return json_incref(G.env); }

/* --- peak rates, measured once per device --------------------------------- */

typedef int (*cublas_create_fn)(void **);
typedef int (*cublas_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
			       int, const float *, float *, int);
typedef int (*cublas_destroy_fn)(void *);

static double best_of(double *x, int n)
{
	double b = x[0];
	for (int i = 1; i < n; i++)
		b = x[i] < b ? x[i] : b;
	return b;
}

static int time_region_start(char *e)
{
	CK(cudaDeviceSynchronize(), "sync");
	CK(cudaEventRecord(G.ev0, 0), "cudaEventRecord");
	return 0;
}

static int time_region_end(double *s, char *e)
{
	CK(cudaEventRecord(G.ev1, 0), "cudaEventRecord");
	CK(cudaDeviceSynchronize(), "sync");
	float ms;
	CK(cudaEventElapsedTime(&ms, G.ev0, G.ev1), "cudaEventElapsedTime");
	*s = ms / 1e3;
	return 0;
}

static int measure_copy(double *gbps, char *e)
{
	size_t n = (size_t)1 << 30;
	void *a = NULL, *b = NULL;
	if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess) {
		cudaFree(a);
		(void)cudaGetLastError();
		return errf(e, "no memory for the bandwidth test");
	}
	double t[6];
	int rc = 0;
	CK(cudaMemset(a, 1, n), "memset");
	for (int i = 0; i < 6 && rc == 0; i++) {
		rc = time_region_start(e);
		if (!rc)
			rc = cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0) == cudaSuccess ? 0 : errf(e, "memcpy failed");
		if (!rc)
			rc = time_region_end(&t[i], e);
	}
	cudaFree(a);
	cudaFree(b);
	if (rc)
		return -1;
	*gbps = 2.0 * (double)n / best_of(t + 1, 5) / 1e9; /* read + write */
	return 0;
}

static int measure_sgemm(double *gflops, char *e)
{
	static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
					    "/usr/local/cuda/lib64/libcublas.so", NULL};
	void *h = NULL;
	for (int i = 0; names[i] && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return errf(e, "no cuBLAS: %s", dlerror());
	cublas_create_fn create;
	cublas_sgemm_fn sgemm;
	cublas_destroy_fn destroy;
	*(void **)&create = dlsym(h, "cublasCreate_v2");
	*(void **)&sgemm = dlsym(h, "cublasSgemm_v2");
	*(void **)&destroy = dlsym(h, "cublasDestroy_v2");
	void *hd = NULL;
	if (!create || !sgemm || !destroy || create(&hd) != 0)
		return errf(e, "cuBLAS unusable");
	const int n = 8192;
	size_t bytes = (size_t)n * n * sizeof(float);
	float *A = NULL, *B = NULL, *C = NULL;
	int rc = 0;
	if (cudaMalloc((void **)&A, bytes) != cudaSuccess || cudaMalloc((void **)&B, bytes) != cudaSuccess ||
	    cudaMalloc((void **)&C, bytes) != cudaSuccess)
		rc = errf(e, "no memory for the SGEMM test");
	/* Not zeros: random-ish bits make the rate realistic. 0x3c = ~0.01. */
	if (!rc && (cudaMemset(A, 0x3c, bytes) != cudaSuccess || cudaMemset(B, 0x3b, bytes) != cudaSuccess))
		rc = errf(e, "memset failed");
	const float one = 1, zero = 0;
	double t[4];
	for (int i = 0; i < 4 && !rc; i++) {
		rc = time_region_start(e);
		if (!rc && sgemm(hd, 0, 0, n, n, n, &one, A, n, B, n, &zero, C, n) != 0)
			rc = errf(e, "cublasSgemm failed");
		if (!rc)
			rc = time_region_end(&t[i], e);
	}
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	destroy(hd);
	if (rc)
		return -1;
	*gflops = 2.0 * n * (double)n * n / best_of(t + 1, 3) / 1e9;
	return 0;
}

static json_t *c_peak(void)
{
	char dir[PATH_MAX - 128], path[PATH_MAX], e[ERRBUF];
	char uuid[33];
	for (int i = 0; i < 16; i++)
		snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)G.prop.uuid.bytes[i]);
	int rt = 0;
	cudaRuntimeGetVersion(&rt);
	int have_dir = cache_dir("device", dir, sizeof dir, e) == 0;
	snprintf(path, sizeof path, "%s/cuda-%s-rt%d.json", dir, uuid, rt);
	if (have_dir) {
		json_t *j = json_load_file(path, 0, NULL);
		if (json_is_object(j)) {
			json_object_set_new(j, "cached", json_true());
			return j;
		}
		json_decref(j);
	}
	fprintf(stderr, "kharness: measuring this GPU's copy bandwidth and SGEMM rate (once per device)\n");
	json_t *j = json_pack("{s:s, s:s}", "gpu", G.prop.name, "uuid", uuid);
	double v = 0;
	if (measure_copy(&v, e) == 0)
		json_object_set_new(j, "copy_gbps", json_real(v));
	else
		json_object_set_new(j, "copy_error", json_string(e));
	if (measure_sgemm(&v, e) == 0)
		json_object_set_new(j, "sgemm_gflops", json_real(v));
	else
		json_object_set_new(j, "sgemm_error", json_string(e));
	json_object_set_new(j, "how", json_string("copy: best of 5 cudaMemcpy D2D of 1 GiB, bytes read+written; "
						  "sgemm: best of 3 cublasSgemm 8192^3, default (fp32) math"));
	char *txt = json_dumps(j, JSON_COMPACT);
	if (have_dir && txt)
		file_write_atomic(path, txt, strlen(txt), e);
	free(txt);
	json_object_set_new(j, "cached", json_false());
	return j;
}

/* The measured peaks, with the DRAM's rated bandwidth (NVML) beside them. */
static json_t *c_peak_all(void)
{
	json_t *j = c_peak();
	if (json_is_object(j) && G.dram_gbps > 0)
		json_object_set_new(j, "dram_gbps", json_real(G.dram_gbps));
	return j;
}

/* --- the judge's arena and batches (harness.h) ------------------------------ */

/* judge_dev.cu */
int cuda_fill(void *p, int dt, long long n, const struct gen_spec *s, char *e);
int cuda_poison(void *p, int byte, size_t n, uint64_t seed, char *e);
int cuda_compare(const void *got, const void *want, int dt, long long n, double atol, double rtol, long long *bad,
		 long long *first, double *max_abs, double *max_rel, int *got_varies, int *want_varies, char *e);
int cuda_equal(const void *a, const void *b, size_t bytes, int *same, char *e);

static int c_compare(const void *got, const void *want, int dt, int64_t n, double atol, double rtol, struct dev_cmp *r,
		     char *e)
{
	long long bad, first;
	if (cuda_compare(got, want, dt, (long long)n, atol, rtol, &bad, &first, &r->max_abs, &r->max_rel, &r->got_varies,
			 &r->want_varies, e) < 0)
		return -1;
	r->bad = bad, r->first = first;
	return 0;
}

static void *c_share(size_t n, int fd, unsigned char *handle, char *e)
{
	(void)fd;
	void *p = c_alloc(n, e);
	if (!p)
		return NULL;
	cudaIpcMemHandle_t h;
	cudaError_t r = cudaIpcGetMemHandle(&h, p);
	if (r != cudaSuccess) {
		errf(e, "cudaIpcGetMemHandle: %s", cudaGetErrorString(r));
		cudaFree(p);
		return NULL;
	}
	memcpy(handle, &h, sizeof h < 64 ? sizeof h : 64);
	return p;
}

static void c_unshare(void *p, size_t n)
{
	(void)n;
	(void)cudaFree(p);
}

static int c_copy(void *dst, const void *src, size_t n, char *e)
{
	CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0), "cudaMemcpy on the device");
	return 0;
}

static int c_set_bytes(void *p, int byte, size_t n, char *e)
{
	CK(cudaMemsetAsync(p, byte, n, 0), "cudaMemset");
	return 0;
}

static int c_gen(void *p, int dt, int64_t n, const struct gen_spec *s, char *e)
{
	return cuda_fill(p, dt, (long long)n, s, e);
}

static int c_sync(char *e)
{
	CK(cudaDeviceSynchronize(), "device sync");
	return 0;
}

/* A 4-byte memset and a sync: a few microseconds on an idle GPU; when
 * another process's work is still running, it waits for a time slice. */
static int c_probe(double *s, char *e)
{
	double t0 = proc_now();
	CK(cudaMemsetAsync(G.flushbuf, 0, 4, 0), "probe");
	CK(cudaStreamSynchronize(0), "probe");
	*s = proc_now() - t0;
	return 0;
}

static int c_mem_info(size_t *free_b, size_t *total_b, char *e)
{
	CK(cudaMemGetInfo(free_b, total_b), "cudaMemGetInfo");
	return 0;
}

static int c_init_child(char *e)
{
	G.dev = envknob_device();
	CK(cudaSetDevice(G.dev), "cudaSetDevice");
	CK(cudaFree(0), "creating the CUDA context");
	CK(cudaEventCreate(&G.ev0), "cudaEventCreate");
	CK(cudaEventCreate(&G.ev1), "cudaEventCreate");
	return 0;
}

static void *c_open_shared(const unsigned char *handle, int fd, size_t n, char *e)
{
	(void)fd;
	(void)n;
	cudaIpcMemHandle_t h;
	memcpy(&h, handle, sizeof h < 64 ? sizeof h : 64);
	void *p = NULL;
	cudaError_t r = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
	if (r != cudaSuccess) {
		errf(e, "cudaIpcOpenMemHandle: %s", cudaGetErrorString(r));
		return NULL;
	}
	return p;
}

static void c_close_shared(void *p, size_t n)
{
	(void)n;
	(void)cudaIpcCloseMemHandle(p);
}

static int c_batch_begin(char *e)
{
	CK(cudaEventRecord(G.ev0, 0), "cudaEventRecord");
	return 0;
}

static int c_batch_end(double *event_s, char *e)
{
	CK(cudaGetLastError(), "kernel launch");
	CK(cudaEventRecord(G.ev1, 0), "cudaEventRecord (after the calls)");
	CK(cudaDeviceSynchronize(), "kernel execution");
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, G.ev0, G.ev1), "cudaEventElapsedTime");
	*event_s = ms / 1e3;
	return 0;
}

const struct dev_ops dev_cuda = {
	.name = "cuda",
	.init = c_init,
	.alloc = c_alloc,
	.release = c_release,
	.to_dev = c_to_dev,
	.to_host = c_to_host,
	.call = c_call,
	.flush = c_flush,
	.env = c_env,
	.peak = c_peak_all,
	.state = c_state,
	.mem_info = c_mem_info,
	.share = c_share,
	.unshare = c_unshare,
	.copy = c_copy,
	.set_bytes = c_set_bytes,
	.poison = cuda_poison,
	.gen = c_gen,
	.sync = c_sync,
	.probe = c_probe,
	.compare = c_compare,
	.equal = cuda_equal,
	.init_child = c_init_child,
	.open_shared = c_open_shared,
	.close_shared = c_close_shared,
	.batch_begin = c_batch_begin,
	.batch_end = c_batch_end,
};
