// A batch's state, written here alone: `active` from its creation until every item has ended,
// then `completed`, once. The transition is one conditional statement (store.completeBatch):
// of every caller that finds the batch done (a job's end, the feed, the cron, each perhaps
// delivered more than once), exactly one changes it, and only that one queues batch.completed.
import type { BatchCompletedMessage } from "../../schema/batches.ts";
import { logEvent } from "../log.ts";
import { batchById, completeBatch } from "./store.ts";

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
  if (batch?.webhook_url) {
    const event: BatchCompletedMessage = {
      event_id: batchEventId(batchId),
      type: "batch.completed",
      batch_id: batchId,
    };
    await env.WEBHOOKS_QUEUE.send(event);
  }
  return true;
}
