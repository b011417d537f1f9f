/*
 * llm: providers, retry policy, cache, accounting; see llm.h.
 *
 * One call goes: cache lookup -> concurrency slot -> provider (with retries
 * for the HTTP ones) -> transcript entry -> cache store.  The transcript is a
 * file of gzip members, one per exchange, appended under flock, so that a
 * record can name an exchange by byte offset and readers can inflate just
 * that member; replay reads the same files back.  The cache stores the
 * reply together with the pointer to the exchange that first produced it,
 * so a cached answer still points at a real prompt/response pair.
 *
 * llm_complete wraps the call (complete) in the accounting, done in one
 * place for every outcome: the cost by lib/price's rule (an answer from the
 * cache or a replay costs 0 and its price is what it saved), a call id, and
 * the ledger line.  The ledger line is one write(2) on an O_APPEND
 * descriptor made as the call ends, so that lines of concurrent kgen and
 * kselect processes never mix, and a generation killed after the call still
 * leaves its spend there.
 */
#include "llm.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cache.h"
#include "file.h"
#include "http.h"
#include "ndjson.h"
#include "price.h"
#include "proc.h"
#include "sha256.h"
#include "strbuf.h"

const char *const llm_providers[] = {"openai", "anthropic", "cmd", "replay", NULL};

int llm_provider_known(const char *p)
{
	for (int i = 0; p && llm_providers[i]; i++)
		if (strcmp(p, llm_providers[i]) == 0)
			return 1;
	return 0;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static const char *env_or(const char *v, const char *name, const char *def)
{
	if (v && *v)
		return v;
	const char *e = name ? getenv(name) : NULL;
	return e && *e ? e : def;
}

void llm_config_defaults(struct llm_config *c)
{
	if (!c->provider)
		c->provider = env_or(NULL, "KSCI_PROVIDER", "openai");
	int anth = strcmp(c->provider, "anthropic") == 0;
	c->model = env_or(c->model, "KSCI_MODEL", anth ? "claude-sonnet-4-5" : strcmp(c->provider, "openai") == 0 ? "gpt-4o" : c->provider);
	if (anth) {
		c->base_url = env_or(c->base_url, "ANTHROPIC_BASE_URL", "https://api.anthropic.com");
		c->api_key = env_or(c->api_key, "ANTHROPIC_API_KEY", NULL);
	} else {
		c->base_url = env_or(c->base_url, "OPENAI_BASE_URL", "https://api.openai.com/v1");
		c->api_key = env_or(c->api_key, "OPENAI_API_KEY", NULL);
	}
	c->anthropic_version = env_or(c->anthropic_version, "ANTHROPIC_VERSION", "2023-06-01");
	c->command = env_or(c->command, "KSCI_LLM_CMD", NULL);
	c->replay = env_or(c->replay, "KSCI_REPLAY", NULL);
	c->ledger = env_or(c->ledger, "KSCI_LEDGER", NULL);
	c->prices = env_or(c->prices, "KSCI_PRICES", NULL);
	if (c->max_tokens <= 0)
		c->max_tokens = 4096;
	if (c->n < 1)
		c->n = 1;
	if (c->connect_timeout <= 0)
		c->connect_timeout = 10;
	if (c->timeout <= 0)
		c->timeout = 600;
	if (c->max_retries < 0)
		c->max_retries = 4;
	if (c->backoff_base <= 0)
		c->backoff_base = 1;
	if (c->backoff_max <= 0)
		c->backoff_max = 60;
	if (c->max_concurrent <= 0)
		c->max_concurrent = 4;
}

int llm_config_setup(struct llm_config *c, const char *cache_opt, struct llm_store *st, int *usage, char *errbuf)
{
	char e[ERRBUF];
	int bad;
	*usage = 0;
	if (!cache_opt)
		bad = cache_dir("llm", st->cache, sizeof st->cache, e);
	else if (snprintf(st->cache, sizeof st->cache, "%s", cache_opt) >= (int)sizeof st->cache)
		bad = errf(e, "--cache: path too long");
	else
		bad = file_mkdirp(st->cache, e);
	if (bad)
		return errf(errbuf, "cache: %s", e);
	c->cache_dir = st->cache;
	c->transcript = env_or(c->transcript, "KSCI_TRANSCRIPT", NULL);
	if (!c->transcript) {
		snprintf(st->transcript, sizeof st->transcript, "%s/transcript.ndjson.gz", st->cache);
		c->transcript = st->transcript;
	}
	c->prices = env_or(c->prices, "KSCI_PRICES", NULL);
	llm_config_defaults(c);
	*usage = 1;
	if (strcmp(c->provider, "cmd") == 0 && !c->command)
		return errf(errbuf, "--provider cmd needs --cmd COMMAND (or KSCI_LLM_CMD)");
	if (strcmp(c->provider, "replay") == 0 && !c->replay)
		return errf(errbuf, "--provider replay needs --replay FILE (or KSCI_REPLAY)");
	*usage = 0;
	return 0;
}

/* ---- policy pieces ---- */

double llm_backoff(int attempt, double base, double max, double retry_after, uint64_t *rng)
{
	if (retry_after >= 0)
		return retry_after < max ? retry_after : max;
	double d = base * pow(2.0, attempt > 30 ? 30 : attempt);
	if (d > max)
		d = max;
	/* splitmix64 step: jitter in [0.5, 1) so synchronized clients spread out
	 * but never retry sooner than half the schedule. */
	uint64_t z = (*rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return d * (0.5 + 0.5 * (double)(z >> 11) / 9007199254740992.0);
}

double llm_parse_retry_after(const char *v, long now)
{
	if (!v || !*v)
		return -1;
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	while (*end == ' ')
		end++;
	if (!errno && end != v && !*end)
		return d >= 0 && isfinite(d) ? d : -1;
	struct tm tm = {0};
	const char *e = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!e)
		return -1;
	long t = (long)timegm(&tm);
	return t > now ? (double)(t - now) : 0;
}

int llm_retryable(long status)
{
	return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

const char *llm_status_reason(long status, const char *body)
{
	body = body ? body : "";
	int quota = strstr(body, "insufficient_quota") || strstr(body, "billing") || strstr(body, "credit balance") ||
		    strstr(body, "quota");
	if (status == 401 || status == 403)
		return "auth";
	if (status == 402 || ((status == 429 || status == 400) && quota))
		return "quota";
	if (status == 429)
		return "rate_limited";
	if (status == 529)
		return "overloaded";
	if (status == 408)
		return "timeout";
	if (status >= 500)
		return "server_error";
	return "bad_request";
}

static int json_to_key(json_t *j, char out[65])
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		return -1;
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, s, strlen(s));
	sha256_hex(&h, out, 64);
	free(s);
	return 0;
}

