// The app's environment type, shared by middleware and handlers.
import type { DrizzleD1Database } from "drizzle-orm/d1";
import type { Context } from "hono";
import type { AccountRow } from "../schema/db.ts";
import type { RateDecision } from "./durable/rate-limiter.ts";

export type Db = DrizzleD1Database;

/** The D1 session a request reads through, and whether a replica may answer it. */
export interface D1Reads {
  session: D1DatabaseSession;
  mayReadReplica: boolean;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    db: Db;
    account: AccountRow;
    apiKeyId: string;
    clientIp: string;
    rate: RateDecision | undefined;
    /** Set when the request reads through a D1 session (edge/storage/d1-sessions.ts). */
    d1Reads: D1Reads | undefined;
    /** X-Request-Id (edge/app.ts): in every log line and sent on to the extractor. */
    requestId: string;
  };
}

/**
 * The request's D1 reads as a domain function takes them (edge/storage/d1-sessions.ts readsOf):
 * through the plain binding, or through a session that a replica may answer.
 */
export interface RequestReads {
  /** drizzle over what the request reads through now. */
  db(): Db;
  /** The D1 binding or session the request reads through now. */
  d1(): D1Database | D1DatabaseSession;
  /** True when the request reads the plain binding (no session, so no bookmark to answer). */
  plainBinding(): boolean;
  /** True when the request's reads may have come from a replica behind the primary. */
  mayBeBehind(): boolean;
  /** Moves the request's reads to the primary as it is now, and returns its handle. */
  freshPrimary(): Db;
}

/**
 * What a domain function takes of a request in place of Hono's context (issue 35): the
 * bindings, the request's database handle, the account its key belongs to, and its id.
 */
export interface Requester {
  env: Env;
  db: Db;
  account: AccountRow;
  requestId: string | undefined;
}

/** The request's Requester: routes and MCP tools hand it to edge/jobs/. */
export function requesterOf(c: Context<AppEnv>): Requester {
  return { env: c.env, db: c.get("db"), account: c.get("account"), requestId: c.get("requestId") };
}
