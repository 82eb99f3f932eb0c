// An account's event log: sign-ins, sign-outs, keys and the webhook secret, each with the
// network and browser it came from, for the owner to read on the dashboard's activity page.
// Bounded: each write drops the account's rows past the newest ACCOUNT_EVENTS_KEPT.
// The log also tells sign-in which networks an address's owner signed in from
// (edge/auth/code-limits.ts). Its rows live in edge/storage/accounts.ts.
import type { Context } from "hono";
import { type AccountEventKind, EVENT_USER_AGENT_MAX } from "../../schema/account-events.ts";
import type { AppEnv } from "../context.ts";
import { ipSubject } from "../middleware/rate-limit.ts";
import type { EventOrigin } from "../storage/accounts.ts";
import { accountEventStatements } from "../storage/accounts.ts";

export type { EventOrigin } from "../storage/accounts.ts";

export function eventOrigin(c: Context<AppEnv>): EventOrigin {
  const userAgent = c.req.header("user-agent")?.trim().slice(0, EVENT_USER_AGENT_MAX);
  return { network: ipSubject(c.get("clientIp")), userAgent: userAgent || null };
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