static json_t *params_json(const struct llm_config *c)
{
	json_t *p = json_pack("{s:I, s:i}", "max_tokens", (json_int_t)c->max_tokens, "n", c->n);
	if (c->temperature >= 0)
		json_object_set_new(p, "temperature", json_real(c->temperature));
	if (c->have_seed)
		json_object_set_new(p, "seed", json_integer(c->seed));
	return p;
}

void llm_cache_key(const struct llm_config *c, const char *system, const char *prompt, char out[65])
{
	json_t *k = json_pack("{s:s, s:s, s:s, s:o}", "model", c->model ? c->model : "", "system", system ? system : "",
			      "prompt", prompt, "params", params_json(c));
	/* Who answers: the same model name at another provider or endpoint is
	 * another model (t35 once took the openai run's cached answer for the
	 * anthropic run's identical prompt: answer-cache-shared-across-providers). */
	const char *p = c->provider ? c->provider : "";
	const char *where = strcmp(p, "cmd") == 0 ? c->command
			    : strcmp(p, "openai") == 0 || strcmp(p, "anthropic") == 0 ? c->base_url : NULL;
	json_object_set_new(k, "provider", json_string(p));
	if (where)
		json_object_set_new(k, "endpoint", json_string(where));
	if (c->sample)
		json_object_set_new(k, "sample", json_string(c->sample));
	json_to_key(k, out);
	json_decref(k);
}

static void prompt_hash(const char *system, const char *prompt, char out[65])
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, system ? system : "", strlen(system ? system : "") + 1);
	sha256_update(&h, prompt, strlen(prompt));
	sha256_hex(&h, out, 64);
}

/* ---- replies ---- */

void llm_reply_free(struct llm_reply *r)
{
	for (int i = 0; i < r->nchoices; i++)
		if (r->choices[i] != r->text)
			free(r->choices[i]);
	free(r->choices);
	free(r->text);
	free(r->model);
	free(r->finish);
	json_decref(r->exchange);
	memset(r, 0, sizeof *r);
}

static char *sdup(const char *s) { return s ? strdup(s) : NULL; }

/* Take choices from a JSON array of strings (first becomes text). */
static void set_choices(struct llm_reply *r, json_t *arr)
{
	size_t n = json_array_size(arr);
	r->choices = calloc(n ? n : 1, sizeof *r->choices);
	for (size_t i = 0; i < n && r->choices; i++)
		r->choices[r->nchoices++] = sdup(json_string_value(json_array_get(arr, i)));
	r->text = r->nchoices ? r->choices[0] : NULL;
}

static json_t *reply_response_json(const struct llm_reply *r)
{
	json_t *ch = json_array();
	for (int i = 0; i < r->nchoices; i++)
		json_array_append_new(ch, json_string(r->choices[i] ? r->choices[i] : ""));
	return json_pack("{s:o, s:s?, s:s?, s:I, s:I}", "choices", ch, "model", r->model, "finish", r->finish,
			 "tokens_in", (json_int_t)r->tokens_in, "tokens_out", (json_int_t)r->tokens_out);
}

static void reply_from_response(struct llm_reply *r, const json_t *resp)
{
	set_choices(r, json_object_get(resp, "choices"));
	r->model = sdup(json_string_value(json_object_get(resp, "model")));
	r->finish = sdup(json_string_value(json_object_get(resp, "finish")));
	r->tokens_in = (long)json_integer_value(json_object_get(resp, "tokens_in"));
	r->tokens_out = (long)json_integer_value(json_object_get(resp, "tokens_out"));
}

/* ---- prices: lib/price, the table and rule kreport uses too ---- */

/* The table is read again only when its path or file changes (inode, size,
 * modification time): every call of a run is priced by the same table, even
 * one given as a pipe (--prices <(...)) that can be read only once.  One per
 * process: the tools call llm_complete from one thread (kgen -j forks). */
static char *prices_path;
static struct stat prices_st;
static struct price_table prices_tab;
static int prices_ok;

/* NAN when there is no table, it cannot be read or parsed, or nothing in it
 * matches: the record then carries tokens and no cost, and kreport prices
 * them from its own --prices the same way (price_call). */
