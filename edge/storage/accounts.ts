// The storage module of the accounts-and-keys table group (issue 35, decision 0261): every
// statement the edge runs on api_keys, sign_in_codes, account_events, key_reveals and the local
// mail_outbox, and the account lookups of sign-in and authentication. It takes a D1Database (or a session of one)
// and holds all the SQL; edge/auth/* and the account pages decide, this module reads and writes.
//
// Prepared SQL, not drizzle's builder: these statements are conditional upserts, deletes that
// return the row they delete, and batches with the account event they record. The builder
// writes those no more clearly. The one hot read, the key lookup of every API request, decodes
// the account row as drizzle does (rowDecoder), so the middleware gets the same AccountRow.
import {
  ACCOUNT_EVENTS_KEPT,
  type AccountEventKind,
  EVENT_DETAIL_MAX,
} from "../../schema/account-events.ts";
import type { Statement } from "../../schema/accounts.ts";
import type { AccountEventRow, AccountRow } from "../../schema/db.ts";
import { accounts } from "../../schema/db.ts";
import { rowDecoder } from "./prepared-select.ts";

/** D1's binding or one of its sessions. */
export type D1 = Pick<D1Database, "prepare" | "batch">;

/** Where an account event came from. */
export interface EventOrigin {
  /** The client's address as limits count it: an IPv4 address, an IPv6 /64. */
  network: string;
  userAgent: string | null;
}

export function bound(d1: D1, statement: Statement): D1PreparedStatement {
  return d1.prepare(statement.sql).bind(...statement.params);
}

// ---- accounts (as sign-in and authentication see them)

export async function accountIdByEmail(d1: D1, email: string): Promise<string | null> {
  const row = await d1
    .prepare("SELECT id FROM accounts WHERE email = ?")
    .bind(email)
    .first<{ id: string }>();
  return row?.id ?? null;
}

/** The account's row as it is now, decoded as a drizzle select of it would be. */
export async function accountById(d1: D1, accountId: string): Promise<AccountRow | undefined> {
  const result = await d1.prepare("SELECT * FROM accounts WHERE id = ?1").bind(accountId).all();
  return accountRows(result)[0];
}

/** Sign-in codes and dashboard sessions past their expiry at `at`: nothing reads them any more. */
export async function deleteExpiredSignIns(d1: D1, at: string): Promise<void> {
  await d1.batch([
    d1.prepare("DELETE FROM sign_in_codes WHERE expires_at <= ?1").bind(at),
    d1.prepare("DELETE FROM sessions WHERE expires_at <= ?1").bind(at),
  ]);
}

/**
 * A signed-in account's rows (schema/accounts.ts's statements, which create it when new), with
 * the events of its sign-in, written in one batch.
 */
export async function writeSignIn(
  d1: D1,
  account: { accountId: string; statements: Statement[] },
  events: { kind: AccountEventKind; origin: EventOrigin }[],
): Promise<void> {
  await d1.batch([
    ...account.statements.map((s) => bound(d1, s)),
    ...events.flatMap((e) => accountEventStatements(d1, account.accountId, e.kind, e.origin)),
  ]);
}

// ---- api_keys

