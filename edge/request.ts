// What edge/jobs/ takes of a request in place of Hono's context (issue 35, decision 0270):
// the route adapters and MCP tools build it here, from `c`, and hand it over. The domain
// functions never see `c`, so they can be called from anything that has an env and a database.
import type { Context } from "hono";
import { publicBaseUrl } from "./config.ts";
import type { AppEnv } from "./context.ts";
import type { DemoCreator } from "./jobs/demo.ts";
import type { AccountJobReader, JobReader } from "./jobs/read.ts";
import { readsOf } from "./storage/d1-sessions.ts";

/** The public origin the request came to (PUBLIC_BASE_URL when set): links are made for it. */
export function baseUrl(c: Context<AppEnv>): string {
  return publicBaseUrl(c.env, c.req.url);
}

/** What reading jobs needs of the request: its env, origin and D1 reads. */
export function readerOf(c: Context<AppEnv>): JobReader {
  return { env: c.env, baseUrl: () => baseUrl(c), reads: readsOf(c) };
}

/** readerOf, for the jobs of the request's account (its API key's, or its session's). */
export function accountReaderOf(c: Context<AppEnv>): AccountJobReader {
  return { ...readerOf(c), accountId: c.get("account").id };
}

/** What creating a demo needs of the request: its reads, client address and request id. */
export function demoCreatorOf(c: Context<AppEnv>): DemoCreator {
  return { ...readerOf(c), clientIp: c.get("clientIp"), requestId: c.get("requestId") };
}