static double call_cost(const char *path, const char *reported, const char *asked, const char *provider, long tin,
			long tout)
{
	char e[ERRBUF];
	if (!path)
		return NAN;
	struct stat st;
	if (stat(path, &st) != 0)
		return NAN;
	if (!prices_path || strcmp(prices_path, path) != 0 || st.st_dev != prices_st.st_dev ||
	    st.st_ino != prices_st.st_ino || st.st_size != prices_st.st_size ||
	    st.st_mtim.tv_sec != prices_st.st_mtim.tv_sec || st.st_mtim.tv_nsec != prices_st.st_mtim.tv_nsec) {
		price_free(&prices_tab);
		free(prices_path);
		prices_path = strdup(path);
		prices_st = st;
		prices_ok = prices_path && price_load(&prices_tab, path, e) == 0;
	}
	return prices_ok ? price_call(&prices_tab, reported, asked, provider, (double)tin, (double)tout) : NAN;
}

/* ---- the ledger ---- */

/* 16 hex digits from the OS, or, should it fail, from the clock, the pid
 * and a counter: unique enough to join a record's call to its ledger line. */
static void new_call_id(char out[17])
{
	static uint64_t counter;
	uint64_t v;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 40) ^
		    (++counter * 0x9e3779b97f4a7c15ULL);
		v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
		v ^= v >> 31;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)v);
}

/* Now as "2026-11-05T12:34:56.789Z". */
static void utc_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* The call's line: {"kind":"call", time, tool, pid, ref?, ok} and the
 * accounting object.  Sets r->ledger_errno when it cannot be written. */
static void ledger_add(const struct llm_config *c, struct llm_reply *r, int rc)
{
	if (!c->ledger)
		return;
	char now[32];
	utc_now(now);
	const char *ref = c->ref ? c->ref : c->replay_key;
	json_t *line = json_pack("{s:s, s:s, s:s, s:I}", "kind", "call", "time", now, "tool",
				 c->tool ? c->tool : err_prog(), "pid", (json_int_t)getpid());
	json_t *acct = llm_reply_json(c, r, c->stage ? c->stage : "call");
	char *text = NULL;
	if (line && acct) {
		if (ref)
			json_object_set_new(line, "ref", json_string(ref));
		json_object_set_new(line, "ok", json_boolean(rc == 0));
		json_object_update(line, acct);
		text = json_dumps(line, JSON_COMPACT);
	}
	json_decref(line);
	json_decref(acct);
	struct strbuf b = STRBUF_INIT;
	if (text) {
		sb_add(&b, text);
		sb_addc(&b, '\n');
	}
	free(text);
	if (!b.len || b.oom) {
		r->ledger_errno = ENOMEM;
		sb_release(&b);
		return;
	}
	int fd = open(c->ledger, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		r->ledger_errno = errno;
	} else {
		ssize_t w = write(fd, b.buf, b.len);
		if (w != (ssize_t)b.len)
			r->ledger_errno = w < 0 ? errno : EIO;
		if (close(fd) != 0 && !r->ledger_errno)
			r->ledger_errno = errno;
	}
	sb_release(&b);
}

/* ---- cache ---- */

static char *cache_path(const char *dir, const char *key)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%.2s/%s.json", dir, key, key) < 0)
		return NULL;
	return p;
}

static json_t *cache_get(const struct llm_config *c, const char *key)
{
	if (!c->cache_dir || c->no_cache)
		return NULL;
	char *p = cache_path(c->cache_dir, key);
	json_t *j = p ? json_load_file(p, 0, NULL) : NULL;
	free(p);
	return j;
}

static void cache_put(const struct llm_config *c, const char *key, const struct llm_reply *r)
{
	if (!c->cache_dir)
		return;
	char *p = cache_path(c->cache_dir, key), dir[4096], e[ERRBUF];
	if (!p)
		return;
	snprintf(dir, sizeof dir, "%s/%.2s", c->cache_dir, key);
	json_t *j = json_pack("{s:o, s:O?}", "response", reply_response_json(r), "exchange", r->exchange);
	char *text = json_dumps(j, JSON_COMPACT);
	/* A cache that cannot be written is only a slower run: no error. */
	if (text && file_mkdirp(dir, e) == 0)
		(void)file_write_atomic(p, text, strlen(text), e);
	free(text);
	free(p);
	json_decref(j);
}

/* Concurrency bound: hold one of max_concurrent flock'ed slot files.
 * Returns the fd (close to release) or -1 when there is no cache dir. */
/* A provider's Retry-After holds for every process sharing the cache (kgen
 * -j, a selector beside a writer): slots/pause holds the wall-clock time
 * before which no new call starts.  Written under flock, only ever later. */
static void pause_set(const struct llm_config *c, double seconds)
{
	char p[4200], e[ERRBUF], buf[64];
	if (!c->cache_dir || seconds <= 0)
		return;
	snprintf(p, sizeof p, "%s/slots", c->cache_dir);
	if (file_mkdirp(p, e) != 0)
		return;
	snprintf(p, sizeof p, "%s/slots/pause", c->cache_dir);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX) == 0) {
		ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		double until = (double)time(NULL) + seconds, had = strtod(buf, NULL);
		if (until > had) {
			int l = snprintf(buf, sizeof buf, "%.3f\n", until);
			if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)l, 0) != l)
				(void)ftruncate(fd, 0);
		}
	}
	close(fd);
}

/* Seconds until the shared pause ends (0: none). */
static double pause_left(const struct llm_config *c)
{
	char p[4200], buf[64] = "";
	if (!c->cache_dir)
		return 0;
	snprintf(p, sizeof p, "%s/slots/pause", c->cache_dir);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	double left = strtod(buf, NULL) - (double)time(NULL);
	return left > 0 ? left : 0;
}

