// Webhook signing, Standard Webhooks style (DESIGN.md): headers webhook-id, webhook-timestamp
// and webhook-signature `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
// account's `whsec_` secret (base64 after the prefix).
import { fromBase64, hmacSha256, toBase64 } from "./crypto.ts";

export async function signWebhook(secret: string, id: string, timestamp: number, body: string) {
  const key = fromBase64(secret.replace(/^whsec_/, ""));
  const mac = await hmacSha256(key, `${id}.${timestamp}.${body}`);
  return `v1,${toBase64(mac)}`;
}
