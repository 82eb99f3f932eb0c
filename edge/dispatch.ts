// How a job reaches the extractor: one interface, two ways. In production the extractor is a
// Cloudflare Container (the EXTRACTOR binding); locally it is a Node process at EXTRACTOR_URL.
import type { ExtractRequest } from "../schema/messages.ts";

export interface ExtractorClient {
  /** Runs the job to the end; resolves with the extractor's answer (2xx once the result is posted). */
  extract(request: ExtractRequest): Promise<Response>;
}

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

export function extractorFor(env: Env): ExtractorClient {
  const container = env.EXTRACTOR;
  if (container) {
    return {
      extract(request) {
        // Jobs spread over a small pool of container instances by id.
        const slot = Number.parseInt(request.job_id.slice(0, 2), 16) % 8;
        const stub = container.get(container.idFromName(`extractor-${slot}`));
        return post((req) => stub.fetch(req), "http://extractor", env.INTERNAL_TOKEN, request);
      },
    };
  }
  return {
    extract: (request) => post((req) => fetch(req), env.EXTRACTOR_URL, env.INTERNAL_TOKEN, request),
  };
}
