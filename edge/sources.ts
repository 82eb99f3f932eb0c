// Which links the edge accepts, checked at creation so a bad link fails fast with 400.
// The extractor checks again on every hop and every resolved address (extractor/sources/).
import { DIRECT_VIDEO_EXTENSIONS, detectSource } from "../schema/platform.ts";
import { isServiceSample } from "../schema/samples.ts";
import { checkUrl } from "../schema/url-safety.ts";
import { edgeConfig, publicBaseUrl } from "./config.ts";
import { ApiError } from "./errors.ts";

/** STILLS_ALLOW_PRIVATE_NETWORK=1: loopback and private addresses allowed (local testing). */
export function allowsPrivateNetwork(env: Env): boolean {
  return edgeConfig(env).allowPrivateNetwork;
}

export async function checkSourceUrl(
  url: string,
  env: Env,
): Promise<{ platform: string; url: string }> {
  const detected = detectSource(url);
  if (!detected.ok) throw invalidUrl("url", detected.reason);
  // The service's own samples are fetched even where private addresses are refused, and
  // exactly they: the extractor judges every hop the same way (extractor/sources/policy.ts).
  if (isServiceSample(detected.url, publicBaseUrl(env))) {
    return { platform: detected.platform, url: detected.url };
  }
  const safe = checkUrl(detected.url, { allowPrivate: allowsPrivateNetwork(env) });
  if (!safe.ok) throw invalidUrl("url", safe.reason);
  if (detected.platform === "direct" && !hasVideoExtension(safe.url)) {
    await requireVideoContentType(safe.url, env);
  }
  return { platform: detected.platform, url: detected.url };
}

const MAX_REDIRECTS = 5;
const HEAD_TIMEOUT_MS = 5000;

function hasVideoExtension(url: URL): boolean {
  const path = url.pathname.toLowerCase();
  return DIRECT_VIDEO_EXTENSIONS.some((ext) => path.endsWith(ext));
}

/**
 * A direct link without a video extension is accepted only when its answer says video
 * (spec: direct .mp4/.mov/.webm links, "and a direct link whose content type says video");
 * anything else is 400 InvalidUrl now rather than a failed job later. One HEAD request,
 * redirects followed by hand (each hop checked again, at most 5).
 */
async function requireVideoContentType(start: URL, env: Env): Promise<void> {
  let current = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response: Response;
    try {
      response = await fetch(current, {
        method: "HEAD",
        redirect: "manual",
        signal: AbortSignal.timeout(HEAD_TIMEOUT_MS),
      });
    } catch {
      throw invalidUrl("url", "the link could not be reached to check that it is a video");
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      // checkUrl parses the target itself: a Location such as `http://[` is refused as not a
      // URL instead of throwing.
      const next = checkUrl(resolveLocation(location, current), {
        allowPrivate: allowsPrivateNetwork(env),
      });
      if (!next.ok) throw invalidUrl("url", `a redirect of the link was refused: ${next.reason}`);
      current = next.url;
      continue;
    }
    const type = response.headers.get("content-type") ?? "";
    if (response.ok && /^video\//i.test(type)) return;
    throw invalidUrl(
      "url",
      response.ok
        ? `the link is not a video file (content type ${type || "missing"}); use a direct .mp4, .mov or .webm link or a supported platform`
        : `the link answered HTTP ${response.status} when checked`,
    );
  }
  throw invalidUrl("url", `the link redirects more than ${MAX_REDIRECTS} times`);
}

/** A redirect's target against the URL that sent it, as text (unparseable stays unparseable). */
function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
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
