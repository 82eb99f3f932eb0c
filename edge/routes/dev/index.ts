// Development only: what the test stacks and benchmarks need of a running local stack without
// spawning wrangler (which took about two seconds a call): run SQL statements on its D1, as
// `npm run admin` does through `wrangler d1 execute`. Three gates, each enough on its own:
// the route exists only when STILLS_DEV_ROUTES is "1" (set by scripts/lib/stack.mjs, never in
// wrangler.toml, and refused with a public PUBLIC_BASE_URL by edge/config.ts); it answers only
// a request addressed to a loopback host; and it needs the stack's INTERNAL_TOKEN as a bearer
// token. Anything else gets the same 404 as a path that does not exist.
import { z } from "zod";
import { createRouter } from "../../app.ts";
import { edgeConfig, isLoopbackOrigin } from "../../config.ts";
import { sha256Hex, timingSafeEqualHex } from "../../crypto.ts";
import { ApiError } from "../../errors.ts";
import { runDevStatements } from "../../storage/dev-sql.ts";

export const DEV_SQL_PATH = "/__dev/sql";

const statementsSchema = z.object({
  statements: z
    .array(
      z.object({
        sql: z.string().min(1),
        params: z.array(z.union([z.string(), z.number(), z.null()])).default([]),
      }),
    )
    .min(1)
    .max(100),
});

async function bearerMatches(header: string | undefined, secret: string): Promise<boolean> {
  const token = header?.match(/^Bearer (.+)$/)?.[1];
  if (!token) return false;
  return timingSafeEqualHex(await sha256Hex(token), await sha256Hex(secret));
}

export const devRouter = createRouter().post(DEV_SQL_PATH, async (c) => {
  const config = edgeConfig(c.env);
  const allowed =
    config.devRoutes &&
    isLoopbackOrigin(new URL(c.req.url).origin) &&
    (await bearerMatches(c.req.header("authorization"), config.secrets.internalToken));
  // The same answer as any path that does not exist.
  if (!allowed) return c.notFound();
  const parsed = statementsSchema.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) {
    throw new ApiError("InvalidRequest", "The body must be {statements: [{sql, params}]}");
  }
  return c.json({ results: await runDevStatements(c.env.DB, parsed.data.statements) });
});
