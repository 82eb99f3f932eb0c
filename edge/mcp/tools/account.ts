// get_usage and get_pricing: the account's balance and limits, and the public price list,
// exactly as GET /v1/usage and GET /v1/pricing answer them.
import { z } from "zod";
import { PricingSchema, UsageSchema } from "../../../schema/api.ts";
import { CATALOG } from "../../../schema/plans.ts";
import { d1Of } from "../../storage/d1-sessions.ts";
import { usageBody } from "../../usage.ts";
import { zodInput } from "../inputs.ts";
import { defineTool, READS, toolResult } from "../tool.ts";

export const getUsage = defineTool({
  name: "get_usage",
  title: "Get usage and credits",
  description:
    "This account's plan, credits (available, plan, pack, held by running jobs), period, plan limits and recent credit ledger — the same as GET /v1/usage. " +
    "Check it before a large extraction.",
  input: zodInput(z.strictObject({})),
  output: UsageSchema,
  annotations: READS,
  async run(c) {
    const usage = await usageBody(d1Of(c), c.get("account").id);
    const { credits, limits } = usage;
    const text =
      `Plan ${usage.plan}: ${credits.available} credits available ` +
      `(${credits.plan} plan + ${credits.pack} pack, minus what running jobs hold). ` +
      `Period ends ${usage.period.end ?? "never"}. Limits: videos up to ${limits.max_video_minutes} min, ` +
      `${limits.max_frames_per_job} frames per job, ${limits.max_active_jobs} jobs at once, ` +
      `${limits.requests_per_minute} requests/min, files kept ${limits.retention_days} day(s).`;
    return toolResult(text, usage);
  },
});

export const getPricing = defineTool({
  name: "get_pricing",
  title: "Get pricing",
  description:
    "The public plans, credit pack and the rules by which jobs cost credits — the same as GET /v1/pricing.",
  input: zodInput(z.strictObject({})),
  output: PricingSchema,
  annotations: READS,
  async run() {
    const plans = CATALOG.plans.map(
      (plan) => `${plan.name} $${plan.price_usd}/month: ${plan.credits_per_month} credits`,
    );
    const pack = CATALOG.packs[0];
    // Every rule, named as in credit_rules: a model reads the text first, and a rule left out of
    // it (repeats at 0 credits, live, batches) is a cost it would guess.
    const rules = Object.entries(CATALOG.credit_rules)
      .map(([name, rule]) => `${name.replaceAll("_", " ")}: ${rule}`)
      .join(". ");
    const text =
      `Plans: ${plans.join("; ")}. Pack: ${pack.credits} credits for $${pack.price_usd}, never expire. ` +
      `Credit rules. ${rules}.`;
    return toolResult(text, CATALOG);
  },
});
