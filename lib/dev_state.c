/*
 * dev_state: whether the device's state moved from an anchor's (lib/dev.h).
 *
 * The clocks by 2 %: the time of a kernel follows its clock.  The temperature
 * by 15 °C, not the 8 it was until the twenty-first session: within one
 * timing from idle the GPU's temperature spans 15 °C (matmul 4096^3 on an
 * H200: 41 -> 56 °C), so a candidate timed after a compile's idle read
 * 8-10 °C under an anchor timed hot, and the anchor was renewed for 2 and 4
 * of 16 candidates in two latency passes (0.5 s each), each time hot again;
 * at locked clocks the seed's time followed the temperature by 0.011 %/°C
 * (r 0.32, 73 runs at 49-60 °C) at 4096^3 and not at all at 6144x3072x2048
 * (r -0.02), and the anchor carries the baseline by the seed's drift
 * (docs/gpu.md, "Throughput", twenty-first session).
 */
#include <math.h>
#include <stdio.h>

#include "dev.h"

int dev_state_moved(const struct dev_state *now, const struct dev_state *then, char *moved, size_t n)
{
	moved[0] = '\0';
	if (!(then->sm_mhz > 0) || !(now->sm_mhz > 0))
		return 0;
	if (fabs(now->sm_mhz - then->sm_mhz) > DEV_CLOCK_TOL * then->sm_mhz)
		snprintf(moved, n, "SM clock %g MHz, the anchor's %g", now->sm_mhz, then->sm_mhz);
	else if (fabs(now->mem_mhz - then->mem_mhz) > DEV_CLOCK_TOL * then->mem_mhz)
		snprintf(moved, n, "memory clock %g MHz, the anchor's %g", now->mem_mhz, then->mem_mhz);
	else if (fabs(now->temp_c - then->temp_c) > DEV_TEMP_TOL_C)
		snprintf(moved, n, "temperature %g °C, the anchor's %g", now->temp_c, then->temp_c);
	return moved[0] != '\0';
}
