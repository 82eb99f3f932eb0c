// Each OAuth consent makes a key of the account for that client ("MCP: <client name>"): the
// access tokens carry it, so the client acts exactly as an API-key caller, shows up in the
// account's key list, and is cut off by revoking that key.
import { apiKeyHint, generateApiKey, hashApiKey } from "../../schema/api-keys.ts";
import { apiKeys } from "../../schema/db.ts";
import type { Db } from "../context.ts";

const MAX_NAME_LENGTH = 80;

export async function issueConnectorKey(db: Db, accountId: string, clientName: string) {
  const key = generateApiKey();
  const keyId = crypto.randomUUID();
  await db.insert(apiKeys).values({
    id: keyId,
    accountId,
    keyHash: await hashApiKey(key),
    hint: apiKeyHint(key),
    name: `MCP: ${clientName}`.slice(0, MAX_NAME_LENGTH),
  });
  return { key, keyId };
}
