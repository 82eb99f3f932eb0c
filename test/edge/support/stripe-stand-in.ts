// Stripe, stood in for inside workerd: its API (customers, Checkout Sessions, portal sessions)
// answers from here through the outbound-fetch hook and records what it was asked, and its
// webhook deliveries are built here as signed events sent to the worker's own fetch handler.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createHash, createHmac } from "node:crypto";
import Stripe from "stripe";
import worker from "../../../edge/index.ts";
import { api, ORIGIN, type TestAccount } from "./api.ts";
import { afterEachTest, setExtractor, setOutbound } from "./fake-extractor.ts";
import { runFakeExtraction } from "./pipeline.ts";

export const PRICES = {
  starter: "price_test_starter",
  pro: "price_test_pro",
  scale: "price_test_scale",
  pack: "price_test_pack",
} as const;

export const SECRET_KEY = "sk_test_stills_stand_in";
export const WEBHOOK_SECRET = "whsec_test_stills_stand_in";
export const STRIPE_HOST = "stripe.test";

/** The worker's env with Stripe configured against the stand-in. */
export function stripeEnv(overrides: Partial<Env> = {}): Env {
  return {
    ...env,
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: `http://${STRIPE_HOST}`,
    STRIPE_PRICE_STARTER: PRICES.starter,
    STRIPE_PRICE_PRO: PRICES.pro,
    STRIPE_PRICE_SCALE: PRICES.scale,
    STRIPE_PRICE_PACK: PRICES.pack,
    ...overrides,
  };
}

export interface StripeCall {
  method: string;
  path: string;
  /** The form body as Stripe's SDK encodes it: `line_items[0][price]` → value. */
  params: Record<string, string>;
  authorization: string | null;
  idempotencyKey: string | null;
}

/**
 * Subscriptions as the stand-in's API holds them (GET /v1/subscriptions/{id}), by id. Making a
 * plan's Checkout Session (checkoutSession) puts its subscription here at the price of its
 * purchase; a test may then set another. Billing reads a bought plan from here, not from the
 * session.
 */
export const stripeSubscriptions = new Map<string, Record<string, unknown>>();

let installed: StripeCall[] | undefined;
afterEachTest(() => {
  // fake-extractor.ts takes the outbound hook off after each test.
  installed = undefined;
});

/** Installs the stand-in for this test (once); returns the calls it receives, in order. */
export function standInStripeApi(): StripeCall[] {
  if (installed) return installed;
  const calls: StripeCall[] = [];
  installed = calls;
  let serial = 0;
  setOutbound(async (request) => {
    const url = new URL(request.url);
    if (url.host !== STRIPE_HOST) {
      return new Response(`no network in tests: ${request.url}`, { status: 599 });
    }
    const form = new TextDecoder().decode(await request.arrayBuffer());
    const params = Object.fromEntries(new URLSearchParams(form));
    const call: StripeCall = {
      method: request.method,
      path: url.pathname,
      params,
      authorization: request.headers.get("authorization"),
      idempotencyKey: request.headers.get("idempotency-key"),
    };
    calls.push(call);
    if (call.authorization !== `Bearer ${SECRET_KEY}`) {
      return stripeError(401, "Invalid API Key provided");
    }
    serial++;
    if (request.method === "POST" && url.pathname === "/v1/customers") {
      return Response.json({
        id: `cus_standin_${serial}`,
        object: "customer",
        email: params.email ?? null,
        metadata: pick(params, "metadata"),
      });
    }
    if (request.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      const id = `cs_test_standin_${serial}`;
      return Response.json({
        id,
        object: "checkout.session",
        mode: params.mode,
        customer: params.customer ?? null,
        client_reference_id: params.client_reference_id ?? null,
        metadata: pick(params, "metadata"),
        payment_status: "unpaid",
        status: "open",
        url: `https://checkout.stripe.test/c/pay/${id}`,
      });
    }
    const subscriptionId = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname)?.[1];
    if (request.method === "GET" && subscriptionId) {
      const known = stripeSubscriptions.get(decodeURIComponent(subscriptionId));
      if (!known) return stripeError(404, `No such subscription: '${subscriptionId}'`);
      return Response.json(known);
    }
    if (request.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
      return Response.json({
        id: `bps_standin_${serial}`,
        object: "billing_portal.session",
        customer: params.customer,
        return_url: params.return_url,
        url: `https://billing.stripe.test/p/session/${serial}`,
      });
    }
    return stripeError(404, `Unrecognized request URL (${request.method}: ${url.pathname})`);
  });
  return calls;
}