static int slot_take(const struct llm_config *c, double deadline)
{
	if (!c->cache_dir)
		return -1;
	char dir[4096], p[4200];
	char e[ERRBUF];
	double pause = pause_left(c);
	if (pause > 0) /* another process was told to wait: so is this one */
		sleep_s(pause < deadline - proc_now() ? pause : deadline - proc_now());
	snprintf(dir, sizeof dir, "%s/slots", c->cache_dir);
	if (file_mkdirp(dir, e) != 0)
		return -1;
	for (;;) {
		for (int i = 0; i < c->max_concurrent; i++) {
			snprintf(p, sizeof p, "%s/%d.lock", dir, i);
			int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
			if (fd < 0)
				return -1;
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				return fd;
			close(fd);
		}
		if (proc_now() > deadline)
			return -1; /* waited long enough: go on rather than hang */
		sleep_s(0.05);
	}
}

/* ---- transcript ---- */

static int gz_member(const char *in, size_t n, unsigned char **out, size_t *outn)
{
	z_stream z = {0};
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	size_t cap = deflateBound(&z, n) + 64;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*outn = cap - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(*out);
		return -1;
	}
	return 0;
}

/* Append one exchange; returns its pointer {"file","offset","sha"} or NULL. */
static json_t *transcript_add(const char *file, json_t *entry)
{
	if (!file)
		return NULL;
	char *js = json_dumps(entry, JSON_COMPACT);
	if (!js)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, js);
	sb_addc(&b, '\n');
	free(js);
	size_t n;
	char *line = sb_detach(&b, &n);
	if (!line)
		return NULL;
	struct sha256 h;
	char sha[65];
	sha256_init(&h);
	sha256_update(&h, line, n);
	sha256_hex(&h, sha, 64);
	unsigned char *gz;
	size_t gzn;
	json_t *ptr = NULL;
	if (gz_member(line, n, &gz, &gzn) == 0) {
		int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
		if (fd >= 0) {
			struct stat st;
			if (flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0 && write(fd, gz, gzn) == (ssize_t)gzn)
				ptr = json_pack("{s:s, s:I, s:s}", "file", file, "offset", (json_int_t)st.st_size, "sha", sha);
			close(fd);
		}
		free(gz);
	}
	free(line);
	return ptr;
}

json_t *llm_transcript_read(const char *file, long long offset, char *errbuf)
{
	struct nd_reader *r = nd_open_at(file, offset, errbuf);
	if (!r)
		return NULL;
	json_t *j = NULL;
	if (nd_next(r, &j, errbuf) != 1)
		errf(errbuf, "%s: offset %lld: no transcript entry there", file, offset);
	nd_close(r);
	return j;
}

/* ---- HTTP providers ---- */

static int openai_uses_completion_tokens(const struct llm_config *c, int flipped)
{
	int v = c->token_param == 2 ||
		(c->token_param == 0 && (strncmp(c->model, "o1", 2) == 0 || strncmp(c->model, "o3", 2) == 0 ||
					 strncmp(c->model, "o4", 2) == 0 || strncmp(c->model, "gpt-5", 5) == 0));
	return flipped ? !v : v;
}

static char *openai_body(const struct llm_config *c, const char *system, const char *prompt, int flipped)
{
	json_t *msgs = json_array();
	if (system && *system)
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content", system));
	json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", prompt));
	json_t *b = json_pack("{s:s, s:o}", "model", c->model, "messages", msgs);
	json_object_set_new(b, openai_uses_completion_tokens(c, flipped) ? "max_completion_tokens" : "max_tokens",
			    json_integer(c->max_tokens));
	if (c->temperature >= 0)
		json_object_set_new(b, "temperature", json_real(c->temperature));
	if (c->have_seed)
		json_object_set_new(b, "seed", json_integer(c->seed));
	if (c->n > 1)
		json_object_set_new(b, "n", json_integer(c->n));
	char *s = json_dumps(b, JSON_COMPACT);
	json_decref(b);
	return s;
}

static char *anthropic_body(const struct llm_config *c, const char *system, const char *prompt)
{
	json_t *msgs = json_pack("[{s:s, s:s}]", "role", "user", "content", prompt);
	json_t *b = json_pack("{s:s, s:I, s:o}", "model", c->model, "max_tokens", (json_int_t)c->max_tokens, "messages", msgs);
	if (system && *system)
		json_object_set_new(b, "system", json_string(system));
	if (c->temperature >= 0)
		json_object_set_new(b, "temperature", json_real(c->temperature));
	char *s = json_dumps(b, JSON_COMPACT);
	json_decref(b);
	return s;
}

/* The error message inside an API error body, for people: redacted
 * (http_redact) before it is cut to 300 bytes, so a cut cannot leave the
 * unmasked start of a key the provider quoted. */
static void api_error_text(const char *body, char *out, size_t n)
{
	json_t *j = json_loads(body, 0, NULL);
	json_t *e = json_object_get(j, "error");
	const char *m = json_string_value(json_is_object(e) ? json_object_get(e, "message") : e);
	http_redact(m ? m : body, out, n < 301 ? n : 301);
	json_decref(j);
}

/* The configured key itself, wherever it appears in msg, becomes its first
 * 4 characters and "***" (a provider may quote a key that does not look
 * like sk-...).  In place: the mask is shorter than the key.  Keys under 8
 * characters are left alone: masking "x" everywhere would garble the text,
 * and such a key is no secret worth the name. */
static void mask_key(char *msg, const char *key)
{
	size_t kl = key ? strlen(key) : 0;
	if (kl < 8)
		return;
	for (char *p = msg; (p = strstr(p, key));) {
		memcpy(p + 4, "***", 3);
		memmove(p + 7, p + kl, strlen(p + kl) + 1);
		p += 7;
	}
}

/* Every message that leaves llm_complete (into the record, the transcript,
 * the tool's stderr) goes through here once more, whoever wrote it. */
