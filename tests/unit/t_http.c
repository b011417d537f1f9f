/* t_http: http_redact (lib/http.c), the one function every message with a
 * URL or a provider's text goes through; no network.  Each case names the
 * leak it guards against. */
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "t.h"

/* in redacted into a buffer of n bytes equals want. */
static int redacts(const char *in, size_t n, const char *want)
{
	char out[1024];
	memset(out, 'X', sizeof out);
	http_redact(in, out, n);
	if (strcmp(out, want) != 0) {
		printf("#   in:   %s\n#   got:  %s\n#   want: %s\n", in, out, want);
		return 0;
	}
	return 1;
}

static int same(const char *in) { return redacts(in, 1024, in); }

/* No prefix of the redacted text, however short the buffer, holds secret. */
static int never_shows(const char *in, const char *secret)
{
	char out[512];
	for (size_t n = 1; n < sizeof out; n++) {
		http_redact(in, out, n);
		if (strlen(out) >= n || strstr(out, secret)) {
			printf("#   n=%zu: %s\n", n, out);
			return 0;
		}
		/* A cut must not leave the secret's first bytes either (beyond the
		 * 4 an API key keeps). */
		char head[8];
		snprintf(head, sizeof head, "%.5s", secret);
		if (strlen(secret) > 8 && strstr(out, head) && strncmp(secret, "sk-", 3) != 0) {
			printf("#   n=%zu shows the start of the secret: %s\n", n, out);
			return 0;
		}
	}
	return 1;
}

int main(void)
{
	/* userinfo */
	T_OK(redacts("https://user:pass@host/v1", 1024, "https://***@host/v1"), "user:pass in a URL is hidden");
	T_OK(redacts("https://tok3n@github.com/x.git", 1024, "https://***@github.com/x.git"), "a bare token as user is hidden");
	T_OK(redacts("http://u:p@127.0.0.1:8080/v1?model=x", 1024, "http://***@127.0.0.1:8080/v1?model=x"),
	     "host, port, path and ordinary query are kept");
	T_OK(redacts("https://a:b@c@host/", 1024, "https://***@host/"), "an '@' in the password: the last '@' ends userinfo");
	T_OK(redacts("https://user:pa/ss@host/v1", 1024, "https://***@host/v1"),
	     "a '/' in the password (user:pa is no host:port) is hidden too");
	T_OK(redacts("user:hunter22@proxy:3128/v1", 1024, "***@proxy:3128/v1"), "no scheme: user:pass@host as curl reads it");
	T_OK(redacts("HTTPS://U:P@HOST", 1024, "HTTPS://***@HOST"), "scheme in capitals, no path");
	T_OK(redacts("http://[::1]:8080/@me", 1024, "http://[::1]:8080/@me"), "IPv6 host with an '@' in the path: unchanged");

	/* query and fragment parameters */
	T_OK(redacts("https://h/v1?api_key=abc123&model=gpt", 1024, "https://h/v1?api_key=***&model=gpt"), "api_key value hidden");
	T_OK(redacts("https://h/?KEY=a&Token=b&sig=c&Signature=d&password=e&secret=f&apikey=g&access_token=h", 1024,
		     "https://h/?KEY=***&Token=***&sig=***&Signature=***&password=***&secret=***&apikey=***&access_token=***"),
	     "every secret parameter name, any case");
	T_OK(redacts("https://h/cb#access_token=xyz&state=1", 1024, "https://h/cb#access_token=***&state=1"),
	     "a token in the fragment (OAuth implicit flow)");
	T_OK(redacts("https://u:p@h/?key=k1;sig=s2", 1024, "https://***@h/?key=***;sig=***"), "';' separates parameters too");
	T_OK(redacts("https://h/?key=&x", 1024, "https://h/?key=***&x"), "an empty secret value still reads ***");

	/* no false positives */
	T_OK(same("https://api.openai.com/v1/chat/completions"), "ordinary URL unchanged");
	T_OK(same("https://h/search?monkey=1&keyboard=2&q=token"), "names that merely contain a secret word are kept");
	T_OK(same("https://registry.npmjs.org/@scope/pkg"), "an '@' in the path is not userinfo");
	T_OK(same("mail alice@example.com about it"), "an e-mail address is not a URL");
	T_OK(same("Error: connection refused at 10:42"), "a colon in prose is not userinfo");
	T_OK(same("task-force sk-short disk-abcdefghijkl"), "sk- must start a run and be longer than 8");
	T_OK(same(""), "empty text");

	/* API keys in text (a provider's 401 body) */
	T_OK(redacts("Incorrect API key provided: sk-proj-abcdefghijklmnop. See https://x/keys.", 1024,
		     "Incorrect API key provided: sk-p***. See https://x/keys."),
	     "an OpenAI key in an error body keeps its first 4 characters");
	T_OK(redacts("key \"sk-ant-api03-AAAAbbbbCCCC_dd\" invalid", 1024, "key \"sk-a***\" invalid"), "an Anthropic key");
	T_OK(redacts("see https://h/?q=sk-abcdefghijk", 1024, "see https://h/?q=sk-a***"), "a key inside a URL's value");

	/* messages around URLs, as http.c and llm.c build them */
	T_OK(redacts("http://u:s3cret@127.0.0.1:9/v1?api_key=K: Failed to connect", 1024,
		     "http://***@127.0.0.1:9/v1?api_key=*** Failed to connect"),
	     "a URL ends at a blank, the message goes on (a value takes the ':' after it: better too much hidden)");
	T_OK(redacts("http://u:s3cret@h:9/v1: Failed", 1024, "http://***@h:9/v1: Failed"),
	     "as http.c words it: URL, ':', curl's message");
	T_OK(redacts("{\"url\":\"https://u:p@h/\"}", 1024, "{\"url\":\"https://***@h/\"}"), "a URL ends at a quote");

	/* idempotent: llm.c redacts a message http.c already redacted */
	{
		char a[256], b[256];
		http_redact("https://u:p@h/?key=v sk-abcdefghij", a, sizeof a);
		http_redact(a, b, sizeof b);
		T_OK(strcmp(a, b) == 0, "redacting twice changes nothing");
	}

	/* truncation */
	T_OK(redacts("https://user:pass@host/", 9, "https://"), "cut inside the userinfo: nothing of it shown");
	T_OK(redacts("https://user:pass@host/", 12, "https://***"), "cut inside the mask");
	T_OK(redacts("abc", 1, ""), "n = 1: empty string");
	{
		char o[4] = "zzz";
		http_redact("abc", o, 0);
		T_OK(strcmp(o, "zzz") == 0, "n = 0: nothing written");
		http_redact(NULL, o, sizeof o);
		T_OK(o[0] == '\0', "NULL input: empty string");
	}
	T_OK(never_shows("https://alice:hunter2hunter2@h/?api_key=zzzzzzzzzz", "hunter2hunter2"),
	     "no buffer size shows the password");
	T_OK(never_shows("https://h/?api_key=zzzzzzzzzz", "zzzzzzzzzz"), "no buffer size shows the query secret");
	T_OK(never_shows("x sk-ant-0123456789abcdef y", "0123456789"), "no buffer size shows a key's tail");
	{
		/* A megabyte of text without blanks: bounded work, bounded output. */
		static char big[1 << 20];
		memset(big, '!', sizeof big - 1);
		memcpy(big + 100, "https://u:p@h/", 14);
		char o[64];
		http_redact(big, o, sizeof o);
		T_OK(strlen(o) == 63 && !strstr(o, "u:p"), "long input cut to the buffer");
	}
	return T_DONE();
}
