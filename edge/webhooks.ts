// Webhook signing, Standard Webhooks style (DESIGN.md): headers webhook-id, webhook-timestamp
// and webhook-signature `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
// account's `whsec_` secret (base64 after the prefix). After a rotation the header carries the
// old secret's signature too, space-separated as the scheme allows, for PREVIOUS_SECRET_HOURS
// (decision 0211), so a receiver still holding the old secret keeps accepting deliveries.
import { fromBase64, hmacSha256, toBase64 } from "./crypto.ts";

export async function signWebhook(secret: string, id: string, timestamp: number, body: string) {
  const key = fromBase64(secret.replace(/^whsec_/, ""));
  const mac = await hmacSha256(key, `${id}.${timestamp}.${body}`);
  return `v1,${toBase64(mac)}`;
}

/** An account's signing secrets as stored: the current one, and the one a rotation replaced. */
export interface SigningSecrets {
  webhookSecret: string;
  previousWebhookSecret: string | null;
  previousWebhookSecretUntil: string | null;
}

/** Whether the replaced secret still signs at `now` (ms since the epoch). */
export function previousSecretActive(secrets: SigningSecrets, now: number): boolean {
  return (
    secrets.previousWebhookSecret !== null &&
    secrets.previousWebhookSecretUntil !== null &&
    now < Date.parse(secrets.previousWebhookSecretUntil)
  );
}

/** The webhook-signature header: the current secret's, then the previous one's while active. */
export async function signatureHeader(
  secrets: SigningSecrets,
  id: string,
  timestamp: number,
  body: string,
  now: number,
): Promise<string> {
  const signatures = [await signWebhook(secrets.webhookSecret, id, timestamp, body)];
  if (previousSecretActive(secrets, now) && secrets.previousWebhookSecret) {
    signatures.push(await signWebhook(secrets.previousWebhookSecret, id, timestamp, body));
  }
  return signatures.join(" ");
}