static void redact_message(char *errbuf, const char *key)
{
	char t[ERRBUF];
	http_redact(errbuf, t, sizeof t);
	mask_key(t, key);
	memcpy(errbuf, t, strlen(t) + 1);
}

/* Parse a 200 body.  0 ok; -1 with reason. */
/* A 200 body as JSON; NULL with reason "truncated" (retried) when it is not. */
static json_t *load_body(const char *body, struct llm_reply *r, char *errbuf)
{
	json_error_t je;
	json_t *j = json_loads(body, 0, &je);
	if (!j) {
		r->reason = "truncated";
		errf(errbuf, "response body is not complete JSON: %s", je.text);
	}
	return j;
}

static int parse_openai(const char *body, struct llm_reply *r, char *errbuf)
{
	json_t *j = load_body(body, r, errbuf);
	if (!j)
		return -1;
	json_t *ch = json_object_get(j, "choices");
	if (!json_is_array(ch) || json_array_size(ch) == 0) {
		json_decref(j);
		r->reason = "bad_response";
		return errf(errbuf, "response has no choices");
	}
	json_t *texts = json_array();
	const char *refusal = NULL;
	size_t i;
	json_t *c;
	json_array_foreach(ch, i, c) {
		json_t *m = json_object_get(c, "message");
		const char *t = json_string_value(json_object_get(m, "content"));
		if (!refusal)
			refusal = json_string_value(json_object_get(m, "refusal"));
		json_array_append_new(texts, json_string(t ? t : ""));
	}
	set_choices(r, texts);
	json_decref(texts);
	r->finish = sdup(json_string_value(json_object_get(json_array_get(ch, 0), "finish_reason")));
	r->model = sdup(json_string_value(json_object_get(j, "model")));
	json_t *u = json_object_get(j, "usage");
	r->tokens_in = (long)json_integer_value(json_object_get(u, "prompt_tokens"));
	r->tokens_out = (long)json_integer_value(json_object_get(u, "completion_tokens"));
	int rc = 0;
	if (refusal || (r->finish && strcmp(r->finish, "content_filter") == 0)) {
		r->reason = "refusal";
		rc = errf(errbuf, "the model refused: %.300s", refusal ? refusal : "content_filter");
	}
	json_decref(j);
	return rc;
}

static int parse_anthropic(const char *body, struct llm_reply *r, char *errbuf)
{
	json_t *j = load_body(body, r, errbuf);
	if (!j)
		return -1;
	json_t *content = json_object_get(j, "content");
	if (!json_is_array(content)) {
		json_decref(j);
		r->reason = "bad_response";
		return errf(errbuf, "response has no content blocks");
	}
	struct strbuf t = STRBUF_INIT;
	size_t i;
	json_t *b;
	json_array_foreach(content, i, b) {
		const char *type = json_string_value(json_object_get(b, "type"));
		const char *s = json_string_value(json_object_get(b, "text"));
		if (s && type && strcmp(type, "text") == 0)
			sb_add(&t, s);
	}
	char *text = sb_detach(&t, NULL);
	json_t *texts = json_pack("[s]", text ? text : "");
	free(text);
	set_choices(r, texts);
	json_decref(texts);
	r->finish = sdup(json_string_value(json_object_get(j, "stop_reason")));
	r->model = sdup(json_string_value(json_object_get(j, "model")));
	json_t *u = json_object_get(j, "usage");
	r->tokens_in = (long)json_integer_value(json_object_get(u, "input_tokens"));
	r->tokens_out = (long)json_integer_value(json_object_get(u, "output_tokens"));
	json_decref(j);
	if (r->finish && strcmp(r->finish, "refusal") == 0) {
		r->reason = "refusal";
		return errf(errbuf, "the model refused (stop_reason refusal)");
	}
	return 0;
}

