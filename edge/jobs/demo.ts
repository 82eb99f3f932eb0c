// Creating a demo job (spec §4 POST /demo): the link is checked, then the address's daily
// allowance is taken, then the job is recorded and queued. A function of its own so the MCP
// demo tool creates demos exactly as the REST route does.
import type { Context } from "hono";
import type { AnimatedRequest } from "../../schema/api.ts";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { logEvent } from "../log.ts";
import { checkSourceUrl } from "../sources.ts";
import { allowanceOf, demoIpHash, takeDemoPreview } from "./demo-allowance.ts";
import { createdDemoJob } from "./lifecycle.ts";
import { normaliseAnimated } from "./options.ts";
import { readDemoJob } from "./read.ts";
import { failUnsettled } from "./settlement.ts";
import { startJob } from "./start.ts";

/** `animated`: the demo's added, optional moving preview (issue 39), free like the demo. */
export async function createDemoJob(c: Context<AppEnv>, url: string, animated?: AnimatedRequest) {
  const source = checkSourceUrl(url, c.env);
  // Counted after the link is accepted, so a typo does not use up the day's allowance (and
  // given back if the preview fails: edge/jobs/demo-allowance.ts).
  const ipHash = await demoIpHash(c.get("clientIp"));
  const allowance = await takeDemoPreview(c.env, ipHash);
  if (!allowance.allowed) {
    throw new ApiError(
      "DemoLimitReached",
      `The demo allows ${allowance.limit} previews per day from one address`,
      {
        userMessage: "You've used today's free previews. Create a free account to keep going.",
        retryAfter: allowance.retryAfter,
      },
    );
  }
  const id = crypto.randomUUID();
  await createdDemoJob(c.env, {
    id,
    // The address as its limits count it (an IPv6 client by its /64).
    ipHash,
    url,
    sourceUrl: source.url,
    platform: source.platform,
    ...(animated ? { animated: { options: normaliseAnimated(animated) } } : {}),
  });
  const job = { kind: "demo" as const, id };
  const requestId = c.get("requestId");
  logEvent("info", "job.created", { job: id, kind: "demo", request: requestId });
  try {
    await startJob(c.env, job, requestId);
  } catch (err) {
    // Never leave a demo that nothing will run waiting for the 3-hour stuck sweep.
    logEvent("error", "job.not_queued", { job: id, request: requestId, error: String(err) });
    await failUnsettled(c.env, job, "ExtractionFailed", "the demo could not be queued");
    throw new ApiError("ServiceUnavailable", "The demo could not be queued", {
      userMessage: "We couldn't start the preview. Please try again in a moment.",
    });
  }
  // What is left today, as this preview left it: only the answer to its creation says it.
  return { ...(await readDemoJob(c, id)), allowance: allowanceOf(allowance) };
}
