// An account's event log: sign-ins, sign-outs, keys and the webhook secret, each with the
// network and browser it came from, for the owner to read on the dashboard's activity page.
// Bounded: each write drops the account's rows past the newest ACCOUNT_EVENTS_KEPT.
// The log also tells sign-in which networks an address's owner signed in from
// (edge/auth/code-limits.ts).
import type { Context } from "hono";
import {
  ACCOUNT_EVENTS_KEPT,
  type AccountEventKind,
  EVENT_DETAIL_MAX,
  EVENT_USER_AGENT_MAX,
} from "../../schema/account-events.ts";
import type { AccountEventRow } from "../../schema/db.ts";
import type { AppEnv } from "../context.ts";
import { ipSubject } from "../middleware/rate-limit.ts";

/** Where an event came from. */
export interface EventOrigin {
  /** The client's address as limits count it: an IPv4 address, an IPv6 /64. */
  network: string;
  userAgent: string | null;
}

export function eventOrigin(c: Context<AppEnv>): EventOrigin {
  const userAgent = c.req.header("user-agent")?.trim().slice(0, EVENT_USER_AGENT_MAX);
  return { network: ipSubject(c.get("clientIp")), userAgent: userAgent || null };
}

/** The statements that write one event and drop the account's oldest past the bound. */
export function accountEventStatements(
  db: D1Database,
  accountId: string,
  kind: AccountEventKind,
  origin: EventOrigin,
  detail?: string,
): D1PreparedStatement[] {
  return [
    db
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
    db
      .prepare(
        `DELETE FROM account_events WHERE account_id = ?1 AND rowid NOT IN (
           SELECT rowid FROM account_events WHERE account_id = ?1
           ORDER BY created_at DESC, rowid DESC LIMIT ?2)`,
      )
      .bind(accountId, ACCOUNT_EVENTS_KEPT),
  ];
}

export async function recordAccountEvent(
  env: Env,
  accountId: string,
  kind: AccountEventKind,
  origin: EventOrigin,
  detail?: string,
): Promise<void> {
  await env.DB.batch(accountEventStatements(env.DB, accountId, kind, origin, detail));
}

export type AccountEvent = Pick<
  AccountEventRow,
  "kind" | "network" | "userAgent" | "detail" | "createdAt"
>;

/** The account's events, newest first. */
export async function recentAccountEvents(
  env: Env,
  accountId: string,
  limit = ACCOUNT_EVENTS_KEPT,
): Promise<AccountEvent[]> {
  const { results } = await env.DB.prepare(
    `SELECT kind, network, user_agent AS userAgent, detail, created_at AS createdAt
     FROM account_events WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
  )
    .bind(accountId, limit)
    .all<AccountEvent>();
  return results;
}

/** Whether the owner of `email` signed in from `network` since `since`. */
export async function hasSignedInFrom(
  env: Env,
  email: string,
  network: string,
  since: Date,
): Promise<boolean> {
  const row = await env.DB.prepare(
    `SELECT 1 AS known FROM account_events e JOIN accounts a ON a.id = e.account_id
     WHERE a.email = ? AND e.kind = 'sign_in' AND e.network = ? AND e.created_at > ? LIMIT 1`,
  )
    .bind(email, network, since.toISOString())
    .first<{ known: number }>();
  return row !== null;
}
