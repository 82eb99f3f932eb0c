// D1 tables. drizzle-kit generates the SQL migrations from this file into schema/migrations,
// the folder wrangler.toml's migrations_dir names.
import { sql } from "drizzle-orm";
import {
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

const createdAt = () =>
  text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  plan: text("plan").notNull().default("free"),
  /** Plan credits left this period; reset each period. */
  planCredits: integer("plan_credits").notNull().default(0),
  /** Pack credits; never expire. */
  packCredits: integer("pack_credits").notNull().default(0),
  /** Credits held by jobs that have not finished (reserve at creation, settle at completion). */
  reservedCredits: integer("reserved_credits").notNull().default(0),
  periodStart: text("period_start"),
  periodEnd: text("period_end"),
  subscriptionStatus: text("subscription_status"),
  cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull().default(false),
  /** Standard Webhooks signing secret, `whsec_` + base64. */
  webhookSecret: text("webhook_secret").notNull(),
  /**
   * The secret a rotation replaced, still signing beside the new one until
   * `previous_webhook_secret_until` (decision 0211), so receivers can switch without a gap.
   */
  previousWebhookSecret: text("previous_webhook_secret"),
  previousWebhookSecretUntil: text("previous_webhook_secret_until"),
  /** Stripe's customer and subscription of this account, once it has bought something. */
  stripeCustomerId: text("stripe_customer_id"),
  stripeSubscriptionId: text("stripe_subscription_id"),
  /**
   * `created` (Unix seconds) of the newest Stripe subscription event applied: an older event
   * that arrives late never overwrites a newer state.
   */
  subscriptionEventAt: integer("subscription_event_at"),
  /**
   * The highest monthly allowance already granted this period (set whenever a period starts or
   * a plan changes): switching plans back and forth within one period grants it only once.
   * Null means the allowance of the plan the account is on (accounts created before it existed,
   * or created with their plan's credits and never changed since).
   */
  periodAllowanceGranted: integer("period_allowance_granted"),
  createdAt: createdAt(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    /** Hex SHA-256 of the whole key; the key itself is never stored. */
    keyHash: text("key_hash").notNull(),
    /** The first characters of the secret part, to tell keys apart in a dashboard. */
    hint: text("hint").notNull(),
    /** A label the owner gives the key in the dashboard. */
    name: text("name").notNull().default(""),
    createdAt: createdAt(),
    /** Written at most about once a minute per key, not on every request. */
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash").on(t.keyHash), index("api_keys_account").on(t.accountId)],
);

export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    status: text("status").notNull(),
    url: text("url").notNull(),
    /** The normalised URL the extractor fetches (differs from url for e.g. Drive links). */
    sourceUrl: text("source_url").notNull(),
    platform: text("platform").notNull(),
    options: text("options", { mode: "json" }).notNull(),
    webhookUrl: text("webhook_url"),
    durationSeconds: real("duration_seconds"),
    processedSeconds: real("processed_seconds"),
    framesCount: integer("frames_count"),
    framesFailed: integer("frames_failed").notNull().default(0),
    creditsReserved: integer("credits_reserved").notNull().default(0),
    creditsCharged: integer("credits_charged"),
    width: integer("width"),
    height: integer("height"),
    zipKey: text("zip_key"),
    zipBytes: integer("zip_bytes"),
    requestedResolution: integer("requested_resolution"),
    deliveredResolution: integer("delivered_resolution"),
    resolutionNote: text("resolution_note"),
    notice: text("notice").notNull().default(""),
    error: text("error", { mode: "json" }),
    attempts: integer("attempts").notNull().default(0),
    /** The attempt the job was last dispatched as (edge/jobs/lifecycle.ts). */
    attemptId: text("attempt_id"),
    /** While processing: when the running attempt counts as lost unless it renews its lease. */
    leaseExpiresAt: text("lease_expires_at"),
    /** What the extractor learned about the source (schema/api.ts VideoSchema). */
    video: text("video", { mode: "json" }),
    /** The captions file: { key, language, source }, or { note } when there are none. */
    captions: text("captions", { mode: "json" }),
    /** The storyboard's files and grid (schema/messages.ts ResultStoryboardSchema). */
    storyboard: text("storyboard", { mode: "json" }),
    /** The moving preview's file and facts (schema/messages.ts ResultAnimatedSchema). */
    animated: text("animated", { mode: "json" }),
    /** With a token budget: what it chose, measured on the frames (ResultBudgetSchema). */
    budget: text("budget", { mode: "json" }),
    /** X-Request-Id of the request that created the job, so a failed job's page can name it. */
    requestId: text("request_id"),
    /**
     * Reuse (decision 0350): hashes of what the extractor reported the source to be and of the
     * options that shape the frames, written when the source is known; a later job of the same
     * account with both equal may be served this job's frames.
     */
    sourceKey: text("source_key"),
    optionsKey: text("options_key"),
    /** The earlier job whose frames this one was served instead of extracting. */
    reusedFrom: text("reused_from"),
    /** The job under whose R2 prefix this job's files lie, when not its own (a reuse). */
    filesFrom: text("files_from"),
    createdAt: createdAt(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
    expiresAt: text("expires_at"),
  },
  (t) => [
    index("jobs_account_created").on(t.accountId, t.createdAt),
    index("jobs_reuse").on(t.accountId, t.optionsKey, t.sourceKey),
    index("jobs_files_from").on(t.filesFrom),
    index("jobs_status_expires").on(t.status, t.expiresAt),
    // Counting an account's active jobs at every creation reads only those jobs.
    index("jobs_account_status").on(t.accountId, t.status),
  ],
);

