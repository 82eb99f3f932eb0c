// Where the sign-in pages and the dashboard are, and what guards each: every account page sends
// the strict Content-Security-Policy and takes form posts only from our own origin (CSRF); the
// dashboard needs a session. The handlers are the page modules' (sign-in.tsx, keys.tsx …).

export const ACCOUNT_PAGES = {
  signIn: "/sign-in",
  signInCode: "/sign-in/code",
  signOut: "/sign-out",
  overview: "/dashboard",
  jobs: "/dashboard/jobs",
  // Before job: "live" is not a job id.
  liveJobs: "/dashboard/jobs/live",
  job: "/dashboard/jobs/:id",
  jobFramesZip: "/dashboard/jobs/:id/frames.zip",
  batches: "/dashboard/batches",
  batch: "/dashboard/batches/:id",
  keys: "/dashboard/keys",
  revokeKey: "/dashboard/keys/:id/revoke",
  billing: "/dashboard/billing",
  checkout: "/dashboard/checkout",
  billingPortal: "/dashboard/billing/portal",
  webhooks: "/dashboard/webhooks",
  revealWebhookSecret: "/dashboard/webhooks/reveal",
  rotateWebhookSecret: "/dashboard/webhooks/rotate",
  testWebhook: "/dashboard/webhooks/test",
  webhookDelivery: "/dashboard/webhooks/deliveries/:id",
  resendWebhookDelivery: "/dashboard/webhooks/deliveries/:id/resend",
  activity: "/dashboard/activity",
  usage: "/dashboard/usage",
  ledgerCsv: "/dashboard/usage/ledger.csv",
  requests: "/dashboard/requests",
} as const;

/**
 * Paths that are account pages: page headers, and every request but GET, HEAD and OPTIONS
 * from our own pages only (edge/auth/guards.ts sameOriginForms), whatever its body.
 */
export const PAGE_PATHS = ["/sign-in", "/sign-in/*", "/sign-out", "/dashboard", "/dashboard/*"];
/** Paths that need a signed-in session (others are sent to sign-in). */
export const SESSION_PATHS = ["/dashboard", "/dashboard/*"];