static int http_provider(const struct llm_config *c, const char *system, const char *prompt, struct llm_reply *r,
			 char *errbuf, double t0)
{
	int anth = strcmp(c->provider, "anthropic") == 0;
	char url[2048], auth[1024], ver[128];
	size_t bl = strlen(c->base_url);
	while (bl > 0 && c->base_url[bl - 1] == '/')
		bl--;
	snprintf(url, sizeof url, "%.*s%s", (int)bl, c->base_url, anth ? "/v1/messages" : "/chat/completions");
	if (!c->api_key && (anth || strstr(c->base_url, "api.openai.com"))) {
		r->reason = "auth";
		return errf(errbuf, "authentication: %s is not set", anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	}
	const char *hdr[6];
	int nh = 0;
	hdr[nh++] = "Content-Type: application/json";
	if (anth) {
		snprintf(auth, sizeof auth, "x-api-key: %s", c->api_key ? c->api_key : "");
		snprintf(ver, sizeof ver, "anthropic-version: %s", c->anthropic_version);
		hdr[nh++] = auth;
		hdr[nh++] = ver;
	} else if (c->api_key) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->api_key);
		hdr[nh++] = auth;
	}
	hdr[nh] = NULL;
	int flipped = 0;
	uint64_t rng = c->jitter_seed ^ (uint64_t)getpid();
	char *body = anth ? anthropic_body(c, system, prompt) : openai_body(c, system, prompt, flipped);
	for (int attempt = 0;; attempt++) {
		struct http_resp resp;
		double left = c->timeout - (proc_now() - t0);
		if (left <= 0.05) {
			r->reason = "timeout";
			free(body);
			return errf(errbuf, "no answer within %.0f s (%d attempts)", c->timeout, attempt);
		}
		r->attempts++;
		int rc = http_post(url, hdr, body, c->connect_timeout, left, &resp, errbuf);
		r->http_status = resp.status;
		double ra = -1;
		int retry = 0;
		if (rc != 0) {
			r->reason = resp.fail;
			retry = 1;
		} else if (resp.status == 200) {
			rc = anth ? parse_anthropic(resp.body, r, errbuf) : parse_openai(resp.body, r, errbuf);
			retry = rc != 0 && strcmp(r->reason, "truncated") == 0;
			if (rc == 0)
				r->reason = NULL;
		} else {
			char m[400];
			api_error_text(resp.body, m, sizeof m);
			mask_key(m, c->api_key);
			r->reason = llm_status_reason(resp.status, resp.body);
			const char *what = strcmp(r->reason, "auth") == 0    ? "authentication error (check the API key)"
					   : strcmp(r->reason, "quota") == 0 ? "quota or billing error (not retried)"
									     : r->reason;
			errf(errbuf, "HTTP %ld: %s: %s", resp.status, what, m);
			rc = -1;
			if (!anth && resp.status == 400 && !flipped && c->token_param == 0 &&
			    (strstr(resp.body, "max_tokens") || strstr(resp.body, "max_completion_tokens"))) {
				/* The server wants the other token parameter: switch once. */
				flipped = 1;
				free(body);
				body = openai_body(c, system, prompt, flipped);
				http_resp_free(&resp);
				attempt--;
				continue;
			}
			retry = llm_retryable(resp.status) && strcmp(r->reason, "quota") != 0;
			if (resp.retry_after_ms)
				ra = llm_parse_retry_after(resp.retry_after_ms, (long)time(NULL)) / 1000.0;
			if (resp.retry_after)
				ra = llm_parse_retry_after(resp.retry_after, (long)time(NULL));
		}
		http_resp_free(&resp);
		if (rc == 0) {
			free(body);
			return 0;
		}
		if (!retry || attempt >= c->max_retries) {
			free(body);
			if (retry && attempt > 0) {
				size_t l = strlen(errbuf);
				snprintf(errbuf + l, ERRBUF - l, " (gave up after %d attempts)", attempt + 1);
			}
			return -1;
		}
		/* Free what a failed parse allocated before trying again. */
		const char *keep = r->reason;
		int att = r->attempts;
		long st = r->http_status;
		llm_reply_free(r);
		r->reason = keep;
		r->attempts = att;
		r->http_status = st;
		double w = llm_backoff(attempt, c->backoff_base, c->backoff_max, ra, &rng);
		if (ra > 0)
			pause_set(c, w);
		if (proc_now() - t0 + w > c->timeout) {
			free(body);
			size_t l = strlen(errbuf);
			snprintf(errbuf + l, ERRBUF - l, " (next retry would pass the %.0f s limit)", c->timeout);
			return -1;
		}
		sleep_s(w);
	}
}

/* ---- cmd: sh -c COMMAND through lib/proc, prompt on stdin, answer on stdout ---- */

/* Bound on a command's answer: far above any model's, below a runaway's. */
#define LLM_CMD_MAX_ANSWER (64 << 20)

static int cmd_provider(const struct llm_config *c, const char *system, const char *prompt, struct llm_reply *r,
			char *errbuf)
{
	if (!c->command) {
		r->reason = "provider";
		return errf(errbuf, "cmd provider: no command (--cmd or KSCI_LLM_CMD)");
	}
	struct strbuf sys = STRBUF_INIT, model = STRBUF_INIT;
	sb_printf(&sys, "KSCI_LLM_SYSTEM=%s", system ? system : "");
	sb_printf(&model, "KSCI_LLM_MODEL=%s", c->model ? c->model : "");
	const char *env[] = {sys.buf, model.buf, NULL};
	char *argv[] = {"/bin/sh", "-c", (char *)c->command, NULL};
	/* No CPU or memory limits: the command is the user's own, not a kernel. */
	struct proc_limits lim = {.wall_s = c->timeout, .capture = LLM_CMD_MAX_ANSWER, .pass_stderr = 1, .env = env};
	struct proc_result pr;
	size_t plen = strlen(prompt);
	int rc = sys.oom || model.oom ? errf(errbuf, "out of memory") : proc_run(argv, NULL, prompt, plen, &lim, &pr, errbuf);
	sb_release(&sys);
	sb_release(&model);
	if (rc != 0) {
		r->reason = "provider";
		return -1;
	}
	if (pr.timed_out) {
		r->reason = "timeout";
		rc = errf(errbuf, "command did not answer within %.0f s", c->timeout);
	} else if (!pr.exited || pr.code != 0) {
		r->reason = "cmd_failed";
		rc = errf(errbuf, "command failed (%s %d)", pr.exited ? "exit" : "signal", pr.exited ? pr.code : pr.sig);
	} else if (pr.out_total > pr.out_len) {
		r->reason = "provider";
		rc = errf(errbuf, "command's answer is longer than %d MiB", LLM_CMD_MAX_ANSWER >> 20);
	} else if (!(r->choices = calloc(1, sizeof *r->choices))) {
		r->reason = "provider";
		rc = errf(errbuf, "out of memory");
	}
	if (rc != 0) {
		proc_result_free(&pr);
		return rc;
	}
	r->choices[0] = r->text = pr.out;
	r->nchoices = 1;
	r->model = sdup(c->model);
	r->finish = sdup("stop");
	/* No tokenizer here: a rough 4 bytes per token keeps the accounting useful. */
	r->tokens_in = (long)((strlen(system ? system : "") + plen) / 4);
	r->tokens_out = (long)(pr.out_len / 4);
	pr.out = NULL;
	proc_result_free(&pr);
	return 0;
}

