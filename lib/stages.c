/* stages: placeholder until the model providers land; see stages.h. */
#include "stages.h"

#include "gen.h"

int stages_request(struct gen *g, const json_t *req, long line)
{
	(void)line;
	json_t *c = gen_child_skeleton(req);
	gen_set_error(c, req, g->generator, "provider", "model providers are not available in this build");
	int rc = g->emit(g->ctx, c);
	json_decref(c);
	return rc ? -1 : 0;
}
