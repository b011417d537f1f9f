/*
 * llm: one call to a language model, whatever the provider — OpenAI Chat
 * Completions (and everything that speaks it: vLLM, llama.cpp, Ollama,
 * OpenRouter, Gemini's compatible endpoint), Anthropic Messages, a local
 * command (prompt on stdin, answer on stdout), or replay of a recorded
 * transcript.  docs/providers.md documents the flags and environment.
 *
 * llm_complete does everything around the call: the on-disk cache keyed by
 * (model, system, prompt, parameters), a bound on concurrent calls across
 * processes (lock slots in the cache directory), retries with exponential
 * backoff and jitter on 408/409/429/5xx/529 honouring Retry-After, no retry
 * on authentication or quota errors, accounting (tokens, latency, cost from
 * a price table by lib/price.h's rule: an answer from the cache or a replay
 * costs 0 and shows what it saved), a gzip transcript entry for every
 * exchange, and one line in the ledger for every call, whatever its outcome,
 * written when the call ends (docs/providers.md "Accounting").
 *
 * Ownership: the config's strings are borrowed for the call.  A reply's
 * strings and its json are owned by the reply; llm_reply_free releases them
 * (also after a failure, which may have filled some).  Nothing here prints
 * or exits; on failure llm_complete returns -1, reply->reason holds a
 * static reason word (docs/tools/kgen.md) and errbuf a message for people.
 */
#ifndef KSCI_LLM_H
#define KSCI_LLM_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"

struct llm_config {
	const char *provider; /* "openai", "anthropic", "cmd", "replay" */
	const char *model;    /* NULL: $KSCI_MODEL, else a provider default */
	const char *base_url; /* NULL: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL / public API */
	const char *api_key;  /* NULL: $OPENAI_API_KEY / $ANTHROPIC_API_KEY */
	const char *anthropic_version; /* NULL: "2023-06-01" */
	const char *command;  /* cmd: run with sh -c, prompt on stdin */
	const char *replay;   /* replay: transcript file(s), ':'-separated */
	/* Tag stored with each exchange ("plan.txt:<base id>:<generation>:<child>",
	 * "select:<task>:<generation>:<child>").  Replay
	 * answers by exact prompt first; when the prompt differs (it holds fresh
	 * timings after a re-run), by this tag, in recorded order. */
	const char *replay_key;
	/* The sample this call is for (a child's own seed), part of the cache
	 * key, so that two children asking the same prompt each get an answer
	 * of their own instead of the first one's again; NULL for a call that
	 * children share (the plan). */
	const char *sample;
	double temperature;   /* < 0: not sent */
	long max_tokens;      /* <= 0: 4096 */
	/* openai: 0 chooses max_completion_tokens for o1/o3/o4/gpt-5 models and
	 * max_tokens otherwise; 1 forces max_tokens; 2 max_completion_tokens. */
	int token_param;
	long long seed;       /* sent when have_seed (openai) */
	int have_seed;
	int n;                /* openai: choices per call (>= 1) */
	double connect_timeout; /* seconds; <= 0: 10 */
	double timeout;         /* whole call, seconds; <= 0: 600 */
	int max_retries;        /* < 0: 4 */
	double backoff_base;    /* seconds; <= 0: 1 */
	double backoff_max;     /* seconds; <= 0: 60 */
	int max_concurrent;     /* <= 0: 4 */
	const char *cache_dir;  /* NULL: no cache, no concurrency bound */
	int no_cache;           /* read nothing from the cache (still writes) */
	const char *transcript; /* gzip NDJSON file appended per exchange; NULL: none */
	const char *prices;     /* price table file (lib/price.h, the one kreport reads); NULL: $KSCI_PRICES, else no cost */
	/* The ledger: one NDJSON line appended per call (O_APPEND, one write)
	 * when the call ends.  NULL: $KSCI_LEDGER, else none. */
	const char *ledger;
	const char *tool;       /* the ledger's "tool"; NULL: the program's name (err_prog) */
	const char *stage;      /* the ledger's "stage" ("plan", "select"...); NULL: "call" */
	const char *ref;        /* what the call is for, in the ledger; NULL: replay_key */
	uint64_t jitter_seed;   /* for backoff jitter */
};

