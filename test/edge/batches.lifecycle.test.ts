// A batch completes once (decision 0340): edge/batches/lifecycle.ts's one conditional statement
// decides, so of many callers that find the batch done at once (each job's end, a repeated
// settlement, the cron) exactly one completes it and queues batch.completed; none does while an
// item waits or an item's job is unsettled.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  batchEventId,
  batchIdOfEvent,
  completeIfDone,
  sendOwedCompletions,
} from "../../edge/batches/lifecycle.ts";
import { createAccount } from "./support/api.ts";

const LINK = "https://cdn.example.com/clips/talk.mp4";

/** A batch whose items are jobs in these statuses ("pending": an item with no job yet). */
async function batchOf(statuses: string[]) {
  const account = await createAccount({ plan: "starter" });
  const batchId = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO batches (id, account_id, options, webhook_url, item_count, request_hash)
     VALUES (?1, ?2, '{}', 'https://hooks.example.com/stills', ?3, 'hash')`,
  )
    .bind(batchId, account.accountId, statuses.length)
    .run();
  for (const [i, status] of statuses.entries()) {
    if (status === "pending") {
      await env.DB.prepare("INSERT INTO batch_items (batch_id, idx, url) VALUES (?1, ?2, ?3)")
        .bind(batchId, i + 1, LINK)
        .run();
      continue;
    }
    const jobId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options)
       VALUES (?1, ?2, ?3, ?4, ?4, 'direct', '{}')`,
    )
      .bind(jobId, account.accountId, status, LINK)
      .run();
    await env.DB.prepare(
      "INSERT INTO batch_items (batch_id, idx, url, state, job_id) VALUES (?1, ?2, ?3, 'job', ?4)",
    )
      .bind(batchId, i + 1, LINK, jobId)
      .run();
  }
  return batchId;
}

/** The env with a webhooks queue that records what is sent. */
function recordingEnv() {
  const sent: unknown[] = [];
  const queue = { send: async (message: unknown) => void sent.push(message) };
  return { env: { ...env, WEBHOOKS_QUEUE: queue } as unknown as Env, sent };
}

async function stateOf(batchId: string) {
  return env.DB.prepare("SELECT state, completed_at FROM batches WHERE id = ?1")
    .bind(batchId)
    .first<{ state: string; completed_at: string | null }>();
}

async function queuedAt(batchId: string) {
  const row = await env.DB.prepare("SELECT event_queued_at FROM batches WHERE id = ?1")
    .bind(batchId)
    .first<{ event_queued_at: string | null }>();
  return row?.event_queued_at;
}

describe("a batch's completion", () => {
  it("happens once, with one batch.completed, however many callers find it done at once", async () => {
    const batchId = await batchOf(["completed", "failed", "completed"]);
    const { env: recording, sent } = recordingEnv();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => completeIfDone(recording, batchId)),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(sent).toEqual([
      { event_id: `msg_batch_${batchId}_completed`, type: "batch.completed", batch_id: batchId },
    ]);
    expect((await stateOf(batchId))?.state).toBe("completed");
    // A later repeat (a settlement delivered again) changes nothing and sends nothing.
    expect(await completeIfDone(recording, batchId)).toBe(false);
    expect(sent).toHaveLength(1);
  });

  it("waits while an item's job is unsettled or an item is pending", async () => {
    for (const statuses of [
      ["completed", "processing"],
      ["queued", "completed"],
      ["completed", "pending"],
    ]) {
      const batchId = await batchOf(statuses);
      const { env: recording, sent } = recordingEnv();
      expect(await completeIfDone(recording, batchId), statuses.join()).toBe(false);
      expect(sent).toHaveLength(0);
      expect(await stateOf(batchId)).toEqual({ state: "active", completed_at: null });
    }
  });

  it("sends batch.completed from the cron when the send after the state change failed", async () => {
    const batchId = await batchOf(["completed", "failed"]);
    const failing = {
      ...env,
      WEBHOOKS_QUEUE: {
        send: async () => {
          throw new Error("queue unavailable");
        },
      },
    } as unknown as Env;
    await expect(completeIfDone(failing, batchId)).rejects.toThrow("queue unavailable");
    expect((await stateOf(batchId))?.state).toBe("completed");
    expect(await queuedAt(batchId)).toBeNull();
    // The state changed once: a later caller that finds the batch done sends nothing.
    const { env: recording, sent } = recordingEnv();
    expect(await completeIfDone(recording, batchId)).toBe(false);
    const ours = () =>
      sent.filter((e) => (e as { batch_id?: string }).batch_id === batchId) as unknown[];
    expect(ours()).toHaveLength(0);

    // Within a minute the cron leaves it (the send may still be on its way); after, it sends it.
    await sendOwedCompletions(recording, Date.now());
    expect(ours()).toHaveLength(0);
    await sendOwedCompletions(recording, Date.now() + 61_000);
    expect(ours()).toEqual([
      { event_id: `msg_batch_${batchId}_completed`, type: "batch.completed", batch_id: batchId },
    ]);
    expect(await queuedAt(batchId)).not.toBeNull();
    // Once queued, never again.
    await sendOwedCompletions(recording, Date.now() + 120_000);
    expect(ours()).toHaveLength(1);
  });

  it("marks a sent batch.completed queued, and never resends a batch without a webhook", async () => {
    const sentBatch = await batchOf(["completed"]);
    const { env: recording, sent } = recordingEnv();
    expect(await completeIfDone(recording, sentBatch)).toBe(true);
    expect(await queuedAt(sentBatch)).not.toBeNull();
    const quiet = await batchOf(["failed"]);
    await env.DB.prepare("UPDATE batches SET webhook_url = NULL WHERE id = ?1").bind(quiet).run();
    expect(await completeIfDone(recording, quiet)).toBe(true);
    expect(await queuedAt(quiet)).toBeNull();
    await sendOwedCompletions(recording, Date.now() + 61_000);
    const ids = sent.map((e) => (e as { batch_id: string }).batch_id);
    expect(ids.filter((id) => id === sentBatch)).toHaveLength(1);
    expect(ids).not.toContain(quiet);
  });

  it("names its event so a resend from the delivery log finds the batch", () => {
    const id = crypto.randomUUID();
    expect(batchIdOfEvent(batchEventId(id))).toBe(id);
    expect(batchIdOfEvent(`msg_${id}_completed`)).toBeNull();
  });
});
