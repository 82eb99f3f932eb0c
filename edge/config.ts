// The worker's settings: its vars and secrets (wrangler.toml, `wrangler secret put`) parsed
// with zod once per isolate, so a bad value is found on the first request with one clear log
// line naming it, not deep inside a job. Every setting is listed here with its default (README
// "Configuration"). Bindings (DB, FILES, queues …) are not settings and stay on `env`.
import { z } from "zod";

/** Where the public API is reached when neither PUBLIC_BASE_URL nor a request says so. */
export const LOCAL_ORIGIN = "http://127.0.0.1:8787";

// An empty (or blank) var means "not set", as wrangler.toml's `FOO = ""` does.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess(
    (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
    schema.optional(),
  );
const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const origin = httpUrl
  .refine((value) => /^[^?#]*$/.test(value) && new URL(value).pathname === "/", {
    error: "must be an origin (scheme, host and port; no path, query or fragment)",
  })
  .transform((value) => new URL(value).origin);

/** The carriers of sign-in mail (edge/mail/sender.ts maps each to its sender). */
export const MAIL_SENDERS = ["local", "resend"] as const;
export type MailSenderName = (typeof MAIL_SENDERS)[number];

const settings = z.object({
  PUBLIC_BASE_URL: optional(origin),
  EXTRACTOR_URL: optional(httpUrl),
  STILLS_ALLOW_PRIVATE_NETWORK: optional(z.enum(["0", "1"])).default("0"),
  STILLS_DEMO_DAILY_LIMIT: optional(z.coerce.number().int().min(0).max(1_000_000)).default(5),
  /** `1`: the development-only /__dev/* routes (edge/routes/dev/); never with a public origin. */
  STILLS_DEV_ROUTES: optional(z.enum(["0", "1"])).default("0"),
  JOB_LEASE_SECONDS: optional(z.coerce.number().int().min(1).max(600)).default(30),
  MAIL_SENDER: optional(
    z.enum(MAIL_SENDERS, {
      error: (issue) => `is ${JSON.stringify(issue.input)}, not one of ${MAIL_SENDERS.join(", ")}`,
    }),
  ).default("local"),
  MAIL_FROM: optional(z.string().trim().min(3)).default("Stills <sign-in@stills.dev>"),
  STRIPE_API_BASE: optional(origin),
  STRIPE_PRICE_STARTER: optional(z.string().trim()),
  STRIPE_PRICE_PRO: optional(z.string().trim()),
  STRIPE_PRICE_SCALE: optional(z.string().trim()),
  STRIPE_PRICE_PACK: optional(z.string().trim()),
  R2_ACCOUNT_ID: optional(z.string().regex(/^[0-9a-f]{32}$/, "must be a 32-hex account id")),
  R2_S3_ENDPOINT: optional(origin),
  R2_BUCKET_NAME: optional(
    z.string().regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, "must be an R2 bucket name"),
  ),
  R2_ACCESS_KEY_ID: optional(z.string().trim()),
  R2_SECRET_ACCESS_KEY: optional(z.string().trim()),
  INTERNAL_TOKEN: z.string({ error: "is not set (wrangler secret put INTERNAL_TOKEN)" }).min(16),
  FILE_URL_SECRET: z.string({ error: "is not set (wrangler secret put FILE_URL_SECRET)" }).min(16),
  STRIPE_SECRET_KEY: optional(z.string().trim()),
  STRIPE_WEBHOOK_SECRET: optional(z.string().trim()),
  RESEND_API_KEY: optional(z.string().trim()),
});

export interface EdgeConfig {
  /** PUBLIC_BASE_URL's origin; unset: each request's own origin (publicBaseUrl). */
  publicBaseUrl: string | undefined;
  /** Where the jobs consumer reaches the extractor without the container binding (local). */
  extractorUrl: string | undefined;
  allowPrivateNetwork: boolean;
  demoDailyLimit: number;
  /** The development-only /__dev/* routes are served (local stacks only; edge/routes/dev/). */
  devRoutes: boolean;
  /** Seconds a dispatched attempt's lease lasts before the backstop may take the job over. */
  jobLeaseSeconds: number;
  mail: { sender: MailSenderName; from: string; resendApiKey: string | undefined };
  stripe: {
    apiBase: string | undefined;
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    prices: { starter?: string; pro?: string; scale?: string; pack?: string };
  };
  /** R2's S3 API (edge/storage/r2-presign.ts); presigned URLs only when all are set. */
  r2: {
    accountId?: string;
    s3Endpoint?: string;
    bucketName?: string;
    accessKeyId?: string;
    secretAccessKey?: string;
  };
  /** Keys of the edge's own signatures (file URLs, sign-in codes) and the extractor's token. */
  secrets: { internalToken: string; fileUrlSecret: string };
}