function pick(params: Record<string, string>, prefix: string): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    const match = new RegExp(`^${prefix}\\[([^\\]]+)\\]$`).exec(key);
    if (match) picked[match[1]] = value;
  }
  return picked;
}

function stripeError(status: number, message: string) {
  return Response.json({ error: { type: "invalid_request_error", message } }, { status });
}

// ---- webhook deliveries ------------------------------------------------------------------

export interface StripeEventFixture {
  id: string;
  object: "event";
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  data: { object: Record<string, unknown> };
}

let eventSerial = 0;
/** A Stripe event; `created` defaults to a clock that only moves forward. */
export function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  created = 1_800_000_000 + ++eventSerial * 60,
): StripeEventFixture {
  return {
    id: `evt_standin_${crypto.randomUUID().replaceAll("-", "")}`,
    object: "event",
    type,
    created,
    api_version: "2026-10-28.endive",
    livemode: false,
    data: { object },
  };
}

export function checkoutSession(options: {
  accountId: string;
  customer: string;
  purchase: "starter" | "pro" | "scale" | "pack";
  subscription?: string;
  id?: string;
  paymentStatus?: "paid" | "unpaid" | "no_payment_required";
}) {
  const pack = options.purchase === "pack";
  if (!pack && options.subscription) {
    stripeSubscriptions.set(
      options.subscription,
      subscription({
        id: options.subscription,
        accountId: options.accountId,
        customer: options.customer,
        price: PRICES[options.purchase],
      }),
    );
  }
  return {
    id: options.id ?? `cs_test_${crypto.randomUUID().replaceAll("-", "")}`,
    object: "checkout.session",
    mode: pack ? "payment" : "subscription",
    payment_status: options.paymentStatus ?? "paid",
    status: "complete",
    client_reference_id: options.accountId,
    customer: options.customer,
    subscription: pack ? null : (options.subscription ?? null),
    metadata: { account_id: options.accountId, purchase: options.purchase },
  };
}

export function subscription(options: {
  id: string;
  accountId: string;
  customer: string;
  price: string;
  status?: string;
  cancelAtPeriodEnd?: boolean;
  periodStart?: number;
  periodEnd?: number;
  endedAt?: number | null;
}) {
  const start = options.periodStart ?? 1_800_000_000;
  return {
    id: options.id,
    object: "subscription",
    customer: options.customer,
    status: options.status ?? "active",
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    ended_at: options.endedAt ?? null,
    metadata: { account_id: options.accountId },
    items: {
      object: "list",
      data: [
        {
          id: `si_${options.id}`,
          object: "subscription_item",
          price: { id: options.price, object: "price" },
          current_period_start: start,
          current_period_end: options.periodEnd ?? start + 30 * 86_400,
        },
      ],
    },
  };
}

export function invoice(options: {
  id?: string;
  subscription: string;
  customer: string;
  billingReason?: string;
  periodStart: number;
  periodEnd: number;
}) {
  return {
    id: options.id ?? `in_${crypto.randomUUID().replaceAll("-", "")}`,
    object: "invoice",
    customer: options.customer,
    billing_reason: options.billingReason ?? "subscription_cycle",
    status: "paid",
    parent: {
      type: "subscription_details",
      subscription_details: { subscription: options.subscription, metadata: {} },
    },
    lines: {
      object: "list",
      data: [{ id: "il_1", period: { start: options.periodStart, end: options.periodEnd } }],
    },
  };
}

/**
 * The SDK's Workers build signs only asynchronously; generateTestHeaderString wants a
 * synchronous HMAC, which node:crypto gives (nodejs_compat). The worker verifies with
 * SubtleCrypto, so signer and verifier are two implementations.
 */
const nodeHmac = {
  computeHMACSignature: (payload: string, secret: string) =>
    createHmac("sha256", secret).update(payload, "utf8").digest("hex"),
  computeHMACSignatureAsync: async (payload: string, secret: string) =>
    createHmac("sha256", secret).update(payload, "utf8").digest("hex"),
  computeSHA256Async: async (data: Uint8Array) =>
    new Uint8Array(createHash("sha256").update(data).digest()),
};

