// Creating a demo job (spec §4 POST /demo): the link is checked, then the address's daily
// allowance is taken, then the job is recorded and queued. A function of its own so the MCP
// demo tool creates demos exactly as the REST route does.
import type { AnimatedRequest } from "../../schema/api.ts";
import { ApiError } from "../errors.ts";
import { logEvent } from "../log.ts";
import { checkSourceUrl } from "../sources.ts";
import { allowanceOf, demoIpHash, takeDemoPreview } from "./demo-allowance.ts";
import { createdDemoJob } from "./lifecycle.ts";
import { normaliseAnimated } from "./options.ts";
import { type JobReader, readDemoJob } from "./read.ts";
import { failUnsettled } from "./settlement.ts";
import { startJob } from "./start.ts";

/**
 * What creating a demo takes of its request, in place of Hono's context (decision 0270): a
 * JobReader to answer with the new demo, the client's address and the request's id
 * (edge/request.ts demoCreatorOf).
 */
export interface DemoCreator extends JobReader {
  clientIp: string;
  requestId: string;
}

/** `animated`: the demo's added, optional moving preview (issue 39), free like the demo. */
export async function createDemoJob(r: DemoCreator, url: string, animated?: AnimatedRequest) {
  const { env } = r;
  const source = checkSourceUrl(url, env);
  // Counted after the link is accepted, so a typo does not use up the day's allowance (and
  // given back if the preview fails: edge/jobs/demo-allowance.ts).
  const ipHash = await demoIpHash(r.clientIp);
  const allowance = await takeDemoPreview(env, ipHash);
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
  await createdDemoJob(env, {
    id,
    // The address as its limits count it (an IPv6 client by its /64).
    ipHash,
    url,
    sourceUrl: source.url,
    platform: source.platform,
    ...(animated ? { animated: { options: normaliseAnimated(animated) } } : {}),
  });
  const job = { kind: "demo" as const, id };
  const { requestId } = r;
  logEvent("info", "job.created", { job: id, kind: "demo", request: requestId });
  try {
    await startJob(env, job, requestId);
  } catch (err) {
    // Never leave a demo that nothing will run waiting for the 3-hour stuck sweep.
    logEvent("error", "job.not_queued", { job: id, request: requestId, error: String(err) });
    await failUnsettled(env, job, "ExtractionFailed", "the demo could not be queued");
    throw new ApiError("ServiceUnavailable", "The demo could not be queued", {
      userMessage: "We couldn't start the preview. Please try again in a moment.",
    });
  }
  // What is left today, as this preview left it: only the answer to its creation says it.
  return { ...(await readDemoJob(r, id)), allowance: allowanceOf(allowance) };
}