export const demoJobs = sqliteTable(
  "demo_jobs",
  {
    id: text("id").primaryKey(),
    /** SHA-256 of the client IP: enough to count, nothing to leak. */
    ipHash: text("ip_hash").notNull(),
    status: text("status").notNull(),
    url: text("url").notNull(),
    sourceUrl: text("source_url").notNull(),
    platform: text("platform").notNull(),
    durationSeconds: real("duration_seconds"),
    framesCount: integer("frames_count"),
    framesFailed: integer("frames_failed").notNull().default(0),
    width: integer("width"),
    height: integer("height"),
    error: text("error", { mode: "json" }),
    attempts: integer("attempts").notNull().default(0),
    attemptId: text("attempt_id"),
    leaseExpiresAt: text("lease_expires_at"),
    /** The moving preview, when the demo asked for one (as jobs.animated). */
    animated: text("animated", { mode: "json" }),
    createdAt: createdAt(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
    expiresAt: text("expires_at"),
  },
  (t) => [index("demo_jobs_status_expires").on(t.status, t.expiresAt)],
);

/** Frames of jobs and demo jobs alike (their ids are UUIDs from one space). */
export const frames = sqliteTable(
  "frames",
  {
    jobId: text("job_id").notNull(),
    index: integer("idx").notNull(),
    timestamp: real("timestamp").notNull(),
    pts: real("pts"),
    status: text("status").notNull(),
    key: text("r2_key"),
    error: text("error"),
    sceneScore: real("scene_score"),
    movedTo: real("moved_to"),
    movedReason: text("moved_reason"),
    caption: text("caption"),
    /** The frame's small picture for galleries (extractor/output/thumbnails.ts); null before. */
    thumbKey: text("thumb_key"),
    /** best mode: the frame's score and its parts (schema/api.ts ScorePartsSchema). */
    score: real("score"),
    scoreParts: text("score_parts", { mode: "json" }),
    /** With text: what was read on the frame (schema/text.ts FrameTextSchema); null before. */
    text: text("text", { mode: "json" }),
    /** slides mode: {start, end, repeat_of} (schema/api.ts FrameSlideSchema); null otherwise. */
    slide: text("slide", { mode: "json" }),
    /** live mode: when the frame was on air (ISO 8601) and its source (decision 0360). */
    capturedAt: text("captured_at"),
    capturedAtSource: text("captured_at_source"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.index] })],
);

