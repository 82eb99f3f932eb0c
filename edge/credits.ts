// Settling credits: the ledger's statements are edge/storage/ledger.ts's; this is how a caller
// tells that a write of the ledger (or of another row whose id makes it once-only: a Stripe
// event, an Idempotency-Key) was refused because it was done already.

/** D1 refused the write as a second row with the same unique key: it was done already. */
export function isUniqueViolation(err: unknown): boolean {
  return String(err).includes("UNIQUE constraint failed");
}