export interface KeyListRow {
  id: string;
  hint: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The account's live keys, newest first. */
export async function activeKeys(d1: D1, accountId: string): Promise<KeyListRow[]> {
  const { results } = await d1
    .prepare(
      `SELECT id, hint, name, created_at AS createdAt, last_used_at AS lastUsedAt
       FROM api_keys WHERE account_id = ? AND revoked_at IS NULL
       ORDER BY created_at DESC, rowid DESC`,
    )
    .bind(accountId)
    .all<KeyListRow>();
  return results;
}

/** Runs schema/accounts.ts's new-key statement: whether the key was written (under the cap). */
export async function insertKey(d1: D1, statement: Statement): Promise<boolean> {
  const result = await bound(d1, statement).run();
  return result.meta.changes === 1;
}

/** A live key of the account, with what revoking it needs. */
export async function liveKeyOf(
  d1: D1,
  accountId: string,
  keyId: string,
): Promise<{ keyHash: string; name: string; hint: string } | null> {
  return d1
    .prepare(
      `SELECT key_hash AS keyHash, name, hint FROM api_keys
       WHERE id = ? AND account_id = ? AND revoked_at IS NULL`,
    )
    .bind(keyId, accountId)
    .first();
}

export async function markKeyRevoked(d1: D1, keyId: string, at = new Date()): Promise<void> {
  await d1
    .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(at.toISOString(), keyId)
    .run();
}

export async function keyOwner(d1: D1, keyId: string): Promise<string | null> {
  const row = await d1
    .prepare("SELECT account_id FROM api_keys WHERE id = ?1")
    .bind(keyId)
    .first<{ account_id: string }>();
  return row?.account_id ?? null;
}

const accountRows = rowDecoder(accounts);

/** The live key with this hash and its account, as authentication needs them. */
export async function liveKeyByHash(
  d1: D1,
  hash: string,
): Promise<{ keyId: string; keyHash: string; account: AccountRow } | undefined> {
  const result = await d1
    .prepare(
      `SELECT k.id AS key_row_id, k.key_hash AS key_row_hash, a.*
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
       WHERE k.key_hash = ?1 AND k.revoked_at IS NULL LIMIT 1`,
    )
    .bind(hash)
    .all<{ key_row_id: string; key_row_hash: string }>();
  const raw = result.results[0];
  if (!raw) return undefined;
  return { keyId: raw.key_row_id, keyHash: raw.key_row_hash, account: accountRows(result)[0] };
}

/**
 * `last_used_at`, unless it was written within `every` ms (so several isolates write it about
 * once per interval between them).
 */
export function noteKeyUsed(d1: D1, keyId: string, now: number, everyMs: number) {
  return d1
    .prepare(
      "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)",
    )
    .bind(new Date(now).toISOString(), keyId, new Date(now - everyMs).toISOString())
    .run();
}

// ---- account_events

/** The statements that write one event and drop the account's oldest past the bound. */
export function accountEventStatements(
  d1: D1,
  accountId: string,
  kind: AccountEventKind,
  origin: EventOrigin,
  detail?: string,
): D1PreparedStatement[] {
  return [
    d1
      .prepare(
        `INSERT INTO account_events (id, account_id, kind, network, user_agent, detail)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        crypto.randomUUID(),
        accountId,
        kind,
        origin.network,
        origin.userAgent,
        detail?.slice(0, EVENT_DETAIL_MAX) ?? null,
      ),
    d1
      .prepare(
        `DELETE FROM account_events WHERE account_id = ?1 AND rowid NOT IN (
           SELECT rowid FROM account_events WHERE account_id = ?1
           ORDER BY created_at DESC, rowid DESC LIMIT ?2)`,
      )
      .bind(accountId, ACCOUNT_EVENTS_KEPT),
  ];
}

export type AccountEvent = Pick<
  AccountEventRow,
  "kind" | "network" | "userAgent" | "detail" | "createdAt"
>;

/** The account's events, newest first. */
export async function recentAccountEvents(
  d1: D1,
  accountId: string,
  limit = ACCOUNT_EVENTS_KEPT,
): Promise<AccountEvent[]> {
  const { results } = await d1
    .prepare(
      `SELECT kind, network, user_agent AS userAgent, detail, created_at AS createdAt
       FROM account_events WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    )
    .bind(accountId, limit)
    .all<AccountEvent>();
  return results;
}

/** Whether the owner of `email` signed in from `network` since `since`. */
export async function hasSignedInFrom(
  d1: D1,
  email: string,
  network: string,
  since: Date,
): Promise<boolean> {
  const row = await d1
    .prepare(
      `SELECT 1 AS known FROM account_events e JOIN accounts a ON a.id = e.account_id
       WHERE a.email = ? AND e.kind = 'sign_in' AND e.network = ? AND e.created_at > ? LIMIT 1`,
    )
    .bind(email, network, since.toISOString())
    .first<{ known: number }>();
  return row !== null;
}

// ---- sign_in_codes

/**
 * Writes a new code's row unless a live one may be sent again (it has tries left and does not
 * run out before `resendUntil`), then reads the row that stands: the new nonce, or the live one.
 */
export async function upsertSignInCode(
  d1: D1,
  code: {
    email: string;
    hash: string;
    nonce: string;
    expiresAt: string;
    maxTries: number;
    resendUntil: string;
  },
): Promise<{ code_nonce: string; expires_at: string }> {
  const [, current] = await d1.batch<{ code_nonce: string; expires_at: string }>([
    d1
      .prepare(
        `INSERT INTO sign_in_codes (email, code_hash, code_nonce, expires_at, attempts)
         VALUES (?1, ?2, ?3, ?4, 0)
         ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash,
           code_nonce = excluded.code_nonce, expires_at = excluded.expires_at, attempts = 0,
           created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE sign_in_codes.code_nonce IS NULL OR sign_in_codes.attempts >= ?5
           OR sign_in_codes.expires_at < ?6`,
      )
      .bind(code.email, code.hash, code.nonce, code.expiresAt, code.maxTries, code.resendUntil),
    d1.prepare("SELECT code_nonce, expires_at FROM sign_in_codes WHERE email = ?").bind(code.email),
  ]);
  return current.results[0];
}

/** Counts one try at the address's live code: its hash and tries so far, or null. */
export async function countCodeTry(
  d1: D1,
  email: string,
  maxTries: number,
  nowIso: string,
): Promise<{ code_hash: string; attempts: number } | null> {
  return d1
    .prepare(
      `UPDATE sign_in_codes SET attempts = attempts + 1
       WHERE email = ? AND attempts < ? AND expires_at > ?
       RETURNING code_hash, attempts`,
    )
    .bind(email, maxTries, nowIso)
    .first();
}

export async function codeExpiry(d1: D1, email: string): Promise<string | null> {
  const row = await d1
    .prepare("SELECT expires_at FROM sign_in_codes WHERE email = ?")
    .bind(email)
    .first<{ expires_at: string }>();
  return row?.expires_at ?? null;
}

/** Uses the code up: true for the one caller whose delete took the row. */
export async function useSignInCode(d1: D1, email: string, codeHash: string): Promise<boolean> {
  const used = await d1
    .prepare("DELETE FROM sign_in_codes WHERE email = ? AND code_hash = ?")
    .bind(email, codeHash)
    .run();
  return used.meta.changes === 1;
}

// ---- mail_outbox (the local mail carrier's, where `npm run admin -- outbox` reads codes)

export async function keepLocalMail(
  d1: D1,
  message: { to: string; subject: string; text: string; code?: string },
): Promise<void> {
  await d1
    .prepare("INSERT INTO mail_outbox (id, to_email, subject, text, code) VALUES (?, ?, ?, ?, ?)")
    .bind(crypto.randomUUID(), message.to, message.subject, message.text, message.code ?? null)
    .run();
}

// ---- key_reveals

/** Keeps a sealed key for one showing, dropping rows of any account that ran out unread. */
export async function keepKeyReveal(
  d1: D1,
  reveal: {
    tokenHash: string;
    accountId: string;
    keyId: string;
    sealed: string;
    expiresAt: string;
  },
  now: number,
): Promise<void> {
  await d1.batch([
    d1.prepare("DELETE FROM key_reveals WHERE expires_at <= ?").bind(new Date(now).toISOString()),
    d1
      .prepare(
        "INSERT INTO key_reveals (token_hash, account_id, key_id, sealed_key, expires_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(reveal.tokenHash, reveal.accountId, reveal.keyId, reveal.sealed, reveal.expiresAt),
  ]);
}

/** The reveal's row, deleted in the same statement that reads it. */
export async function takeKeyReveal(
  d1: D1,
  tokenHash: string,
  accountId: string,
): Promise<{ key_id: string; sealed_key: string; expires_at: string } | null> {
  return d1
    .prepare(
      "DELETE FROM key_reveals WHERE token_hash = ? AND account_id = ? RETURNING key_id, sealed_key, expires_at",
    )
    .bind(tokenHash, accountId)
    .first();
}
