// Edge tests never reach a real extractor: outbound calls to EXTRACTOR_URL are answered here.
// The worker runs in the test's isolate, so replacing fetch reaches the queue consumer too.
// A test installs a handler with `setExtractor`; without one the extractor is "down" (503),
// and calls to other hosts go to `setOutbound` (webhook receivers) or fail.
import { afterEach, beforeEach } from "vitest";
import type { ExtractRequest } from "../../../schema/messages.ts";

type ExtractorHandler = (request: ExtractRequest) => Promise<Response> | Response;
type OutboundHandler = (request: Request) => Promise<Response> | Response;

let extractor: ExtractorHandler | undefined;
let outbound: OutboundHandler | undefined;
export const extractorCalls: ExtractRequest[] = [];

export function setExtractor(handler: ExtractorHandler | undefined) {
  extractor = handler;
}

export function setOutbound(handler: OutboundHandler | undefined) {
  outbound = handler;
}

const realFetch = globalThis.fetch;

globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const request = new Request(input, init);
  if (new URL(request.url).host === "extractor.test") {
    const body = (await request.json()) as ExtractRequest;
    extractorCalls.push(body);
    if (!extractor)
      return new Response("extractor down in this test", {
        status: 503,
        headers: { "retry-after": "60" },
      });
    return extractor(body);
  }
  if (outbound) return outbound(request);
  return realFetch(request);
};

beforeEach(() => {
  extractorCalls.length = 0;
});

afterEach(() => {
  extractor = undefined;
  outbound = undefined;
});
