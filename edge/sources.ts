// Which links the edge accepts, checked at creation so a bad link fails fast with 400.
// The extractor checks again on every hop and every resolved address (extractor/sources/).
import { detectSource } from "../schema/platform.ts";
import { checkUrl } from "../schema/url-safety.ts";
import { ApiError } from "./errors.ts";

export function allowsPrivateNetwork(env: Env): boolean {
  return env.STILLS_ALLOW_PRIVATE_NETWORK === "1";
}

export function checkSourceUrl(url: string, env: Env): { platform: string; url: string } {
  const detected = detectSource(url);
  if (!detected.ok) throw invalidUrl("url", detected.reason);
  const safe = checkUrl(detected.url, { allowPrivate: allowsPrivateNetwork(env) });
  if (!safe.ok) throw invalidUrl("url", safe.reason);
  return { platform: detected.platform, url: detected.url };
}

export function checkWebhookUrl(url: string, env: Env): void {
  const safe = checkUrl(url, { allowPrivate: allowsPrivateNetwork(env), requireHttps: true });
  if (!safe.ok) {
    throw new ApiError("InvalidRequest", `webhook_url: ${safe.reason}`, {
      userMessage: "The webhook URL must be a public https:// address.",
    });
  }
}

function invalidUrl(field: string, reason: string) {
  return new ApiError("InvalidUrl", `${field}: ${reason}`, {
    userMessage: "That link isn't a supported public video URL.",
  });
}
