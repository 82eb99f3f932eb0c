// How a job reaches the extractor: one interface, two ways. In production the extractor is a
// Cloudflare Container (the EXTRACTOR binding); locally it is a Node process at EXTRACTOR_URL.
import type { ExtractRequest } from "../schema/messages.ts";

interface DispatchSettings {
  /**
   * "detached" (set by scripts/lib/stack.mjs for the local stack only): the jobs consumer
   * acks at once and holds the extractor call in waitUntil, so one long job does not hold
   * the local queue, which delivers one batch at a time (see edge/queues/jobs.ts).
   */
  EXTRACTOR_DISPATCH?: string;
}

declare global {
  interface Env extends DispatchSettings {}
  namespace Cloudflare {
    interface Env extends DispatchSettings {}
  }
}

export interface ExtractorClient {
  /** Runs the job to the end; resolves with the extractor's answer (2xx once the result is posted). */
  extract(request: ExtractRequest): Promise<Response>;
}

/** Instances in production's container pool (wrangler.toml max_instances). */
export const CONTAINER_POOL_SIZE = 8;

function post(
  fetcher: (req: Request) => Promise<Response>,
  base: string,
  token: string,
  request: ExtractRequest,
) {
  return fetcher(
    new Request(`${base}/extract`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(request),
    }),
  );
}

/**
 * Instances one tenant's jobs spread over. Each instance runs at most EXTRACTOR_TENANT_SLOTS
 * (default 1) of a tenant's jobs, so a tenant holds at most this many instances' worth of the
 * pool (4 of 8), yet a paying account still runs several jobs at once.
 */
export const TENANT_INSTANCES = 4;

function fnv1a(text: string): number {
  // Stable and even enough to spread tenants and jobs; nothing here needs to be secret.
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

/**
 * The pool instance a job runs on. A tenant's jobs go to TENANT_INSTANCES neighbouring
 * instances starting at one its name picks (the job id picks among them), and each instance's
 * per-tenant slot cap then bounds the tenant pool-wide: one account or demo client cannot
 * occupy every instance. A job without a tenant goes by its id.
 */
export function poolInstanceFor(request: ExtractRequest): number {
  const byJob = fnv1a(request.job_id);
  if (request.tenant === undefined) return byJob % CONTAINER_POOL_SIZE;
  return (fnv1a(request.tenant) + (byJob % TENANT_INSTANCES)) % CONTAINER_POOL_SIZE;
}

export function extractorFor(env: Env): ExtractorClient {
  const container = env.EXTRACTOR;
  if (container) {
    return {
      extract(request) {
        const stub = container.get(container.idFromName(`extractor-${poolInstanceFor(request)}`));
        return post((req) => stub.fetch(req), "http://extractor", env.INTERNAL_TOKEN, request);
      },
    };
  }
  return {
    extract: (request) => post((req) => fetch(req), env.EXTRACTOR_URL, env.INTERNAL_TOKEN, request),
  };
}

/** True when the consumer should not hold the queue while the extractor works (local stack). */
export function dispatchesDetached(env: Env): boolean {
  return !env.EXTRACTOR && env.EXTRACTOR_DISPATCH === "detached";
}
