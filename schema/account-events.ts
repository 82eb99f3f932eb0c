// The account's event log (table `account_events` in schema/db.ts): which events there are,
// how they read to the owner, and its bounds.

export const ACCOUNT_EVENT_KINDS = [
  "sign_in",
  "account_created",
  "sign_out",
  "key_created",
  "key_revoked",
  "webhook_secret_revealed",
  "webhook_secret_rotated",
] as const;

export type AccountEventKind = (typeof ACCOUNT_EVENT_KINDS)[number];

/** How each event reads on the dashboard's activity page. */
export const ACCOUNT_EVENT_LABELS: Record<AccountEventKind, string> = {
  sign_in: "Signed in",
  account_created: "Account created",
  sign_out: "Signed out",
  key_created: "API key created",
  key_revoked: "API key revoked",
  webhook_secret_revealed: "Webhook signing secret shown",
  webhook_secret_rotated: "Webhook signing secret rotated",
};

/**
 * Only the owner's own actions write events (a stranger cannot sign in, and code requests are
 * not logged), so nobody else can push the owner's history out of these rows.
 */
export const ACCOUNT_EVENTS_KEPT = 200;
export const EVENT_USER_AGENT_MAX = 200;
export const EVENT_DETAIL_MAX = 120;
