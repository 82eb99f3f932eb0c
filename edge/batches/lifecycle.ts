// A batch's state, written here alone: `active` from its creation until every item has ended,
// then `completed`, once. The transition is one conditional statement (store.completeBatch):
// of every caller that finds the batch done (a job's end, the feed, the cron, each perhaps
// delivered more than once), exactly one changes it, and only that one queues batch.completed;
// if that send fails, the cron sends it again (event_queued_at stays null until one returns).
import type { BatchCompletedMessage } from "../../schema/batches.ts";
import { logEvent } from "../log.ts";
import { batchById, completeBatch, completedUnsent, markEventQueued } from "./store.ts";

/** The batch.completed event's id: stable, so a receiver drops a repeat by its webhook-id. */
export function batchEventId(batchId: string): string {
  return `msg_batch_${batchId}_completed`;
}

/** The batch an event id of batchEventId names (a resend from the delivery log), or null. */
export function batchIdOfEvent(eventId: string): string | null {
  return /^msg_batch_([0-9a-f-]{36})_completed$/.exec(eventId)?.[1] ?? null;
}

/** active → completed when no item waits and no item's job is unsettled; true if this call did it. */
export async function completeIfDone(env: Env, batchId: string): Promise<boolean> {
  if (!(await completeBatch(env.DB, batchId, new Date().toISOString()))) return false;
  const batch = await batchById(env.DB, batchId);
  logEvent("info", "batch.completed", { batch: batchId, account: batch?.account_id });
  if (batch?.webhook_url) await sendCompleted(env, batchId);
  return true;
}

/**
 * batch.completed into the webhooks queue, then marked queued. A send that fails leaves the
 * mark unset, and sendOwedCompletions (the cron) sends it again: the state changed once, the
 * event goes out at least once, and receivers drop a repeat by its stable webhook-id.
 */
async function sendCompleted(env: Env, batchId: string) {
  const event: BatchCompletedMessage = {
    event_id: batchEventId(batchId),
    type: "batch.completed",
    batch_id: batchId,
  };
  await env.WEBHOOKS_QUEUE.send(event);
  await markEventQueued(env.DB, batchId, new Date().toISOString());
}

/** The cron's pass: batch.completed for batches whose send failed a minute or more ago. */
export async function sendOwedCompletions(env: Env, now = Date.now()) {
  const before = new Date(now - 60_000).toISOString();
  for (const batchId of await completedUnsent(env.DB, before, 100)) {
    logEvent("warn", "batch.completed_resent", { batch: batchId });
    await sendCompleted(env, batchId);
  }
}