/** A setting with a bad value: the message names every one of them and what is wrong. */
export class EdgeConfigError extends Error {
  override name = "EdgeConfigError";
}

/** An origin on this machine (127.0.0.0/8, [::1] or localhost), as local stacks use. */
export function isLoopbackOrigin(value: string): boolean {
  const host = new URL(value).hostname;
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

export function parseEdgeConfig(env: Record<string, unknown>): EdgeConfig {
  const parsed = settings.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
    throw new EdgeConfigError(`edge settings: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  if (e.STILLS_DEV_ROUTES === "1" && e.PUBLIC_BASE_URL && !isLoopbackOrigin(e.PUBLIC_BASE_URL)) {
    throw new EdgeConfigError(
      `edge settings: STILLS_DEV_ROUTES is "1" with a public PUBLIC_BASE_URL (${e.PUBLIC_BASE_URL}); the development routes are for local stacks only`,
    );
  }
  return {
    publicBaseUrl: e.PUBLIC_BASE_URL,
    extractorUrl: e.EXTRACTOR_URL,
    allowPrivateNetwork: e.STILLS_ALLOW_PRIVATE_NETWORK === "1",
    demoDailyLimit: e.STILLS_DEMO_DAILY_LIMIT,
    devRoutes: e.STILLS_DEV_ROUTES === "1",
    jobLeaseSeconds: e.JOB_LEASE_SECONDS,
    mail: { sender: e.MAIL_SENDER, from: e.MAIL_FROM, resendApiKey: e.RESEND_API_KEY },
    stripe: {
      apiBase: e.STRIPE_API_BASE,
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      prices: {
        starter: e.STRIPE_PRICE_STARTER,
        pro: e.STRIPE_PRICE_PRO,
        scale: e.STRIPE_PRICE_SCALE,
        pack: e.STRIPE_PRICE_PACK,
      },
    },
    r2: {
      accountId: e.R2_ACCOUNT_ID,
      s3Endpoint: e.R2_S3_ENDPOINT,
      bucketName: e.R2_BUCKET_NAME,
      accessKeyId: e.R2_ACCESS_KEY_ID,
      secretAccessKey: e.R2_SECRET_ACCESS_KEY,
    },
    secrets: { internalToken: e.INTERNAL_TOKEN, fileUrlSecret: e.FILE_URL_SECRET },
  };
}

const SETTING_NAMES = Object.keys(settings.shape);
// A few sets of values at most: an isolate keeps its env; tests pass a handful of their own.
const MAX_PARSED = 32;
const parsedConfigs = new Map<string, EdgeConfig>();

/**
 * The settings of this env, parsed once per set of values; throws EdgeConfigError on a bad
 * value. Keyed by the values, not the object: `env` from "cloudflare:workers" is one object
 * whose values change under withEnv, so an identity cache would hand back stale settings.
 */
export function edgeConfig(env: Env): EdgeConfig {
  const vars = env as unknown as Record<string, unknown>;
  const key = JSON.stringify(SETTING_NAMES.map((name) => vars[name] ?? null));
  let config = parsedConfigs.get(key);
  if (!config) {
    config = parseEdgeConfig(vars);
    if (parsedConfigs.size >= MAX_PARSED)
      parsedConfigs.delete(parsedConfigs.keys().next().value as string);
    parsedConfigs.set(key, config);
  }
  return config;
}

/**
 * The one rule for the public origin (signed file URLs, callbacks, samples, the OAuth issuer):
 * PUBLIC_BASE_URL when set, else the origin the request came to, else (queue and cron work,
 * which have no request) the local stack's.
 */
export function publicBaseUrl(env: Env, requestUrl?: string): string {
  return edgeConfig(env).publicBaseUrl ?? (requestUrl ? new URL(requestUrl).origin : LOCAL_ORIGIN);
}
