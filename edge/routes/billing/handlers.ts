import type { RouteHandler } from "@hono/zod-openapi";
import Stripe from "stripe";
import { StripeEventSchema } from "../../../schema/stripe.ts";
import { applyStripeEvent } from "../../billing/webhook.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { stripeWebhookRoute } from "./routes.ts";

const cryptoProvider = Stripe.createSubtleCryptoProvider();

/** How far a signature's time may be from ours, either way: Stripe's own default (5 min). */
const TOLERANCE_SECONDS = 300;

/**
 * The `t=` of a Stripe-Signature header, read as the SDK reads it (the last `t` wins). The SDK
 * refuses a signature older than the tolerance but not one dated ahead of it, which a leaked
 * signature could be replayed with long after; that direction is refused here.
 */
function signedAt(header: string): number {
  let timestamp = Number.NaN;
  for (const item of header.split(",")) {
    const [name, value] = item.split("=");
    if (name === "t") timestamp = Number.parseInt(value ?? "", 10);
  }
  return timestamp;
}

// The raw body is verified against Stripe-Signature (HMAC-SHA256 through SubtleCrypto) before
// anything is parsed; then the event is applied once (edge/billing/webhook.ts). Checkout and
// the portal are started from the dashboard through edge/billing/checkout.ts.
export const stripeWebhookHandler: RouteHandler<typeof stripeWebhookRoute, AppEnv> = async (c) => {
  const secret = edgeConfig(c.env).stripe.webhookSecret;
  // 503, not 404: Stripe keeps retrying for three days, so nothing bought is lost while the
  // secret is being set.
  if (!secret) {
    throw new ApiError("ServiceUnavailable", "Stripe webhooks are not configured here", {
      userMessage: "Payments are not set up on this deployment.",
    });
  }
  const signature = c.req.header("stripe-signature");
  if (!signature) throw new ApiError("InvalidRequest", "Stripe-Signature header is missing");
  const payload = await c.req.text();
  let verified: unknown;
  try {
    verified = await Stripe.webhooks.constructEventAsync(
      payload,
      signature,
      secret,
      TOLERANCE_SECONDS,
      cryptoProvider,
    );
  } catch (err) {
    throw new ApiError("InvalidRequest", `Stripe-Signature does not verify: ${messageOf(err)}`, {
      userMessage: "This request is not a valid Stripe event.",
    });
  }
  const ahead = signedAt(signature) - Math.floor(Date.now() / 1000);
  if (ahead > TOLERANCE_SECONDS) {
    throw new ApiError(
      "InvalidRequest",
      `Stripe-Signature is dated ${ahead} s ahead of this server's clock, beyond the ${TOLERANCE_SECONDS} s tolerance`,
      { userMessage: "This request is not a valid Stripe event." },
    );
  }
  const event = StripeEventSchema.safeParse(verified);
  if (!event.success) {
    throw new ApiError("InvalidRequest", "the signed body is not a Stripe event");
  }
  const outcome = await applyStripeEvent(c.env, event.data);
  return c.json({ received: true as const, outcome }, 200);
};

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message.split("\n")[0] : String(err);
}
