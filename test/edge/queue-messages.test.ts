// Queue messages are read through schema/messages.ts: one that can never parse is logged and
// acked at once (never retried into a dead letter), and a stored result that no longer parses
// is dropped without settling its job.

import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../edge/index.ts";

function spiedBatch(queue: string, body: unknown) {
  const ack = vi.fn();
  const retry = vi.fn();
  const batch = {
    queue,
    messages: [{ id: "m1", timestamp: new Date(), attempts: 1, body, ack, retry }],
    ackAll: vi.fn(),
    retryAll: vi.fn(),
  } as unknown as MessageBatch;
  return { batch, ack, retry };
}

/** The JSON log lines written while `run` ran, by event name. */
async function loggedEvents(run: () => Promise<void>) {
  const lines: string[] = [];
  const spies = (["log", "warn", "error"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((line: unknown) => {
      lines.push(String(line));
    }),
  );
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

describe("queue messages that do not parse", () => {
  for (const [queue, body, job] of [
    ["stills-jobs", { kind: "video", id: "job-x" }, "job-x"],
    ["stills-results", { kind: "job", job_id: "job-y" }, "job-y"],
    ["stills-webhooks", { event_id: "e1", type: "job.exploded", job_id: "job-z" }, "job-z"],
    ["stills-jobs", "not an object", undefined],
  ] as const) {
    it(`${queue}: ${JSON.stringify(body)} is acked once and logged, never retried`, async () => {
      const { batch, ack, retry } = spiedBatch(queue, body);
      const events = await loggedEvents(() => worker.queue(batch, env, createExecutionContext()));
      expect(ack).toHaveBeenCalledTimes(1);
      expect(retry).not.toHaveBeenCalled();
      const line = events.find((e) => e.event === "queue.message_unreadable");
      expect(line).toMatchObject({ level: "error", queue });
      expect(line?.job).toBe(job);
    });
  }

  it("a stored result that no longer parses is dropped, logged with its job", async () => {
    const key = "job/job-r/attempt-1/result.json";
    await env.FILES.put(key, JSON.stringify({ job_id: "job-r", kind: "job", status: "done" }));
    const { batch, ack, retry } = spiedBatch("stills-results", {
      kind: "job",
      job_id: "job-r",
      result_key: key,
    });
    const events = await loggedEvents(() => worker.queue(batch, env, createExecutionContext()));
    expect(ack).toHaveBeenCalledTimes(1);
    expect(retry).not.toHaveBeenCalled();
    expect(events.find((e) => e.event === "result.unreadable")).toMatchObject({
      job: "job-r",
      result_key: key,
    });
    const settled = await env.DB.prepare("SELECT job_id FROM settlements WHERE job_id = ?1")
      .bind("job-r")
      .first();
    expect(settled).toBeNull();
  });
});