/* ---- replay: answers from transcripts, by prompt hash (and model) ---- */

static json_t *replay_index; /* {prompt_hash: [entries]} */
static json_t *replay_tags;  /* {replay_key: [entries]}, consumed in order */
static char *replay_paths;

static int replay_load(const char *paths, char *errbuf)
{
	if (replay_index && replay_paths && strcmp(replay_paths, paths) == 0)
		return 0;
	json_decref(replay_index);
	json_decref(replay_tags);
	free(replay_paths);
	replay_index = json_object();
	replay_tags = json_object();
	replay_paths = strdup(paths);
	char *list = strdup(paths), *save = NULL;
	for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		char why[ERRBUF];
		struct nd_reader *rd = nd_open(p, why);
		if (!rd) {
			free(list);
			return errf(errbuf, "replay: %s", why);
		}
		json_t *e;
		int rc;
		/* A line that is not an entry (-1) is passed over, as a torn last
		 * line of an interrupted run; a read error (-2) ends this file. */
		while ((rc = nd_next(rd, &e, errbuf)) != 0 && rc != -2) {
			if (rc < 0)
				continue;
			const char *h = json_string_value(json_object_get(e, "prompt_hash"));
			if (h && json_is_object(json_object_get(e, "response")) && !json_object_get(e, "error")) {
				json_t *a = json_object_get(replay_index, h);
				if (!a)
					json_object_set_new(replay_index, h, a = json_array());
				json_array_append(a, e);
				const char *k = json_string_value(json_object_get(e, "replay_key"));
				if (k) {
					json_t *b = json_object_get(replay_tags, k);
					if (!b)
						json_object_set_new(replay_tags, k, b = json_array());
					json_array_append(b, e);
				}
			}
			json_decref(e);
		}
		nd_close(rd);
	}
	free(list);
	return 0;
}

static int replay_provider(const struct llm_config *c, struct llm_reply *r, char *errbuf)
{
	if (!c->replay) {
		r->reason = "provider";
		return errf(errbuf, "replay provider: no transcript (--replay or KSCI_REPLAY)");
	}
	if (replay_load(c->replay, errbuf) != 0) {
		r->reason = "provider";
		return -1;
	}
	json_t *a = json_object_get(replay_index, r->prompt_hash), *pick = NULL, *e, *t;
	json_t *tagged = c->replay_key ? json_object_get(replay_tags, c->replay_key) : NULL;
	size_t i, j, at = 0;
	int best = -1;
	/* By prompt: an entry of this call's key not used yet first (the same
	 * prompt asked twice got two answers), then one of the model asked for. */
	json_array_foreach(a, i, e) {
		const char *m = json_string_value(json_object_get(e, "model"));
		int unused = 0, score;
		json_array_foreach(tagged, j, t) {
			if (t == e) {
				unused = 1;
				break;
			}
		}
		score = 2 * unused + (c->model && m && strcmp(m, c->model) == 0);
		if (score > best) {
			best = score;
			pick = e;
			at = j;
		}
	}
	if (pick && best >= 2) /* used: the key's next answer is the one after it */
		json_array_remove(tagged, at);
	if (!pick && json_array_size(tagged) > 0) {
		/* The prompt changed (fresh timings): the next answer recorded
		 * for the same stage, parent and child. */
		json_t *first = json_incref(json_array_get(tagged, 0));
		json_array_remove(tagged, 0);
		reply_from_response(r, json_object_get(first, "response"));
		json_decref(first);
		return 0;
	}
	if (!pick) {
		r->reason = "replay_miss";
		return errf(errbuf, "replay: no recorded answer for prompt %.16s", r->prompt_hash);
	}
	reply_from_response(r, json_object_get(pick, "response"));
	return 0;
}

/* ---- the call ---- */

/* The call itself: cache, provider, transcript; the accounting is
 * llm_complete's. */
