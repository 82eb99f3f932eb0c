// Address policies for loopback tests: 127.0.0.2 plays a public host, everything else keeps
// the real rules (so 127.0.0.1 stays private), and names resolve through a fake DNS table.
import type { LookupAddress } from "node:dns";
import type { AddressPolicy } from "../../../extractor/sources/policy.ts";
import { classifyIp } from "../../../schema/url-safety.ts";

export const PUBLIC_LOOPBACK = "127.0.0.2";
export const PRIVATE_LOOPBACK = "127.0.0.1";

export function testPolicy(dns: Record<string, string[] | (() => string[])> = {}): AddressPolicy {
  return {
    allowPrivate: false,
    anyPort: true,
    classify: (address) => (address === PUBLIC_LOOPBACK ? "public" : classifyIp(address)),
    resolve: async (hostname): Promise<LookupAddress[]> => {
      const entry = dns[hostname];
      if (!entry)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      const addresses = typeof entry === "function" ? entry() : entry;
      return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
}
