// Identical jobs at once (extractor/twins.ts, decision 0384), by counting: which requests are
// twins, whose source a twin could be served, and a twin waits out of its slot (coming back in
// its turn) until the first has ended, one after another, never for its own job's earlier
// attempt, and not at all once cancelled.
import { describe, expect, it } from "vitest";
import { Twins } from "../../extractor/twins.ts";
import type { ExtractRequest } from "../../schema/messages.ts";
import { extractRequest } from "./fake-edge.ts";

function request(overrides: Partial<ExtractRequest> = {}): ExtractRequest {
  return extractRequest(
    { base_url: "http://edge.test", token: "t" },
    { job_id: "job-1", attempt_id: "attempt-1", tenant: "account:a", ...overrides },
  );
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** An idle that counts the waits it runs (as the scheduler's slot would, out of the slot). */
function countingIdle() {
  const idle = {
    waits: 0,
    out: 0,
    comeBacks: [] as (string | undefined)[],
    run: async <T>(wait: () => Promise<T>, comeBack?: string): Promise<T> => {
      idle.comeBacks.push(comeBack);
      idle.waits++;
      idle.out++;
      try {
        return await wait();
      } finally {
        idle.out--;
      }
    },
  };
  return idle;
}

describe("which requests are twins", () => {
  const key = Twins.keyOf(request());

  it("the same account, link, options and limits, whatever the job, attempt or webhook", () => {
    expect(key).not.toBeNull();
    const other = request({
      job_id: "job-2",
      attempt_id: "attempt-9",
      options: { ...request().options, webhook_url: "https://hooks.example.com/x", reuse: true },
      callback: { base_url: "http://edge.test", token: "other" },
    });
    expect(Twins.keyOf(other)).toBe(key);
    // Key order does not matter.
    const reordered = request({
      options: { output: "urls", resolution: 720, format: "jpg", count: 3, mode: "count" },
    });
    expect(Twins.keyOf(reordered)).toBe(key);
  });

  it("not across accounts, links, options or plan limits", () => {
    for (const changed of [
      request({ tenant: "account:b" }),
      request({ url: "https://example.com/w.mp4" }),
      request({ options: { ...request().options, count: 4 } }),
      request({ options: { ...request().options, format: "png" } }),
      request({ max_frames: 100 }),
      request({ max_video_seconds: 60 }),
      request({ clip_to_max: true }),
    ]) {
      expect(Twins.keyOf(changed)).not.toBe(key);
    }
  });

  it("never for a demo, reuse: false, a live stream, or a request the edge did not send", () => {
    expect(Twins.keyOf(request({ kind: "demo" }))).toBeNull();
    expect(Twins.keyOf(request({ options: { ...request().options, reuse: false } }))).toBeNull();
    expect(
      Twins.keyOf(
        request({ options: { mode: "live", format: "jpg", resolution: 720, output: "urls" } }),
      ),
    ).toBeNull();
    expect(Twins.keyOf(request({ attempt_id: undefined }))).toBeNull();
    expect(Twins.keyOf(request({ tenant: undefined }))).toBeNull();
  });
});

describe("whose source a twin could be served", () => {
  const url = "https://example.com/v.mp4";
  const file = { final_url: url, etag: '"v1"', last_modified: null, size: 1000 };

  it("a file at the asked URL with validators, and a platform's video", () => {
    expect(Twins.mayServe(file, url)).toBe(true);
    expect(Twins.mayServe({ platform_id: "youtube:abc" }, "https://youtu.be/abc")).toBe(true);
  });

  it("not one without an identity, nor one behind a redirect (maybe signed per request)", () => {
    expect(Twins.mayServe(null, url)).toBe(false);
    expect(Twins.mayServe(undefined, url)).toBe(false);
    const signed = { ...file, final_url: "https://cdn.example.com/v.mp4?X-Amz-Signature=1" };
    expect(Twins.mayServe(signed, url)).toBe(false);
  });
});

describe("a twin's turn", () => {
  it("waits out of its slot until the first has ended; the third waits for the second", async () => {
    const twins = new Twins();
    const idle = countingIdle();
    const signal = new AbortController().signal;
    const first = await twins.enter("k", "job-1", idle.run, signal);
    expect(first.waitedFor).toBeNull();
    expect(idle.waits).toBe(0);

    const order: string[] = [];
    let told = 0;
    const second = twins
      .enter("k", "job-2", idle.run, signal, () => told++)
      .then((turn) => {
        order.push("job-2");
        return turn;
      });
    const third = twins.enter("k", "job-3", idle.run, signal).then((turn) => {
      order.push("job-3");
      return turn;
    });
    await settle();
    expect(order).toEqual([]);
    expect([idle.out, told]).toEqual([2, 1]); // both wait, out of their slots...
    expect(idle.comeBacks).toEqual(["in-turn", "in-turn"]); // ...and come back in their turn

    first.leave();
    await settle();
    expect(order).toEqual(["job-2"]); // the second goes on; the third now waits for it
    expect((await second).waitedFor).toBe("job-1");
    expect(idle.out).toBe(1);

    (await second).leave();
    const turn = await third;
    expect(order).toEqual(["job-2", "job-3"]);
    expect(turn.waitedFor).toBe("job-2");
    turn.leave();
    expect(twins.size).toBe(0);
    // Leaving twice changes nothing.
    first.leave();
    expect(twins.size).toBe(0);
  });

  it("never waits for its own job's earlier attempt, nor for another key", async () => {
    const twins = new Twins();
    const idle = countingIdle();
    const signal = new AbortController().signal;
    const earlier = await twins.enter("k", "job-1", idle.run, signal);
    const again = await twins.enter("k", "job-1", idle.run, signal);
    const elsewhere = await twins.enter("other", "job-2", idle.run, signal);
    expect([again.waitedFor, elsewhere.waitedFor, idle.waits]).toEqual([null, null, 0]);
    // The earlier attempt ending does not free the key the later one holds.
    earlier.leave();
    expect(twins.size).toBe(2);
    again.leave();
    elsewhere.leave();
    expect(twins.size).toBe(0);
  });

  it("a cancelled wait ends at once and holds nothing", async () => {
    const twins = new Twins();
    const idle = countingIdle();
    const first = await twins.enter("k", "job-1", idle.run, new AbortController().signal);
    const cancel = new AbortController();
    const waiting = twins.enter("k", "job-2", idle.run, cancel.signal);
    await settle();
    expect(idle.out).toBe(1);
    cancel.abort();
    const turn = await waiting;
    expect(turn.waitedFor).toBe("job-1");
    expect(idle.out).toBe(0);
    turn.leave();
    expect(twins.size).toBe(1); // still the first's
    first.leave();
    expect(twins.size).toBe(0);
  });
});
