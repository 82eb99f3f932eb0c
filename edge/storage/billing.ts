// The storage module of billing's Stripe side (issue 35, decision 0261): which Stripe
// events were applied, and which account a Stripe customer is. Prepared SQL, as the accounts
// store: an event is recorded in the same batch as the statements it stands for
// (schema/ledger.ts builds those), and its unique id is what makes a replay a duplicate.
import type { Statement } from "../../schema/accounts.ts";
import type { D1 } from "./accounts.ts";
import { bound } from "./accounts.ts";

export async function stripeEventSeen(d1: D1, eventId: string): Promise<boolean> {
  return (
    (await d1.prepare("SELECT 1 FROM stripe_events WHERE id = ?").bind(eventId).first()) !== null
  );
}

/**
 * Records the event and applies its statements in one batch. Throws D1's unique violation when
 * the event, or another for the same session or invoice, was applied meanwhile.
 */
export async function applyStripeStatements(
  d1: D1,
  event: { id: string; type: string; accountId: string | null },
  statements: Statement[],
): Promise<void> {
  await d1.batch([
    d1
      .prepare("INSERT INTO stripe_events (id, type, account_id) VALUES (?, ?, ?)")
      .bind(event.id, event.type, event.accountId),
    ...statements.map((s) => bound(d1, s)),
  ]);
}

/** Remembers an event whose effect is already there, so it is not tried again. */
export async function rememberStripeEvent(
  d1: D1,
  event: { id: string; type: string; accountId: string | null },
): Promise<void> {
  await d1
    .prepare("INSERT OR IGNORE INTO stripe_events (id, type, account_id) VALUES (?, ?, ?)")
    .bind(event.id, event.type, event.accountId)
    .run();
}

export async function accountExists(d1: D1, accountId: string): Promise<boolean> {
  return (await d1.prepare("SELECT 1 FROM accounts WHERE id = ?").bind(accountId).first()) !== null;
}

export async function accountOfCustomer(d1: D1, customerId: string): Promise<string | null> {
  const row = await d1
    .prepare("SELECT id FROM accounts WHERE stripe_customer_id = ?")
    .bind(customerId)
    .first<{ id: string }>();
  return row?.id ?? null;
}

/**
 * Stores the account's Stripe customer unless it has one already, and returns the one kept
 * (two first purchases at once share the first), or null when the account is gone.
 */
export async function keepCustomerId(
  d1: D1,
  accountId: string,
  customerId: string,
): Promise<string | null> {
  const stored = await d1
    .prepare(
      `UPDATE accounts SET stripe_customer_id = coalesce(stripe_customer_id, ?1) WHERE id = ?2
       RETURNING stripe_customer_id`,
    )
    .bind(customerId, accountId)
    .first<{ stripe_customer_id: string }>();
  return stored?.stripe_customer_id ?? null;
}
