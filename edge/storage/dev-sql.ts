// The development route's statements (edge/routes/dev/index.ts, POST /__dev/sql): SQL the test
// stacks and benchmarks send, on any table, run as given in one batch (one transaction), as
// `wrangler d1 execute` would. The route's gates decide who may send it; this module only runs
// it, so the route itself holds no SQL (issue 35).
import type { Statement } from "../../schema/accounts.ts";
import { bound, type D1 } from "./accounts.ts";

/** Runs the statements in one batch and returns each one's rows (none for a write). */
export async function runDevStatements(d1: D1, statements: Statement[]): Promise<unknown[][]> {
  const results = await d1.batch(statements.map((s) => bound(d1, s)));
  return results.map((r) => r.results ?? []);
}
