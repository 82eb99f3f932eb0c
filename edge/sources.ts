// Which links the edge accepts, checked at creation so a bad link fails fast with 400: its form,
// its platform and its address, without fetching it. The extractor is the only one that
// fetches: it checks every hop and every resolved address again, and fails a link that is no
// video with InvalidUrl (extractor/sources/, decision 0260).
import { detectSource } from "../schema/platform.ts";
import { isServiceSample } from "../schema/samples.ts";
import { checkUrl } from "../schema/url-safety.ts";
import { edgeConfig, publicBaseUrl } from "./config.ts";
import { ApiError } from "./errors.ts";

/** STILLS_ALLOW_PRIVATE_NETWORK=1: loopback and private addresses allowed (local testing). */
export function allowsPrivateNetwork(env: Env): boolean {
  return edgeConfig(env).allowPrivateNetwork;
}

export function checkSourceUrl(url: string, env: Env): { platform: string; url: string } {
  const detected = detectSource(url);
  if (!detected.ok) throw invalidUrl("url", detected.reason);
  // The service's own samples are fetched even where private addresses are refused, and
  // exactly they: the extractor judges every hop the same way (extractor/sources/policy.ts).
  if (isServiceSample(detected.url, publicBaseUrl(env))) {
    return { platform: detected.platform, url: detected.url };
  }
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
