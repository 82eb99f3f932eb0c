"""The Python client's core flows against a running stack, run by test/sdk/python.test.ts.

Reads its inputs as JSON on stdin, prints what it saw as JSON on stdout; the TypeScript test
checks it against the stack. Runs in a virtual environment where `stills` was pip-installed.
"""

import http.client
import json
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import stills
from stills import Stills, StillsError, WebhookVerificationError

given = json.load(sys.stdin)
base_url = given["base_url"]
out = {"module_file": stills.__file__, "version": stills.VERSION}


def error_of(call):
    try:
        call()
    except StillsError as error:
        return {
            "class": type(error).__name__,
            "status": error.status,
            "name": error.name,
            "user_message": error.user_message,
            "request_id": error.request_id,
            "header_request_id": error.headers.get("x-request-id"),
            "params": [p["param"] for p in error.errors],
            "doc_url": error.doc_url,
            "retry_after": error.retry_after,
        }
    return None


def exhaust(key):
    """Spends a free key's minute (a token comes back every 2 s) right before it is used: emptied
    by the test before this script started, a slow start on a loaded machine let one come back."""
    for _ in range(40):
        request = urllib.request.Request(
            f"{base_url}/usage", headers={"Authorization": f"Bearer {key}"}
        )
        try:
            with urllib.request.urlopen(request) as response:
                response.read()
        except urllib.error.HTTPError as error:
            error.read()
            if error.code == 429:
                return
            raise
    raise RuntimeError("the key was never refused")


# First, each key emptied just before its call: a 429 with retries off, then one retried. On a
# loaded machine a token can come back between the emptying and the call (one every 2 s): a
# call that succeeded says nothing about the 429, so the key is emptied and called again.
no_retries = Stills(given["exhausted_key"], base_url, max_retries=0)
for _ in range(5):
    exhaust(given["exhausted_key"])
    out["rate_limited"] = error_of(no_retries.usage)
    if out["rate_limited"] is not None:
        break
exhaust(given["exhausted_key_2"])
started = time.monotonic()
out["retried_usage_plan"] = Stills(given["exhausted_key_2"], base_url).usage()["plan"]
out["retried_seconds"] = time.monotonic() - started

client = Stills()  # STILLS_API_KEY and STILLS_BASE_URL from the environment
out["base_url"] = client.base_url

job = client.jobs.create({"url": given["video_url"], "count": 4}, wait=True)
out["created"] = job
out["got"] = client.jobs.get(job["id"])

running = client.jobs.create({"url": given["video_url"], "every": 2})
seen = []
out["waited"] = client.jobs.wait_for(
    running["id"], on_progress=lambda j: seen.append(j["status"]), poll_interval=0.1
)
out["progress_statuses"] = [running["status"]] + seen

out["listed"] = [j["id"] for j in client.jobs.list(limit=1)]
out["pages"] = [[p["total"], p["skip"], len(p["data"])] for p in client.jobs.pages(limit=1)]
out["usage"] = client.usage()
out["pricing_keys"] = sorted(client.pricing().keys())

directory = tempfile.mkdtemp(prefix="stills-py-frames-")
out["files"] = client.frames.download(job, directory, concurrency=2)

out["errors"] = {
    "400": error_of(lambda: client.jobs.create({"url": "not a link", "count": 0})),
    "401": error_of(Stills("stills_live_" + "x" * 38, base_url).usage),
    "401_none": error_of(Stills("", base_url).usage),
    "402": error_of(
        lambda: Stills(given["broke_key"], base_url).jobs.create({"url": given["video_url"], "count": 2})
    ),
    "404": error_of(lambda: client.jobs.get("00000000-0000-4000-8000-000000000000")),
}

# A batch: one good link and one that answers 404, waited for, read item by item (pages of
# one), listed, created again with the same Idempotency-Key, and two refusals.
before_batch = client.usage()["credits"]["available"]
batch_body = {"urls": [given["video_url"], given["missing_url"]], "count": 2}
batch_key = str(uuid.uuid4())
batch = client.batches.create(batch_body, wait=True, poll_interval=0.5, idempotency_key=batch_key)
out["batch"] = batch
out["batch_again_id"] = client.batches.create(batch_body, idempotency_key=batch_key)["id"]
out["batch_items"] = list(client.batches.items(batch["id"], limit=1))
out["batch_jobs"] = [client.jobs.get(i["job_id"]) for i in out["batch_items"] if i["job_id"]]
out["batches_listed"] = [b["id"] for b in client.batches.list(limit=1)]
out["batch_spent"] = before_batch - client.usage()["credits"]["available"]
out["batch_errors"] = {
    "400": error_of(
        lambda: client.batches.create({"urls": [given["video_url"]], "url": given["video_url"]})
    ),
    "404": error_of(lambda: client.batches.get("00000000-0000-4000-8000-000000000000")),
}

hook = given["hook"]
event = client.webhooks.verify(hook["body"], hook["headers"], given["secret"])
out["webhook_event"] = {"type": event["type"], "job_id": event["data"]["id"]}
refusals = {}
for case, (body, headers) in {
    "tampered": (hook["body"].replace('"frames_count":2', '"frames_count":3'), hook["headers"]),
    "old": (hook["body"], dict(hook["headers"], **{"webhook-timestamp": str(int(time.time()) - 600)})),
    "missing": (hook["body"], {"webhook-id": hook["headers"]["webhook-id"]}),
}.items():
    try:
        client.webhooks.verify(body, headers, given["secret"])
        refusals[case] = None
    except WebhookVerificationError as error:
        refusals[case] = str(error)
out["webhook_refusals"] = refusals

# The demo, without a key, from a loopback address of its own: the stack counts demos per
# client address, taken from the socket (decision 0104), and other files on the shared stack
# spend 127.0.0.1's allowance. Last, since every connection from here on starts from it.
_connection_init = http.client.HTTPConnection.__init__


def _from_demo_address(self, *args, **kwargs):
    kwargs.setdefault("source_address", (given["demo_address"], 0))
    _connection_init(self, *args, **kwargs)


http.client.HTTPConnection.__init__ = _from_demo_address
keyless = Stills(api_key="", base_url=base_url)
demo = keyless.demo.create(given["video_url"], wait=True)
out["demo"] = demo
out["demo_again"] = keyless.demo.get(demo["id"])
out["demo_error"] = error_of(lambda: keyless.demo.create("not a link"))

print(json.dumps(out))