/**
 * Append-only credit ledger. Each entry id is derived from what caused it
 * (`reserve:<job>`, `settle:<job>`), so a redelivered message cannot write it twice.
 */
export const creditLedger = sqliteTable(
  "credit_ledger",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    jobId: text("job_id"),
    kind: text("kind").notNull(),
    /** Change of spendable plan and pack credits (negative = spent). */
    planDelta: integer("plan_delta").notNull().default(0),
    packDelta: integer("pack_delta").notNull().default(0),
    /** Change of reserved credits (positive = held). */
    reservedDelta: integer("reserved_delta").notNull().default(0),
    note: text("note"),
    createdAt: createdAt(),
  },
  (t) => [index("credit_ledger_account").on(t.accountId, t.createdAt)],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    jobId: text("job_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] })],
);

/** Settled extraction results, one per job: the guard that makes settlement happen once. */
export const settlements = sqliteTable("settlements", {
  jobId: text("job_id").primaryKey(),
  attemptId: text("attempt_id").notNull(),
  createdAt: createdAt(),
});

/**
 * One-time sign-in codes, one live code per address: a repeated request re-sends the live
 * code (edge/auth/codes.ts), so nobody's request kills a code on its way to its owner. Only a
 * hash of the code is kept, and the nonce it is drawn from with a server secret, which alone
 * gives nothing away; `attempts` counts wrong guesses.
 */
export const signInCodes = sqliteTable("sign_in_codes", {
  email: text("email").primaryKey(),
  codeHash: text("code_hash").notNull(),
  codeNonce: text("code_nonce"),
  expiresAt: text("expires_at").notNull(),
  attempts: integer("attempts").notNull().default(0),
  createdAt: createdAt(),
});

/** Dashboard sessions: the cookie holds an opaque token, D1 only its SHA-256. */
export const sessions = sqliteTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    createdAt: createdAt(),
    /** Sliding expiry: moved forward as the session is used. */
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("sessions_account").on(t.accountId)],
);

/**
 * What happened to an account, for its owner to read (edge/auth/account-events.ts): sign-ins
 * and sign-outs, keys created and revoked, the webhook secret revealed and rotated. Bounded:
 * only the newest ACCOUNT_EVENTS_KEPT rows of an account are kept. `network` is the client's
 * address as the rate limits count it (an IPv6 client's /64).
 */
export const accountEvents = sqliteTable(
  "account_events",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    kind: text("kind").notNull(),
    network: text("network").notNull(),
    userAgent: text("user_agent"),
    /** What the event was about: a key's name and hint, a connector's name. */
    detail: text("detail"),
    createdAt: createdAt(),
  },
  (t) => [index("account_events_account").on(t.accountId, t.createdAt)],
);

/**
 * Mail the local sender "sent" (`npm start`, tests): `npm run admin -- outbox` reads it.
 * Production senders never write here.
 */
export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    toEmail: text("to_email").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    /** The sign-in code the message carries, if any. */
    code: text("code"),
    createdAt: createdAt(),
  },
  (t) => [index("mail_outbox_to").on(t.toEmail, t.createdAt)],
);

/**
 * A new API key waiting to be shown once (the dashboard creates it on a POST and shows it on
 * the GET it redirects to). The row is deleted as it is read. It holds the key sealed with a
 * key derived from a token only the redirect carries, and the token's hash: the row alone
 * reveals nothing. Rows nobody read are dropped after a few minutes.
 */
export const keyReveals = sqliteTable(
  "key_reveals",
  {
    tokenHash: text("token_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    keyId: text("key_id")
      .notNull()
      .references(() => apiKeys.id),
    /** base64 of the AES-GCM IV followed by the ciphertext of the key. */
    sealedKey: text("sealed_key").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("key_reveals_expires").on(t.expiresAt)],
);

/** Stripe events already applied, by event id: a redelivered event changes nothing. */
export const stripeEvents = sqliteTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  accountId: text("account_id"),
  createdAt: createdAt(),
});

