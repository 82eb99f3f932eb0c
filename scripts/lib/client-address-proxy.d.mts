// Types of client-address-proxy.mjs for the TypeScript tests that drive it.
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";

export interface ClientAddressProxy {
  /** The origin it serves, http://host:port. */
  url: string;
  /** Stops listening and ends every connection, the edge's included. */
  close(): Promise<void>;
}

export function clientAddress(socket: Socket): string;
export function startClientAddressProxy(options: {
  host?: string;
  port: number;
  /** The origin of `wrangler dev` behind it. */
  upstream: string;
}): Promise<ClientAddressProxy>;
/** The same proxy in a process of its own, leading its own session (what scripts/lib/stack.mjs runs). */
export function spawnClientAddressProxy(options: {
  host?: string;
  port: number;
  upstream: string;
}): Promise<ClientAddressProxy & { child: ChildProcess }>;