static int complete(const struct llm_config *cfg, const char *system, const char *prompt, struct llm_reply *r,
		    char *errbuf)
{
	struct llm_config c = *cfg;
	memset(r, 0, sizeof *r);
	prompt_hash(system, prompt, r->prompt_hash);
	llm_cache_key(&c, system, prompt, r->key);
	double t0 = proc_now();
	int replay = strcmp(c.provider, "replay") == 0;
	json_t *hit = replay ? NULL : cache_get(&c, r->key);
	if (hit && json_is_object(json_object_get(hit, "response"))) {
		reply_from_response(r, json_object_get(hit, "response"));
		json_t *x = json_object_get(hit, "exchange");
		r->exchange = json_is_object(x) ? json_incref(x) : NULL;
		r->cached = 1;
		r->latency_s = proc_now() - t0;
		if (r->text && c.transcript && c.replay_key) {
			/* Logged too, so that replay finds an answer for every
			 * call of a run; the record still points at the original. */
			json_t *entry = json_pack("{s:I, s:s, s:s, s:s, s:b, s:s, s:O}", "time", (json_int_t)time(NULL),
						  "provider", c.provider, "model", c.model, "prompt_hash", r->prompt_hash,
						  "cached", 1, "replay_key", c.replay_key, "response",
						  json_object_get(hit, "response"));
			if (r->exchange)
				json_object_set(entry, "cached_from", r->exchange);
			json_decref(transcript_add(c.transcript, entry));
			json_decref(entry);
		}
		json_decref(hit);
		if (r->text)
			return 0;
		llm_reply_free(r);
		prompt_hash(system, prompt, r->prompt_hash);
		llm_cache_key(&c, system, prompt, r->key);
	}
	json_decref(hit);
	int rc;
	if (replay) {
		rc = replay_provider(&c, r, errbuf);
	} else {
		int slot = slot_take(&c, t0 + c.timeout);
		if (strcmp(c.provider, "cmd") == 0)
			rc = cmd_provider(&c, system, prompt, r, errbuf);
		else if (strcmp(c.provider, "openai") == 0 || strcmp(c.provider, "anthropic") == 0)
			rc = http_provider(&c, system, prompt, r, errbuf, t0);
		else {
			r->reason = "provider";
			rc = errf(errbuf, "unknown provider \"%s\"", c.provider);
		}
		if (slot >= 0)
			close(slot);
	}
	if (rc != 0)
		redact_message(errbuf, c.api_key);
	r->latency_s = proc_now() - t0;
	r->replayed = replay && rc == 0;
	if (!replay && (rc == 0 || r->text || r->attempts > 0)) {
		json_t *entry = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:i, s:f}", "time",
					  (json_int_t)time(NULL), "provider", c.provider, "model", c.model, "key", r->key,
					  "prompt_hash", r->prompt_hash, "system", system ? system : "", "prompt", prompt,
					  "params", params_json(&c), "attempts", r->attempts, "http_status",
					  r->http_status, "latency_s", r->latency_s);
		if (r->nchoices)
			json_object_set_new(entry, "response", reply_response_json(r));
		if (c.replay_key)
			json_object_set_new(entry, "replay_key", json_string(c.replay_key));
		if (rc != 0)
			json_object_set_new(entry, "error", json_pack("{s:s, s:s}", "reason", r->reason ? r->reason : "",
								       "message", errbuf));
		r->exchange = transcript_add(c.transcript, entry);
		json_decref(entry);
	} else if (replay && rc == 0) {
		json_t *a = json_object_get(replay_index, r->prompt_hash);
		(void)a;
		r->exchange = json_pack("{s:s, s:s}", "replayed_from", c.replay, "prompt_hash", r->prompt_hash);
	}
	if (rc == 0 && !replay && r->text && !r->reason)
		cache_put(&c, r->key, r);
	return rc;
}

/* One call of concurrent identical ones (kgen -j: a base's plan, asked by
 * each of its requests at once): a lock per cache key, held until the
 * answer is stored, so the others find it in the cache.  The fd, or -1
 * (no cache, no lookups, replay, or the lock could not be had in time:
 * then the call is made anyway). */
static int flight_take(const struct llm_config *c, const char *system, const char *prompt)
{
	if (!c->cache_dir || c->no_cache || strcmp(c->provider, "replay") == 0)
		return -1;
	char key[65], p[4200], e[ERRBUF];
	llm_cache_key(c, system, prompt, key);
	snprintf(p, sizeof p, "%s/inflight", c->cache_dir);
	if (file_mkdirp(p, e) != 0)
		return -1;
	snprintf(p, sizeof p, "%s/inflight/%s.lock", c->cache_dir, key);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	double deadline = proc_now() + c->timeout;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (proc_now() > deadline) {
			close(fd);
			return -1;
		}
		sleep_s(0.05);
	}
	return fd;
}

int llm_complete(const struct llm_config *cfg, const char *system, const char *prompt, struct llm_reply *r,
		 char *errbuf)
{
	struct llm_config c = *cfg;
	llm_config_defaults(&c);
	int flight = flight_take(&c, system, prompt);
	int rc = complete(&c, system, prompt, r, errbuf);
	if (flight >= 0)
		close(flight); /* after the answer is in the cache */
	int bought = !r->cached && !r->replayed;
	double price = call_cost(c.prices, r->model, c.model, c.provider, r->tokens_in, r->tokens_out);
	r->cost_usd = bought ? price : 0;
	r->saved_usd = bought ? NAN : price;
	new_call_id(r->call_id);
	ledger_add(&c, r, rc);
	return rc;
}

json_t *llm_reply_json(const struct llm_config *c, const struct llm_reply *r, const char *stage)
{
	json_t *j = json_pack("{s:s, s:s?, s:s?, s:I, s:I, s:f, s:s, s:b, s:i}", "stage", stage, "provider",
			      c->provider, "model", r->model ? r->model : c->model, "tokens_in", (json_int_t)r->tokens_in,
			      "tokens_out", (json_int_t)r->tokens_out, "latency_s", r->latency_s, "prompt_hash",
			      r->prompt_hash, "cached", r->cached, "attempts", r->attempts);
	if (!isnan(r->cost_usd))
		json_object_set_new(j, "cost_usd", json_real(r->cost_usd));
	if (r->replayed)
		json_object_set_new(j, "replayed", json_true());
	if ((r->cached || r->replayed) && !isnan(r->saved_usd))
		json_object_set_new(j, "saved_usd", json_real(r->saved_usd));
	if (r->call_id[0])
		json_object_set_new(j, "call_id", json_string(r->call_id));
	/* The price rule looks at both names (lib/price.h). */
	if (r->model && c->model && strcmp(r->model, c->model) != 0)
		json_object_set_new(j, "model_asked", json_string(c->model));
	if (r->finish)
		json_object_set_new(j, "finish", json_string(r->finish));
	if (r->exchange)
		json_object_set(j, "exchange", r->exchange);
	if (r->reason)
		json_object_set_new(j, "reason", json_string(r->reason));
	if (r->ledger_errno)
		json_object_set_new(j, "ledger_error", json_string(strerror(r->ledger_errno)));
	return j;
}

json_t *llm_usage_json(const json_t *calls)
{
	struct price_acct a = {0};
	size_t i;
	json_t *c;
	json_array_foreach(calls, i, c) {
		price_acct_add(&a, c, NULL, NULL);
	}
	return price_acct_json(&a);
}
