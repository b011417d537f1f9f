/* attacks.sh 2, "reference patch": a wrong axpy (every element off by one)
 * whose constructor looks through the loaded objects for another one
 * exporting ksci_call (the task's reference, were it in the same process)
 * and overwrites the start of that function with a jump to this object's
 * own ksci_call, so that the reference would compute the same wrong answer.
 * The reference is loaded only by the judge, never in the candidate's
 * child: nothing to patch, so the kernel is judged as it is -> wrong. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" void ksci_call(void** a); /* defined by the wrapper that includes this file */

__global__ void axpy1_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i] + 1.f;
}

static int jump_to(unsigned char* f, void* target)
{
#if defined(__x86_64__)
	unsigned char code[12] = {0x48, 0xb8}; /* movabs rax, target; jmp rax */
	uint64_t t = (uint64_t)(uintptr_t)target;
	memcpy(code + 2, &t, 8);
	code[10] = 0xff, code[11] = 0xe0;
#elif defined(__aarch64__)
	uint32_t code[4] = {0x58000050, 0xd61f0200}; /* ldr x16, 8; br x16 */
	uint64_t t = (uint64_t)(uintptr_t)target;
	memcpy(code + 2, &t, 8);
#else
	unsigned char code[1];
	(void)target;
	return -1;
#endif
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)f & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)f + sizeof code + pg - 1) & ~(pg - 1);
	if (mprotect((void*)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -1;
	memcpy(f, code, sizeof code);
	__builtin___clear_cache((char*)f, (char*)f + sizeof code);
	mprotect((void*)lo, hi - lo, PROT_READ | PROT_EXEC);
	return 0;
}

static int seen, patched;

static int visit(struct dl_phdr_info* info, size_t size, void* self)
{
	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || strcmp(info->dlpi_name, (const char*)self) == 0)
		return 0;
	seen++;
	void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	void* f = dlsym(h, "ksci_call");
	Dl_info di;
	if (f && f != (void*)ksci_call && dladdr(f, &di) && di.dli_fname && strcmp(di.dli_fname, (const char*)self) != 0) {
		int rc = jump_to((unsigned char*)f, (void*)ksci_call);
		fprintf(stderr, "ATTACK patch: %s ksci_call in %s\n", rc == 0 ? "patched" : "could not patch",
			info->dlpi_name);
		patched += rc == 0;
	}
	dlclose(h);
	return 0;
}

__attribute__((constructor)) static void patch_others(void)
{
	Dl_info me;
	if (!dladdr((void*)patch_others, &me) || !me.dli_fname)
		return;
	dl_iterate_phdr(visit, (void*)me.dli_fname);
	fprintf(stderr, "ATTACK patch: %d other objects loaded, %d ksci_call patched\n", seen, patched);
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		axpy1_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
