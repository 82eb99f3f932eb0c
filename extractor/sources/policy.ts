// Where the extractor may connect. Every hop's URL is judged by schema/url-safety.ts, every
// address a name resolves to is judged again, and the socket connects only to an address that
// was judged (the `lookup` hook), so DNS rebinding between check and connect gains nothing.
import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { isServiceSample } from "../../schema/samples.ts";
import { checkUrl, classifyIp } from "../../schema/url-safety.ts";
import { refusedDestination } from "./errors.ts";

export interface AddressPolicy {
  /** STILLS_ALLOW_PRIVATE_NETWORK=1: no address or port checks (loopback testing only). */
  allowPrivate: boolean;
  /** Lets loopback tests use random ports while the address rules stay on. */
  anyPort?: boolean;
  classify: (address: string) => "public" | string;
  resolve: (hostname: string) => Promise<LookupAddress[]>;
  /**
   * The service's own origin (the edge's callback base): its sample videos, and only those
   * exact URLs, are fetched even where private addresses are refused (hopPolicy below).
   */
  serviceOrigin?: string;
}

export function defaultPolicy(allowPrivate: boolean, serviceOrigin?: string): AddressPolicy {
  return {
    allowPrivate,
    classify: classifyIp,
    resolve: (hostname) => dnsLookup(hostname, { all: true, verbatim: true }),
    serviceOrigin,
  };
}

/**
 * The rules for one hop: the policy itself, or, for exactly one of the service's sample URLs
 * (schema/samples.ts isServiceSample: same origin, a sample's path, no query), the policy with
 * private addresses allowed for that hop alone. A redirect from a sample is a new hop, judged
 * by its own URL, so it gains nothing.
 */
export function hopPolicy(url: string | URL, policy: AddressPolicy): AddressPolicy {
  if (policy.allowPrivate || !policy.serviceOrigin) return policy;
  if (!isServiceSample(url, policy.serviceOrigin)) return policy;
  return { ...policy, allowPrivate: true, serviceOrigin: undefined };
}

/** Judges one hop's URL (scheme, userinfo, port, literal address, local names) or throws. */
export function checkHop(url: string | URL, policy: AddressPolicy): URL {
  const result = checkUrl(url, {
    allowPrivate: policy.allowPrivate,
    anyPort: policy.anyPort,
    classifyAddress: policy.classify,
  });
  if (!result.ok) throw refusedDestination(result.reason);
  return result.url;
}

/** Resolves a name and refuses it if any of its addresses is not public. */
export async function resolveChecked(
  hostname: string,
  policy: AddressPolicy,
): Promise<LookupAddress[]> {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(bare)
    ? [{ address: bare, family: isIP(bare) }]
    : await policy.resolve(bare).catch((error: Error) => {
        throw Object.assign(new Error(`cannot resolve ${bare}: ${error.message}`), {
          code: "ENOTFOUND",
        });
      });
  if (addresses.length === 0) throw new Error(`cannot resolve ${bare}: no addresses`);
  if (!policy.allowPrivate) {
    for (const { address } of addresses) {
      const verdict = policy.classify(address);
      if (verdict !== "public") throw refusedDestination(`${bare} resolves to ${verdict}`);
    }
  }
  return addresses;
}

/** A `lookup` for node:net/http/https that only ever hands out checked addresses. */
export function checkedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, policy).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((a) => wanted === 0 || a.family === wanted);
        if (usable.length === 0) {
          callback(
            Object.assign(new Error(`no IPv${wanted} address for ${hostname}`), {
              code: "ENOTFOUND",
            }),
            "",
            0,
          );
        } else if (options.all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
        } else {
          callback(null, usable[0].address, usable[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}
