// Edge tests never reach a real extractor: outbound calls to EXTRACTOR_URL are answered here.
// The worker runs in the test's isolate, so replacing fetch reaches the queue consumer too.
// A test installs a handler with `setExtractor`; without one the extractor is "down" (503),
// and calls to other hosts go to `setOutbound` (webhook receivers) or fail.
//
// The edge project runs its files one after another in the same isolate (`isolate: false`,
// decision 0291): this setup file is evaluated again before every file, while the modules that
// import it (pipeline.ts, stripe-stand-in.ts) keep the instance they first got. So the state
// lives on globalThis, shared by every instance, and fetch is wrapped once. The files also share
// one D1 and one set of queues, so a job of an earlier file may still be dispatched, retried or
// announced while this file runs: its extract requests are answered "down" and its webhooks
// "received" here, never by this file's handlers (each file sees only its own jobs, as when each
// file had a workerd of its own).
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, beforeEach, vi } from "vitest";
import type { ExtractRequest } from "../../../schema/messages.ts";

type ExtractorHandler = (request: ExtractRequest) => Promise<Response> | Response;
type OutboundHandler = (request: Request) => Promise<Response> | Response;

interface FakeState {
  extractor: ExtractorHandler | undefined;
  outbound: OutboundHandler | undefined;
  calls: ExtractRequest[];
  /** Jobs (and demo jobs) that existed when the current file started. */
  earlier: Set<string>;
  /** Resets other support modules ask for after each test (their own hooks would run once). */
  afterEachTest: Set<() => void>;
}

const KEY = Symbol.for("stills.test.fake-extractor");
const shared = globalThis as unknown as { [KEY]?: FakeState };
shared[KEY] ??= installFetch({
  extractor: undefined,
  outbound: undefined,
  calls: [],
  earlier: new Set(),
  afterEachTest: new Set(),
});
const state: FakeState = shared[KEY];

export const extractorCalls: ExtractRequest[] = state.calls;

export function setExtractor(handler: ExtractorHandler | undefined) {
  state.extractor = handler;
}

export function setOutbound(handler: OutboundHandler | undefined) {
  state.outbound = handler;
}

/** Runs `reset` after every test of every file (a support module's own afterEach would not). */
export function afterEachTest(reset: () => void) {
  state.afterEachTest.add(reset);
}

function installFetch(fresh: FakeState): FakeState {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).host === "extractor.test") {
      const body = (await request.json()) as ExtractRequest;
      if (fresh.earlier.has(body.job_id)) return extractorDown();
      fresh.calls.push(body);
      if (!fresh.extractor) return extractorDown();
      return fresh.extractor(body);
    }
    if (await isEarlierWebhook(fresh, request)) return new Response("received");
    if (fresh.outbound) return fresh.outbound(request);
    return realFetch(request);
  };
  return fresh;
}

function extractorDown() {
  return new Response("extractor down in this test", {
    status: 503,
    headers: { "retry-after": "60" },
  });
}

/** A webhook delivery (edge/webhook-send.ts) about a job of an earlier file. */
async function isEarlierWebhook(fresh: FakeState, request: Request): Promise<boolean> {
  if (request.headers.get("user-agent") !== "Stills-Webhooks/1" || fresh.earlier.size === 0) {
    return false;
  }
  try {
    const event = (await request.clone().json()) as { data?: { id?: unknown } };
    return typeof event.data?.id === "string" && fresh.earlier.has(event.data.id);
  } catch {
    return false;
  }
}

beforeAll(async () => {
  const { results } = await env.DB.prepare(
    "SELECT id FROM jobs UNION ALL SELECT id FROM demo_jobs",
  ).all<{ id: string }>();
  state.earlier = new Set(results.map((row) => row.id));
});

beforeEach(() => {
  state.calls.length = 0;
});

afterEach(() => {
  state.extractor = undefined;
  state.outbound = undefined;
  for (const reset of state.afterEachTest) reset();
});

// A file that faked Date and failed before putting it back would leave it faked for the next.
afterAll(() => {
  vi.useRealTimers();
});
