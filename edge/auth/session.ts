// Dashboard sessions (being built: issue 8). The contract other parts rely on:
// `sessionAccount(c)` is the signed-in account of this request, or undefined.
import type { Context } from "hono";
import type { AccountRow } from "../../schema/db.ts";
import type { AppEnv } from "../context.ts";

export async function sessionAccount(_c: Context<AppEnv>): Promise<AccountRow | undefined> {
  return undefined;
}
