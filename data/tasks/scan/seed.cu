// scan seed: single pass with decoupled look-back (Merrill & Garland).
// Each block takes a tile of THREADS * ITEMS elements in the order it was
// scheduled (a global ticket, so earlier tiles are always running), scans it
// in registers and shared memory, publishes its aggregate, looks back over
// predecessors' published aggregates/prefixes, and publishes its inclusive
// prefix.  Status words pack (flag << 32 | value) so one 64-bit store
// publishes both.  The ticket and status array live in a static buffer
// cleared with cudaMemsetAsync on the default stream before each launch.
#define THREADS 256  // ktune: 128 256 512
#define ITEMS 8      // ktune: 4 8 12 16

#define FLAG_AGG 1ULL
#define FLAG_PREFIX 2ULL

__device__ __forceinline__ int warp_incl(int v)
{
	int lane = threadIdx.x & 31;
	for (int o = 1; o < 32; o <<= 1) {
		int u = __shfl_up_sync(0xffffffffu, v, o);
		if (lane >= o)
			v += u;
	}
	return v;
}

__global__ void __launch_bounds__(THREADS) scan_seed(const int* __restrict__ x, int* __restrict__ y, long n,
		unsigned long long* status, unsigned int* ticket)
{
	__shared__ int warp_tot[THREADS / 32];
	__shared__ int tile_id_s, prefix_s;
	if (threadIdx.x == 0)
		tile_id_s = atomicAdd(ticket, 1u);
	__syncthreads();
	long tile = tile_id_s;
	long base = tile * (THREADS * ITEMS);
	int v[ITEMS];
	// Blocked arrangement: thread t owns ITEMS consecutive elements.
	long my = base + (long)threadIdx.x * ITEMS;
	int run = 0;
#pragma unroll
	for (int k = 0; k < ITEMS; k++) {
		v[k] = my + k < n ? x[my + k] : 0;
		run += v[k];
		v[k] = run;
	}
	int incl = warp_incl(run);
	int lane = threadIdx.x & 31, wid = threadIdx.x / 32;
	if (lane == 31)
		warp_tot[wid] = incl;
	__syncthreads();
	if (wid == 0) {
		int t = lane < THREADS / 32 ? warp_tot[lane] : 0;
		t = warp_incl(t);
		if (lane < THREADS / 32)
			warp_tot[lane] = t;
	}
	__syncthreads();
	int tile_total = warp_tot[THREADS / 32 - 1];
	int excl = incl - run + (wid ? warp_tot[wid - 1] : 0);
	if (threadIdx.x == 0) {
		int prefix = 0;
		if (tile == 0) {
			atomicExch(&status[0], (FLAG_PREFIX << 32) | (unsigned)tile_total);
		} else {
			atomicExch(&status[tile], (FLAG_AGG << 32) | (unsigned)tile_total);
			for (long p = tile - 1;; ) {
				unsigned long long s = atomicAdd(&status[p], 0ULL);
				unsigned long long f = s >> 32;
				if (f == 0)
					continue; // predecessor has not published yet: spin
				prefix += (int)(unsigned)(s & 0xffffffffu);
				if (f == FLAG_PREFIX)
					break;
				p--;
			}
			atomicExch(&status[tile], (FLAG_PREFIX << 32) | (unsigned)(prefix + tile_total));
		}
		prefix_s = prefix;
	}
	__syncthreads();
	int off = prefix_s + excl;
#pragma unroll
	for (int k = 0; k < ITEMS; k++)
		if (my + k < n)
			y[my + k] = v[k] + off;
}

static unsigned long long* status_buf;
static long status_len;

extern "C" void solve(const int* x, int* y, int n)
{
	if (n <= 0)
		return;
	long tiles = ((long)n + THREADS * ITEMS - 1) / (THREADS * ITEMS);
	if (tiles + 1 > status_len) {
		cudaFree(status_buf);
		cudaMalloc(&status_buf, sizeof(unsigned long long) * (tiles + 1));
		status_len = tiles + 1;
	}
	cudaMemsetAsync(status_buf, 0, sizeof(unsigned long long) * (tiles + 1), 0);
	scan_seed<<<(unsigned)tiles, THREADS>>>(x, y, n, status_buf, (unsigned int*)(status_buf + tiles));
}