/** Signs `body` as Stripe does (Stripe-Signature: t=…,v1=…). */
export function signatureFor(body: string, secret = WEBHOOK_SECRET, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    cryptoProvider: nodeHmac,
    ...(timestamp !== undefined && { timestamp }),
  });
}

export interface Delivery {
  status: number;
  body: any;
}

/** Delivers an event (or raw body) to the webhook as Stripe would, and waits for the answer. */
export async function deliver(
  event: StripeEventFixture | string,
  options: { signature?: string | null; env?: Env } = {},
): Promise<Delivery> {
  const body = typeof event === "string" ? event : JSON.stringify(event);
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "cf-connecting-ip": "198.51.100.7",
  };
  const signature = options.signature === undefined ? signatureFor(body) : options.signature;
  // Billing reads a bought plan's subscription from Stripe's API.
  standInStripeApi();
  if (signature !== null) headers["stripe-signature"] = signature;
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`${ORIGIN}/billing/stripe/webhook`, { method: "POST", headers, body }),
    options.env ?? stripeEnv(),
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

// ---- reading the account back -------------------------------------------------------------

/** Balances and what the ledger sums to: the two must always be equal. */
export async function balancesAndLedger(accountId: string) {
  return env.DB.prepare(
    `SELECT a.plan_credits AS plan, a.pack_credits AS pack, a.reserved_credits AS reserved,
            coalesce(sum(l.plan_delta), 0) AS ledger_plan,
            coalesce(sum(l.pack_delta), 0) AS ledger_pack,
            coalesce(sum(l.reserved_delta), 0) AS ledger_reserved
     FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
     WHERE a.id = ? GROUP BY a.id`,
  )
    .bind(accountId)
    .first<{
      plan: number;
      pack: number;
      reserved: number;
      ledger_plan: number;
      ledger_pack: number;
      ledger_reserved: number;
    }>();
}

export async function subscriptionOf(accountId: string) {
  return env.DB.prepare(
    `SELECT plan, subscription_status, cancel_at_period_end, stripe_customer_id,
            stripe_subscription_id, period_start, period_end, subscription_event_at
     FROM accounts WHERE id = ?`,
  )
    .bind(accountId)
    .first<{
      plan: string;
      subscription_status: string | null;
      cancel_at_period_end: number;
      stripe_customer_id: string | null;
      stripe_subscription_id: string | null;
      period_start: string | null;
      period_end: string | null;
      subscription_event_at: number | null;
    }>();
}

/**
 * Runs one job through the real API and queues (the fake extractor posts its result):
 * `seconds` of processed video are charged (1 credit per started minute, up to 3), or the
 * job fails and its hold is released. One request with wait=true, so the plan's rate limit is
 * not what a test measures. Returns the create status (201, or 402 when the account cannot
 * afford the hold) and the job's final status; anything else throws.
 */
export async function runJob(
  account: TestAccount,
  run: { seconds: number } | { fail: true },
): Promise<{ created: number; status?: string }> {
  setExtractor(async (request) => {
    await runFakeExtraction(
      request,
      "fail" in run
        ? { fail: { name: "PrivateContent", message: "HTTP 403 from origin", userMessage: "" } }
        : { framesOk: 1, processedSeconds: run.seconds },
    );
    return Response.json({ status: "fail" in run ? "failed" : "completed" });
  });
  const created = await api("POST", "/v1/jobs?wait=true", {
    body: { url: "https://cdn.example.com/clips/talk.mp4", count: 1, end: 180 },
    headers: account.auth,
  });
  if (created.status === 402) return { created: 402 };
  if (created.status !== 201) {
    throw new Error(`job not created: ${created.status} ${JSON.stringify(created.body)}`);
  }
  let job = created.body;
  while (job.status === "queued" || job.status === "processing") {
    const read = await api("GET", `/v1/jobs/${job.id}?wait=true`, { headers: account.auth });
    if (read.status !== 200)
      throw new Error(`job read: ${read.status} ${JSON.stringify(read.body)}`);
    job = read.body;
  }
  return { created: 201, status: job.status };
}
