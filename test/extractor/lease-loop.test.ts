// The lease loop (extractor/output/edge-sink.ts renewLeaseLoop) against a stand-in fetch that
// answers when the test says: stop() starts no more renewals and settles once a renewal already
// sent is answered, so a job that awaits it before reporting its end has nothing still on its
// way to the edge; an edge that never answers holds it for stopWaitMs at most.
import { describe, expect, it } from "vitest";
import { EdgeClient, renewLeaseLoop } from "../../extractor/output/edge-sink.ts";

/** A fetch whose answers wait for answer(); records each request's path and body. */
function heldFetch() {
  const sent: { path: string; body: unknown }[] = [];
  const waiting: (() => void)[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    sent.push({ path: new URL(String(url)).pathname, body: JSON.parse(String(init?.body)) });
    await new Promise<void>((resolve) => waiting.push(resolve));
    return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof globalThis.fetch;
  return {
    fetch,
    sent,
    answer: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A loop of job j1's attempt a1 renewing through `edge`, once a minute unless told now. */
function loopThrough(edge: ReturnType<typeof heldFetch>, stopWaitMs?: number) {
  const client = new EdgeClient({ baseUrl: "http://edge.test", token: "t", fetch: edge.fetch });
  return renewLeaseLoop(client, {
    kind: "job",
    jobId: "j1",
    attemptId: "a1",
    everyMs: 60_000,
    onLost: () => {},
    stopWaitMs,
  });
}

describe("the lease loop", () => {
  it("stop() settles only after the renewal on its way is answered, and starts no more", async () => {
    const edge = heldFetch();
    const loop = loopThrough(edge);
    loop.renewNow({ processed_seconds: 3 });
    await tick();
    expect(edge.sent).toEqual([
      { path: "/internal/jobs/job/j1/lease", body: { attempt_id: "a1", processed_seconds: 3 } },
    ]);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await tick();
    expect(stopped).toBe(false);
    edge.answer();
    await stopping;
    expect(stopped).toBe(true);
    loop.renewNow({ processed_seconds: 4 });
    await tick();
    expect(edge.sent).toHaveLength(1);
  });

  it("stop() waits no longer than stopWaitMs for an edge that never answers", async () => {
    const edge = heldFetch();
    const loop = loopThrough(edge, 50);
    loop.renewNow({ processed_seconds: 1 });
    await tick();
    expect(edge.sent).toHaveLength(1);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stopped).toBe(false);
    await stopping;
    expect(stopped).toBe(true);
    edge.answer();
  });

  it("stop() with nothing on its way settles at once", async () => {
    const edge = heldFetch();
    const loop = loopThrough(edge);
    await loop.stop();
    expect(edge.sent).toEqual([]);
  });
});