/**
 * The webhook delivery log (edge/storage/webhooks.ts, decision 0210): one row per event sent to
 * a receiver, its id the event's `webhook-id`. `attempts` is a JSON array of what each attempt
 * got (schema/webhook-deliveries.ts WebhookAttempt); `body` the body last sent. Bounded: 30
 * days, and an account's newest WEBHOOK_DELIVERIES_KEPT rows.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    type: text("type").notNull(),
    jobId: text("job_id"),
    url: text("url").notNull(),
    body: text("body"),
    bodyTruncated: integer("body_truncated", { mode: "boolean" }).notNull().default(false),
    attempts: text("attempts").notNull().default("[]"),
    attemptsCount: integer("attempts_count").notNull().default(0),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    lastAttemptAt: text("last_attempt_at"),
    deliveredAt: text("delivered_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("webhook_deliveries_account").on(t.accountId, t.createdAt),
    index("webhook_deliveries_created").on(t.createdAt),
  ],
);

/**
 * The account's recent API requests (decision 0250): one row per request made with one of its
 * keys to /v1/* or /mcp, written behind the response. Bounded to the newest API_REQUESTS_KEPT
 * per account and API_REQUEST_DAYS (schema/api-requests.ts); `route` is the route's pattern,
 * never the path as sent or its query.
 */
export const apiRequests = sqliteTable(
  "api_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: false }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    requestId: text("request_id").notNull(),
    method: text("method").notNull(),
    route: text("route").notNull(),
    status: integer("status").notNull(),
    /** The error's `data.name` when the answer was one (InvalidRequest, JobNotFound …). */
    error: text("error"),
    latencyMs: integer("latency_ms").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("api_requests_account").on(t.accountId, t.id),
    index("api_requests_request_id").on(t.accountId, t.requestId),
    index("api_requests_created").on(t.createdAt),
  ],
);

/**
 * Batches (POST /v1/batches, decision 0340): many links with one set of job options. Each item
 * becomes an ordinary job when the account has room for it (edge/batches/). `state` is
 * "active" until every item has ended, then "completed", written once (edge/batches/lifecycle.ts).
 */
export const batches = sqliteTable(
  "batches",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    state: text("state").notNull().default("active"),
    /** The job options every item takes (the request without its links), as JSON. */
    options: text("options").notNull(),
    webhookUrl: text("webhook_url"),
    itemCount: integer("item_count").notNull(),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash").notNull(),
    requestId: text("request_id"),
    createdAt: createdAt(),
    completedAt: text("completed_at"),
    /**
     * When batch.completed was handed to the webhooks queue; null while a completed batch with a
     * webhook_url still owes it (a send that failed after the state changed), so the cron sends
     * it again (edge/batches/lifecycle.ts).
     */
    eventQueuedAt: text("event_queued_at"),
  },
  (t) => [
    index("batches_account").on(t.accountId, t.createdAt),
    index("batches_state").on(t.state),
    uniqueIndex("batches_idempotency").on(t.accountId, t.idempotencyKey),
  ],
);

/**
 * A batch's items, in the order given: "pending" until its job is created, "job" once it is
 * (job_id set), or "failed" when it could not become a job (error: a JobError as JSON).
 */
export const batchItems = sqliteTable(
  "batch_items",
  {
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id),
    index: integer("idx").notNull(),
    url: text("url").notNull(),
    state: text("state").notNull().default("pending"),
    jobId: text("job_id"),
    error: text("error"),
  },
  (t) => [
    primaryKey({ columns: [t.batchId, t.index] }),
    index("batch_items_job").on(t.jobId),
    index("batch_items_state").on(t.batchId, t.state),
  ],
);

export type AccountRow = typeof accounts.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type ApiRequestRow = typeof apiRequests.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
export type DemoJobRow = typeof demoJobs.$inferSelect;
export type FrameRow = typeof frames.$inferSelect;
export type BatchRow = typeof batches.$inferSelect;
export type BatchItemRow = typeof batchItems.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type AccountEventRow = typeof accountEvents.$inferSelect;
