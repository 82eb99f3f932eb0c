// What the dashboard reads and changes, apart from how it is shown.
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Context } from "hono";
import { newKeyStatement, newWebhookSecret } from "../../../schema/accounts.ts";
import { apiKeyHint } from "../../../schema/api-keys.ts";
import { type AccountRow, accounts, apiKeys, creditLedger, jobs } from "../../../schema/db.ts";
import { type EventOrigin, recordAccountEvent } from "../../auth/account-events.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv, Db } from "../../context.ts";
import { fileLinker } from "../../files.ts";
import { baseUrl } from "../../jobs/read.ts";
import { revokeApiKey } from "../../middleware/auth.ts";
import { filesAreLive } from "../../serialize.ts";

/** Enough for every environment and connector of one account; more is a leak waiting. */
export const MAX_ACTIVE_KEYS = 25;

/** The account as it is now (the session's copy may be older than a purchase or a job). */
export async function liveAccount(db: Db, accountId: string): Promise<AccountRow> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return account;
}

export function activeKeys(db: Db, accountId: string) {
  return db
    .select({
      id: apiKeys.id,
      hint: apiKeys.hint,
      name: apiKeys.name,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), sql`rowid DESC`);
}

export type KeyListRow = Awaited<ReturnType<typeof activeKeys>>[number];

/**
 * A new key, or undefined when the account already has MAX_ACTIVE_KEYS. The account's event
 * log records it, with where the request came from.
 */
export async function createKey(env: Env, accountId: string, name: string, origin: EventOrigin) {
  const issued = await newKeyStatement(accountId, name, MAX_ACTIVE_KEYS);
  const result = await env.DB.prepare(issued.statement.sql)
    .bind(...issued.statement.params)
    .run();
  if (result.meta.changes !== 1) return undefined;
  const detail = `${name} (${apiKeyHint(issued.key)})`;
  await recordAccountEvent(env, accountId, "key_created", origin, detail);
  return { key: issued.key, keyId: issued.keyId };
}

/**
 * Revokes the account's key: its rate limiter refuses it first (every isolate within a lease,
 * edge/middleware/auth.ts), then D1 records it. A failure between the two leaves the key
 * refused and still listed, so trying again finishes the job.
 */
export async function revokeKey(
  env: Env,
  db: Db,
  accountId: string,
  keyId: string,
  origin: EventOrigin,
): Promise<boolean> {
  const [key] = await db
    .select({ keyHash: apiKeys.keyHash, name: apiKeys.name, hint: apiKeys.hint })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)));
  if (!key) return false;
  await revokeApiKey(env, keyId, key.keyHash);
  await db
    .update(apiKeys)
    .set({ revokedAt: new Date().toISOString() })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  await recordAccountEvent(env, accountId, "key_revoked", origin, `${key.name} (${key.hint})`);
  return true;
}

export async function rotateWebhookSecret(db: Db, accountId: string): Promise<string> {
  const secret = newWebhookSecret();
  await db.update(accounts).set({ webhookSecret: secret }).where(eq(accounts.id, accountId));
  return secret;
}

export function ledgerPage(db: Db, accountId: string, limit: number, offset: number) {
  return db
    .select()
    .from(creditLedger)
    .where(eq(creditLedger.accountId, accountId))
    .orderBy(desc(creditLedger.createdAt), sql`rowid DESC`)
    .limit(limit)
    .offset(offset);
}

export function ledgerSize(db: Db, accountId: string): Promise<number> {
  return db.$count(creditLedger, eq(creditLedger.accountId, accountId));
}

export interface JobListRow {
  id: string;
  status: string;
  url: string;
  platform: string;
  framesCount: number | null;
  framesFailed: number;
  creditsCharged: number | null;
  createdAt: string;
  width: number | null;
  height: number | null;
  /** Signed URL of the first good frame while the job's files live. */
  thumbnailUrl: string | null;
}

/** The account's jobs, newest first, each with the signed URL of its first good frame. */
export async function jobsWithThumbnails(
  c: Context<AppEnv>,
  accountId: string,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: JobListRow[] }> {
  const db = c.get("db");
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: sql<number>`count(*)` }).from(jobs).where(eq(jobs.accountId, accountId)),
    db
      .select()
      .from(jobs)
      .where(eq(jobs.accountId, accountId))
      .orderBy(desc(jobs.createdAt), sql`rowid DESC`)
      .limit(limit)
      .offset(offset),
  ]);
  const live = rows.filter((row) => filesAreLive(row));
  const { secrets } = edgeConfig(c.env);
  const firstFrames = new Map<string, string>();
  if (live.length > 0) {
    // SQLite returns the other columns of the row that holds min(idx).
    const { results } = await c.env.DB.prepare(
      `SELECT job_id, r2_key, min(idx) AS idx FROM frames
       WHERE status = 'ok' AND r2_key IS NOT NULL AND job_id IN (${live.map(() => "?").join(", ")})
       GROUP BY job_id`,
    )
      .bind(...live.map((row) => row.id))
      .all<{ job_id: string; r2_key: string }>();
    for (const frame of results) firstFrames.set(frame.job_id, frame.r2_key);
  }
  const listed = await Promise.all(
    rows.map(async (row): Promise<JobListRow> => {
      const key = firstFrames.get(row.id);
      const thumbnailUrl =
        key && row.expiresAt
          ? await fileLinker(secrets.fileUrlSecret, baseUrl(c), row.expiresAt).url(key)
          : null;
      return {
        id: row.id,
        status: filesAreLive(row) || row.status !== "completed" ? row.status : "expired",
        url: row.url,
        platform: row.platform,
        framesCount: row.framesCount,
        framesFailed: row.framesFailed,
        creditsCharged: row.creditsCharged,
        createdAt: row.createdAt,
        width: row.width,
        height: row.height,
        thumbnailUrl,
      };
    }),
  );
  return { total, rows: listed };
}

/** X-Request-Id of the request that created the account's job (null for older jobs). */
export async function jobRequestId(db: Db, accountId: string, jobId: string) {
  const [row] = await db
    .select({ requestId: jobs.requestId })
    .from(jobs)
    .where(and(eq(jobs.id, jobId), eq(jobs.accountId, accountId)));
  return row?.requestId ?? null;
}
