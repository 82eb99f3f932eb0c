// Reads from the nearest D1 replica, through D1's Sessions API (read replication).
//
// The read endpoints (GET /v1/jobs, GET /v1/usage, GET /v1/demo/{id}) declare `replicaReads`
// on their route: their queries run in a session that may be served by a replica near the
// caller. GET /v1/jobs/{id} reads the primary instead (`primaryReads`: the job a client polls
// is never behind). Every other request keeps the plain binding, which D1 always
// routes to the primary, so writes and the reads around them stay where they were.
//
// Consistency (README "Decisions"): a session is sequentially consistent. Its answers carry
// the session's bookmark in X-D1-Bookmark; a client that sends it back is served only by a
// replica at least as new, so it reads its own writes (POST /v1/jobs answers with the
// bookmark after its write) and never reads back in time. Without it a read may be a little
// behind the primary; a job the replica does not know yet is looked up on the primary before
// answering 404, and wait=true polls the primary (edge/jobs/read.ts).
import { drizzle } from "drizzle-orm/d1";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv, Db, RequestReads } from "../context.ts";
import { ApiError } from "../errors.ts";

export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** D1's bookmark form (8-8-8-32 hex digits), checked before it reaches D1. */
export const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

function useSession(c: Context<AppEnv>, constraint: string, mayReadReplica: boolean): Db {
  const session = c.env.DB.withSession(constraint);
  // drizzle's D1 driver calls only prepare() and batch(), which a session has as well.
  const db = drizzle(session as unknown as D1Database);
  c.set("db", db);
  c.set("d1Reads", { session, mayReadReplica });
  return db;
}

/**
 * Declared on a read route, after its authentication (keys are checked on the primary, so a
 * key made a moment ago works at once): the route's queries may come from a replica.
 */
export const replicaReads = createMiddleware<AppEnv>(async (c, next) => {
  useSession(c, sentBookmark(c) ?? "first-unconstrained", true);
  await next();
});

/**
 * Declared on GET /v1/jobs/{id}: a client polls this route for its job's progress, so it reads
 * the primary and is never behind (one trip, the job and its frames in one statement; a
 * settled job is remembered and costs none, edge/jobs/read.ts). The primary is at least as
 * new as any bookmark this API gave, so a bookmark sent is met; a client that sends one (it
 * follows its reads with bookmarks) reads in a session on the primary and is answered its
 * bookmark. A client that sends none reads the plain binding, the primary too, and is
 * answered none: a session's bookmark costs the database a step on every read, and that
 * client does not send bookmarks back.
 */
export const primaryReads = createMiddleware<AppEnv>(async (c, next) => {
  if (sentBookmark(c) !== undefined) useSession(c, "first-primary", false);
  await next();
});

/** The request's X-D1-Bookmark, refused unless it has the form D1 gives. */
function sentBookmark(c: Context<AppEnv>): string | undefined {
  const bookmark = c.req.header(BOOKMARK_HEADER);
  if (bookmark !== undefined && !BOOKMARK_PATTERN.test(bookmark)) {
    throw new ApiError("InvalidRequest", `${BOOKMARK_HEADER} is not a bookmark this API gave`, {
      userMessage: `Send back the ${BOOKMARK_HEADER} value of an earlier answer, unchanged.`,
    });
  }
  return bookmark;
}

/**
 * After a write: the rest of the request reads through a session that starts on the primary,
 * so its bookmark (answered in X-D1-Bookmark) covers the write.
 */
export function readAfterWrite(c: Context<AppEnv>): Db {
  return useSession(c, "first-primary", false);
}

/** What the request's `db` reads through, for statements run on D1 directly. */
export function d1Of(c: Context<AppEnv>): D1Database | D1DatabaseSession {
  return c.get("d1Reads")?.session ?? c.env.DB;
}

/** True when the request's reads may have come from a replica that is behind the primary. */
export function mayBeBehind(c: Context<AppEnv>): boolean {
  return c.get("d1Reads")?.mayReadReplica ?? false;
}

/**
 * The primary as it is now. A request reading through sessions starts a new one on the
 * primary (and answers with its bookmark); any other request's plain binding already reads
 * the primary.
 */
export function freshPrimary(c: Context<AppEnv>): Db {
  return c.get("d1Reads") ? useSession(c, "first-primary", false) : c.get("db");
}

/** The request's reads as edge/jobs/ takes them, so no domain function needs Hono's context. */
export function readsOf(c: Context<AppEnv>): RequestReads {
  return {
    db: () => c.get("db"),
    d1: () => d1Of(c),
    plainBinding: () => c.get("d1Reads") === undefined,
    mayBeBehind: () => mayBeBehind(c),
    freshPrimary: () => freshPrimary(c),
  };
}

/** The bookmark of the request's session, for the X-D1-Bookmark response header. */
export function sessionBookmark(c: Context<AppEnv>): string | null {
  return c.get("d1Reads")?.session.getBookmark() ?? null;
}
