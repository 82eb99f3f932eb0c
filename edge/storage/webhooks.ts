// The storage of webhooks (decisions 0210, 0211): the delivery log, one row per event with its
// attempts as a JSON array, bounded per account and in time; and the account's signing secrets
// across a rotation. Every statement on `webhook_deliveries` is here.
import {
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_BODY_KEPT,
  WEBHOOK_DELIVERIES_KEPT,
  WEBHOOK_DELIVERY_DAYS,
  type WebhookAttempt,
  type WebhookEventType,
} from "../../schema/webhook-deliveries.ts";

/** What a delivery is: the event, whose it is, where it goes. */
export interface DeliveryTarget {
  id: string;
  accountId: string;
  type: WebhookEventType;
  jobId: string | null;
  url: string;
}

/** A row of the log as the storage reads it (attempts still JSON text). */
export interface DeliveryRecord {
  id: string;
  account_id: string;
  type: WebhookEventType;
  job_id: string | null;
  url: string;
  body: string | null;
  body_truncated: number;
  attempts: string;
  attempts_count: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** Drops the account's rows past the newest WEBHOOK_DELIVERIES_KEPT. */
function pruneAccount(db: D1Database, accountId: string): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM webhook_deliveries WHERE account_id = ?1 AND rowid NOT IN (
         SELECT rowid FROM webhook_deliveries WHERE account_id = ?1
         ORDER BY created_at DESC, rowid DESC LIMIT ?2)`,
    )
    .bind(accountId, WEBHOOK_DELIVERIES_KEPT);
}

/** A delivery with no attempt yet (a test event the dashboard just queued). */
export async function recordQueuedDelivery(db: D1Database, target: DeliveryTarget) {
  await db.batch([
    db
      .prepare(
        `INSERT INTO webhook_deliveries (id, account_id, type, job_id, url)
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO NOTHING`,
      )
      .bind(target.id, target.accountId, target.type, target.jobId, target.url),
    pruneAccount(db, target.accountId),
  ]);
}

/**
 * One attempt, written as it ends: the row is made on the first, and each attempt appends its
 * outcome (the oldest dropped past WEBHOOK_ATTEMPTS_KEPT) and replaces the body with the one
 * just sent. One statement, so attempts racing on the same event both land.
 */
export async function recordAttempt(
  db: D1Database,
  target: DeliveryTarget,
  body: string | null,
  attempt: WebhookAttempt,
) {
  const delivered =
    attempt.status_code !== null && attempt.status_code < 300 && attempt.status_code >= 200;
  const kept = body === null ? null : body.slice(0, WEBHOOK_BODY_KEPT);
  await db.batch([
    db
      .prepare(
        `INSERT INTO webhook_deliveries (id, account_id, type, job_id, url, body, body_truncated,
           attempts, attempts_count, last_status, last_error, last_attempt_at, delivered_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, json_array(json(?8)), 1, ?9, ?10, ?11,
           CASE WHEN ?12 THEN ?11 END)
         ON CONFLICT (id) DO UPDATE SET
           url = excluded.url,
           body = COALESCE(excluded.body, body),
           body_truncated = CASE WHEN excluded.body IS NULL THEN body_truncated
                            ELSE excluded.body_truncated END,
           attempts = json_insert(
             CASE WHEN json_array_length(attempts) >= ?13 THEN json_remove(attempts, '$[0]')
                  ELSE attempts END,
             '$[#]', json(?8)),
           attempts_count = attempts_count + 1,
           last_status = excluded.last_status,
           last_error = excluded.last_error,
           last_attempt_at = excluded.last_attempt_at,
           delivered_at = COALESCE(delivered_at, excluded.delivered_at)
         WHERE account_id = excluded.account_id`,
      )
      .bind(
        target.id,
        target.accountId,
        target.type,
        target.jobId,
        target.url,
        kept,
        body !== null && body.length > WEBHOOK_BODY_KEPT ? 1 : 0,
        JSON.stringify(attempt),
        attempt.status_code,
        attempt.error,
        attempt.attempted_at,
        delivered ? 1 : 0,
        WEBHOOK_ATTEMPTS_KEPT,
      ),
    pruneAccount(db, target.accountId),
  ]);
}

/** A page of the account's deliveries, newest first, and how many it has. */
export async function listDeliveries(
  db: D1Database,
  accountId: string,
  limit: number,
  skip: number,
): Promise<{ rows: DeliveryRecord[]; total: number }> {
  const [page, total] = await db.batch([
    db
      .prepare(
        `SELECT * FROM webhook_deliveries WHERE account_id = ?1
         ORDER BY created_at DESC, rowid DESC LIMIT ?2 OFFSET ?3`,
      )
      .bind(accountId, limit, skip),
    db
      .prepare("SELECT COUNT(*) AS total FROM webhook_deliveries WHERE account_id = ?1")
      .bind(accountId),
  ]);
  return {
    rows: page.results as DeliveryRecord[],
    total: Number((total.results[0] as { total: number }).total),
  };
}

/** One of the account's deliveries, or null (another account's reads as missing). */
export async function findDelivery(
  db: D1Database,
  accountId: string,
  id: string,
): Promise<DeliveryRecord | null> {
  return db
    .prepare("SELECT * FROM webhook_deliveries WHERE id = ?1 AND account_id = ?2")
    .bind(id, accountId)
    .first<DeliveryRecord>();
}

/** The URL the account's newest delivery went to, to offer for a test event. */
export async function lastDeliveryUrl(db: D1Database, accountId: string): Promise<string | null> {
  const row = await db
    .prepare(
      `SELECT url FROM webhook_deliveries WHERE account_id = ?1
       ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    )
    .bind(accountId)
    .first<{ url: string }>();
  return row?.url ?? null;
}

/** The cron's step: deliveries older than WEBHOOK_DELIVERY_DAYS go. */
export async function pruneOldDeliveries(db: D1Database, now: number): Promise<number> {
  const cutoff = new Date(now - WEBHOOK_DELIVERY_DAYS * 86_400_000).toISOString();
  const result = await db
    .prepare("DELETE FROM webhook_deliveries WHERE created_at < ?1")
    .bind(cutoff)
    .run();
  return result.meta.changes ?? 0;
}

/**
 * A rotation: the new secret signs from now on, and the one it replaces signs beside it until
 * `previousUntil` (an earlier previous secret is dropped). One statement: the right-hand sides
 * read the row as it was.
 */
export async function rotateSigningSecret(
  db: D1Database,
  accountId: string,
  secret: string,
  previousUntil: string,
) {
  await db
    .prepare(
      `UPDATE accounts SET previous_webhook_secret = webhook_secret,
         previous_webhook_secret_until = ?2, webhook_secret = ?3 WHERE id = ?1`,
    )
    .bind(accountId, previousUntil, secret)
    .run();
}

/** The account's signing secrets (the current one, and the one a rotation replaced), or none. */
export async function signingSecretsOf(
  db: D1Database,
  accountId: string,
): Promise<
  | {
      webhookSecret: string;
      previousWebhookSecret: string | null;
      previousWebhookSecretUntil: string | null;
    }
  | undefined
> {
  const row = await db
    .prepare(
      `SELECT webhook_secret AS webhookSecret, previous_webhook_secret AS previousWebhookSecret,
              previous_webhook_secret_until AS previousWebhookSecretUntil
       FROM accounts WHERE id = ?1`,
    )
    .bind(accountId)
    .first<{
      webhookSecret: string;
      previousWebhookSecret: string | null;
      previousWebhookSecretUntil: string | null;
    }>();
  return row ?? undefined;
}