struct llm_reply {
	char *text;           /* first choice */
	char **choices;       /* all choices (n > 1), choices[0] == text */
	int nchoices;
	char *model;          /* as the server reported it */
	char *finish;         /* finish_reason / stop_reason */
	long tokens_in, tokens_out;
	double latency_s;     /* this call, including retries and waits */
	double cost_usd;      /* what the call cost: 0 when not bought (cached, replayed), NAN when no price is known */
	double saved_usd;     /* not bought: what it would have cost (NAN: no price); NAN otherwise */
	char call_id[17];     /* 16 hex digits naming this call in the record and the ledger */
	char prompt_hash[65]; /* sha256 of system "\0" prompt */
	char key[65];         /* cache key */
	int cached;           /* answer came from the cache */
	int replayed;         /* answer came from a replayed transcript */
	int attempts;         /* HTTP attempts made */
	int http_status;      /* last status, 0 if none */
	json_t *exchange;     /* {"file","offset","sha"} of the transcript entry, or NULL */
	const char *reason;   /* failure reason word, NULL on success */
	int ledger_errno;     /* the ledger line could not be written (errno), else 0 */
};

/* The model providers, in one list: "openai", "anthropic", "cmd", "replay",
 * then NULL (kgen's offline "mutate" generator is not one). */
extern const char *const llm_providers[];
/* Whether p names one of them (NULL: no). */
int llm_provider_known(const char *p);

/* Fill defaults from the environment for fields left empty. */
void llm_config_defaults(struct llm_config *c);
/* Where a tool's model calls leave what they leave, the same for every
 * tool that calls a model (kgen, kselect): the answer cache in cache_opt
 * (--cache DIR, created), else the shared cache's llm/ (lib/cache.h); the
 * transcript c->transcript (--transcript), else $KSCI_TRANSCRIPT, else
 * CACHE/transcript.ndjson.gz, so one run's calls land in one file whichever
 * tool made them; the price table c->prices, else $KSCI_PRICES.  Then
 * llm_config_defaults, and what the provider needs: cmd a command, replay
 * a transcript (-1 with *usage set: the user's error, not the machine's).
 * The paths are written into *st, which must outlive c.  0, or -1 + errbuf. */
struct llm_store {
	char cache[4096];
	char transcript[4200];
};
int llm_config_setup(struct llm_config *c, const char *cache_opt, struct llm_store *st, int *usage, char *errbuf);
/* 0 and a reply; -1, reply->reason and errbuf. */
int llm_complete(const struct llm_config *c, const char *system, const char *prompt, struct llm_reply *r,
		 char *errbuf);
void llm_reply_free(struct llm_reply *r);
/* The accounting object for a record: {"stage","provider","model",
 * "tokens_in","tokens_out","latency_s","cost_usd","prompt_hash","cached",
 * "attempts","finish","exchange","call_id"}, "model_asked" when the server
 * reported another model than the one asked for, "replayed" and
 * "saved_usd" for an answer not bought, "reason" for a failure and
 * "ledger_error" when its ledger line could not be written (new reference). */
json_t *llm_reply_json(const struct llm_config *c, const struct llm_reply *r, const char *stage);
/* origin.usage of a set of such objects (a JSON array): lib/price.h's
 * accounting rule, with the costs the calls state (new reference). */
json_t *llm_usage_json(const json_t *calls);

/* Pieces exposed for tests. */
/* Seconds to wait before retry `attempt` (0-based): Retry-After when >= 0
 * (capped at max), else min(max, base * 2^attempt) scaled by a jitter in
 * [0.5, 1) drawn from *rng. */
double llm_backoff(int attempt, double base, double max, double retry_after, uint64_t *rng);
/* Retry-After value: delta-seconds or an HTTP-date; -1 if unusable. */
double llm_parse_retry_after(const char *v, long now);
/* Whether an HTTP status is worth retrying. */
int llm_retryable(long status);
/* Reason word for a failed HTTP status and its body: "auth", "quota",
 * "rate_limited", "server_error", "overloaded", "timeout", "bad_request". */
const char *llm_status_reason(long status, const char *body);
/* Cache key (64 hex) of a call. */
void llm_cache_key(const struct llm_config *c, const char *system, const char *prompt, char out[65]);
/* Read one transcript entry back: {"request","response",...} (new reference). */
json_t *llm_transcript_read(const char *file, long long offset, char *errbuf);

#endif
