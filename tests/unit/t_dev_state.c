/* Unit tests for dev_state_moved (lib/dev_state.c): when a size's anchor no
 * longer serves because the device's state moved, and what it says moved.
 * anchor-renewed-by-load-transient: on an H200 a candidate timed after a
 * compile's idle read 8-10 °C under an anchor timed hot, and with an 8 °C
 * tolerance the anchor was renewed (0.5 s) for 2 and 4 of 16 candidates in
 * two latency passes (docs/gpu.md, twenty-first session); 9.5 °C now keeps
 * it, 16 °C does not. */
#include <math.h>
#include <string.h>

#include "dev.h"
#include "t.h"

int main(void)
{
	char m[128];
	struct dev_state anchor = {.sm_mhz = 1980, .mem_mhz = 3201, .temp_c = 56.5, .power_w = 400};
	struct dev_state now = anchor;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0 && m[0] == '\0', "the same state: not moved, nothing said");

	now.temp_c = 47;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0,
	     "anchor-renewed-by-load-transient: 9.5 °C cooler (a GPU idle through a compile) keeps the anchor");
	now.temp_c = 71.5;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0, "15 °C warmer, at the tolerance: kept");
	now.temp_c = 40;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 1 && strcmp(m, "temperature 40 °C, the anchor's 56.5") == 0,
	     "16.5 °C cooler: moved, both temperatures said (%s)", m);
	now.temp_c = NAN;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0, "a temperature the device cannot tell is not compared");

	now = anchor;
	now.sm_mhz = 1950;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0, "SM clock 1.5 %% lower: kept");
	now.sm_mhz = 1935;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 1 && strcmp(m, "SM clock 1935 MHz, the anchor's 1980") == 0,
	     "SM clock 2.3 %% lower: moved (%s)", m);
	now = anchor;
	now.mem_mhz = 3100;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 1 && strcmp(m, "memory clock 3100 MHz, the anchor's 3201") == 0,
	     "memory clock 3.2 %% lower: moved (%s)", m);
	now.sm_mhz = 1800, now.temp_c = 90;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 1 && strncmp(m, "SM clock", 8) == 0,
	     "several moved: the SM clock said first (%s)", m);

	struct dev_state unknown = {.sm_mhz = 0, .mem_mhz = 0, .temp_c = NAN};
	T_OK(dev_state_moved(&now, &unknown, m, sizeof m) == 0, "an anchor whose SM clock is not known: nothing compared");
	T_OK(dev_state_moved(&unknown, &anchor, m, sizeof m) == 0, "a state whose SM clock is not known: nothing compared");
	now = anchor, now.sm_mhz = NAN;
	T_OK(dev_state_moved(&now, &anchor, m, sizeof m) == 0, "a NaN SM clock: nothing compared");

	char small[8];
	now = anchor, now.temp_c = 20;
	T_OK(dev_state_moved(&now, &anchor, small, sizeof small) == 1 && strlen(small) == 7,
	     "a short buffer: moved, what moved cut to fit");
	return T_DONE();
}
