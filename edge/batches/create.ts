// Creating a batch (POST /v1/batches): the options checked once against the plan as a job's
// are, each link checked as a job's link is (a bad one becomes a failed item, the rest still
// run), the batch and its items written in one D1 batch under the plan's max_active_batches,
// then fed: each item becomes an ordinary job through createJob as the account has room
// (edge/batches/feed.ts). An Idempotency-Key makes a retried create return the first batch.
import type { BatchPlaylist, CreateBatchRequest } from "../../schema/batches.ts";
import type { Requester } from "../context.ts";
import { isUniqueViolation } from "../credits.ts";
import { sha256Hex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { checkPlanLimits, normaliseOptions } from "../jobs/options.ts";
import { logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { checkSourceUrl, checkWebhookUrl } from "../sources.ts";
import { itemJobRequest, storedOptions } from "./create-request.ts";
import { expandBatchLink } from "./expand.ts";
import { feedBatch } from "./feed.ts";
import { activeBatchCount, batchByIdempotencyKey, insertBatch, type NewItem } from "./store.ts";

/** Returns the id of the batch this request created (or created before, on a retry). */
export async function createBatch(
  c: Requester,
  body: CreateBatchRequest,
  idempotencyKey: string | undefined,
): Promise<{ batchId: string; replayed: boolean }> {
  const plan = planOf(c.account);
  const requestHash = await sha256Hex(JSON.stringify(body));
  if (idempotencyKey !== undefined) {
    const previous = await findIdempotentBatch(c, idempotencyKey, requestHash);
    if (previous) return { batchId: previous, replayed: true };
  }

  const { urls, url: link, ...options } = body;
  const links = urls ?? [];
  if (links.length > plan.limits.max_batch_items) {
    throw new ApiError(
      "InvalidRequest",
      `urls: ${links.length} links; the ${plan.name} plan's max_batch_items is ${plan.limits.max_batch_items}`,
      {
        userMessage: `Your plan takes at most ${plan.limits.max_batch_items} links in one batch. Split the list, or upgrade your plan.`,
      },
    );
  }
  // The options as every item's job will take them: refused once here, not once per item,
  // and before a playlist link is listed.
  const jobOptions = normaliseOptions(itemJobRequest(options, links[0] ?? link ?? ""), plan);
  if (jobOptions.webhook_url !== undefined) checkWebhookUrl(jobOptions.webhook_url, c.env);
  checkPlanLimits(jobOptions, plan);
  let playlist: BatchPlaylist | null = null;
  if (link !== undefined) {
    const expanded = await expandBatchLink(
      c.env,
      link,
      plan.limits.max_batch_items,
      plan.name,
      c.account.id,
    );
    links.push(...expanded.links);
    playlist = expanded.playlist;
  }

  const items: NewItem[] = links.map((link) => ({ url: link, error: linkError(c.env, link) }));
  const batchId = crypto.randomUUID();
  let created: boolean;
  try {
    created = await insertBatch(
      c.env.DB,
      {
        id: batchId,
        accountId: c.account.id,
        options: storedOptions(options, playlist),
        webhookUrl: jobOptions.webhook_url ?? null,
        idempotencyKey: idempotencyKey ?? null,
        requestHash,
        requestId: c.requestId ?? null,
      },
      items,
      plan.limits.max_active_batches,
    );
  } catch (err) {
    // Two concurrent requests with one Idempotency-Key: the loser answers with the winner's.
    if (idempotencyKey !== undefined && isUniqueViolation(err)) {
      const winner = await findIdempotentBatch(c, idempotencyKey, requestHash);
      if (winner) return { batchId: winner, replayed: true };
    }
    throw err;
  }
  if (!created) {
    const active = await activeBatchCount(c.env.DB, c.account.id);
    throw new ApiError(
      "RateLimited",
      `${active} batches are still running; the ${plan.name} plan's max_active_batches is ${plan.limits.max_active_batches}`,
      { userMessage: "Wait for a running batch to finish before starting another.", retryAfter: 5 },
    );
  }
  logEvent("info", "batch.created", {
    batch: batchId,
    request: c.requestId,
    account: c.account.id,
    items: items.length,
    ...(playlist ? { playlist_truncated: playlist.truncated } : {}),
  });
  await feedBatch(c.env, batchId);
  return { batchId, replayed: false };
}

/** Why a link cannot become a job (as the job's error would say), or null when it can. */
function linkError(env: Env, link: string): string | null {
  try {
    checkSourceUrl(link, env);
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return JSON.stringify({
      name: err.apiName,
      message: err.message,
      userMessage: err.userMessage,
    });
  }
}

async function findIdempotentBatch(c: Requester, key: string, requestHash: string) {
  const row = await batchByIdempotencyKey(c.env.DB, c.account.id, key);
  if (!row) return null;
  if (row.request_hash !== requestHash) {
    throw new ApiError(
      "InvalidRequest",
      "Idempotency-Key was already used with a different request body",
      { userMessage: "This Idempotency-Key belongs to another request. Use a new key." },
    );
  }
  return row.id;
}
