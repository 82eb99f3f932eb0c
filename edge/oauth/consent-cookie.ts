// The OAuth provider binds a consent to its browser with a `__Host-oauth-…` cookie, which the
// prefix makes Secure. Over plain http on loopback (`npm start`) a client that keeps Secure
// cookies for https, as curl and most HTTP libraries do, never sends it back, so a connector
// could not finish OAuth locally. There, and only there, the cookie travels under a local
// name without Secure (as the session cookie does, edge/auth/session.ts), and is given back
// to the provider under its own name. Anywhere else, the provider's cookies pass unchanged.
import { isLoopbackHttp } from "../auth/session.ts";

const PROVIDER_PREFIX = "__Host-oauth-";
const LOCAL_PREFIX = "stills_oauth-";

/** A Set-Cookie line of the provider, as this request's origin should carry it. */
export function consentCookieFor(requestUrl: string, setCookie: string): string {
  if (!isLoopbackHttp(requestUrl) || !setCookie.startsWith(PROVIDER_PREFIX)) return setCookie;
  const [pair, ...attributes] = setCookie.split(";");
  const kept = attributes.filter((a) => a.trim().toLowerCase() !== "secure");
  return [`${LOCAL_PREFIX}${pair.slice(PROVIDER_PREFIX.length)}`, ...kept].join(";");
}

/**
 * The request's cookies as the provider reads them: on loopback http, the local names back
 * under the provider's. The provider reads only cookies from what it is given.
 */
export function withProviderCookieNames(request: Request): Request {
  const cookie = request.headers.get("cookie");
  if (!cookie || !isLoopbackHttp(request.url)) return request;
  const renamed = cookie
    .split(";")
    .map((part) => {
      const trimmed = part.trim();
      return trimmed.startsWith(LOCAL_PREFIX)
        ? `${PROVIDER_PREFIX}${trimmed.slice(LOCAL_PREFIX.length)}`
        : trimmed;
    })
    .join("; ");
  const headers = new Headers(request.headers);
  headers.set("cookie", renamed);
  return new Request(request.url, { method: "GET", headers });
}
