#!/usr/bin/env python3
"""Mock language-model server for ksci tests (127.0.0.1 only).

Speaks OpenAI Chat Completions (POST .../chat/completions) and Anthropic
Messages (POST .../v1/messages) with real status codes, headers and JSON
bodies.  The model name picks the scenario:

  ok          plan prompts get a JSON plan list; write/fix prompts get the base
              kernel back, changed, in a fenced block
  edits       a SEARCH/REPLACE edit of the base kernel
  slow        answers after 3 s
  r429-once   429 + Retry-After: 1 on the first call, then like ok
  r429        always 429 + Retry-After: 0
  e500-once   500 on the first call, then like ok
  e500        always 500 (Anthropic: 529 overloaded for e529)
  truncated   announces a longer body than it sends, then closes
  nocode      200 whose text holds no code
  refusal     OpenAI: message.refusal; Anthropic: stop_reason "refusal"
  quota       429 insufficient_quota
  length      finish_reason length, code cut inside its fence
  maxtok      400 unless max_completion_tokens is used (OpenAI)
The key must be "test-key" (401 otherwise; the OpenAI 401 quotes the key
back, as the real one does).  Every request is appended to the log file as
one JSON line.  Usage: llm_server.py PORTFILE LOGFILE
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOGFILE = sys.argv[1], sys.argv[2]
seen = {}
lock = threading.Lock()


def first_time(key):
    with lock:
        n = seen.get(key, 0)
        seen[key] = n + 1
        return n == 0


def base_kernel(prompt):
    m = re.search(r"# (?:Base kernel|A candidate kernel that failed)[^\n]*\n```[^\n]*\n(.*?)\n```", prompt, re.S)
    return m.group(1) if m else "void solve(void) {}"


def answer_text(model, prompt):
    if model.startswith("nocode"):
        return "I looked at the kernel and I think it is already quite good. Try larger tiles."
    if "# What to do\n1. List about" in prompt:
        plans = [
            {"title": "wider tiles", "hypothesis": "bigger tiles reuse more data", "rubric": ["TILE 64"],
             "min_uplift": 1.05, "max_uplift": 1.3, "innovation": 2},
            {"title": "vectorise", "hypothesis": "vector loads halve instructions", "rubric": ["float4"],
             "min_uplift": 1.2, "max_uplift": 1.5, "innovation": 4},
            {"title": "fuse passes", "hypothesis": "one pass saves a read", "rubric": ["fuse"],
             "min_uplift": 0.9, "max_uplift": 2.5, "innovation": 8},
            {"title": "unroll", "hypothesis": "less loop overhead", "rubric": ["UNROLL 8"],
             "min_uplift": 1.0, "max_uplift": 1.1, "innovation": 1},
        ]
        return "Here is my analysis.\n```json\n" + json.dumps({"avenues": ["a"] * 10, "plans": plans}) + "\n```\n"
    base = base_kernel(prompt)
    tag = "fixed" if "# What went wrong" in prompt else "improved"
    h = abs(hash(prompt)) % 100000
    if model.startswith("edits"):
        first = base.split("\n")[0]
        return ("Edit:\n<<<<<<< SEARCH\n%s\n=======\n%s\n// mock %s %d\n>>>>>>> REPLACE\n" % (first, first, tag, h))
    if model.startswith("length"):
        return "```c\n" + base[: len(base) // 2]
    return "Sure. Here is the new kernel:\n\n```c\n%s\n// mock %s %d\n```\nThis should be faster." % (base, tag, h)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj, headers=()):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            req = json.loads(raw)
        except ValueError:
            return self.send_json(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
        anth = self.path.endswith("/v1/messages")
        with open(LOGFILE, "a") as f:
            f.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": req}) + "\n")
        if not anth and not self.path.endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": "no such route"}})
        model = req.get("model", "")
        if anth:
            key = self.headers.get("x-api-key")
            if not self.headers.get("anthropic-version"):
                return self.send_json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                      "message": "anthropic-version header is required"}})
        else:
            key = (self.headers.get("Authorization") or "").replace("Bearer ", "")
        if key != "test-key":
            if anth:
                return self.send_json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
            # Quoting the key back, as OpenAI does: kgen must not pass it on.
            return self.send_json(401, {"error": {"message": "Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys." % key,
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}})
        if anth:
            prompt = req["messages"][0]["content"]
        else:
            prompt = [m for m in req["messages"] if m["role"] == "user"][0]["content"]
        if model.startswith("slow"):
            time.sleep(3)
        if model.startswith("r429") and (model != "r429-once" or first_time(model)):
            err = {"error": {"message": "Rate limit reached", "type": "rate_limit_error" if anth else "requests", "code": "rate_limit_exceeded"}}
            return self.send_json(429, err, [("Retry-After", "1" if model == "r429-once" else "0")])
        if model.startswith("quota"):
            return self.send_json(429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}})
        if (model.startswith("e500") or model.startswith("e529")) and (not model.endswith("-once") or first_time(model)):
            code = 529 if model.startswith("e529") else 500
            return self.send_json(code, {"type": "error", "error": {"type": "overloaded_error" if code == 529 else "api_error", "message": "internal error"}})
        if model.startswith("maxtok") and "max_completion_tokens" not in req:
            return self.send_json(400, {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})
        text = answer_text(model, prompt)
        finish = "length" if model.startswith("length") else "stop"
        refusal = model.startswith("refusal")
        if anth:
            body = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
                    "content": [] if refusal else [{"type": "text", "text": text}],
                    "stop_reason": "refusal" if refusal else ("max_tokens" if finish == "length" else "end_turn"),
                    "stop_sequence": None, "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4}}
        else:
            choices = []
            for i in range(req.get("n", 1)):
                msg = {"role": "assistant", "content": None if refusal else text,
                       "refusal": "I can't help with that." if refusal else None}
                choices.append({"index": i, "message": msg, "finish_reason": finish})
            body = {"id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": choices, "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                                                  "total_tokens": (len(prompt) + len(text)) // 4}}
        if model.startswith("truncated"):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 3])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_json(200, body)


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients that time out on purpose close early


srv = Server(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
