// Clients on other networks, for tests on a real stack. The stack takes a client's address from
// its socket (decision 0104), never from a header, and on Linux the whole of 127.0.0.0/8 is
// loopback: a client that connects from 127.0.0.N is a network of its own.
import { Agent } from "undici";

/** A loopback address other than 127.0.0.1 (the default client's), different on each call. */
export function freshLoopbackAddress(): string {
  const n = 1 + Math.floor(Math.random() * 0xfffffe);
  const address = `127.${(n >> 16) & 0xff}.${(n >> 8) & 0xff}.${n & 0xff}`;
  return address === "127.0.0.1" || address.endsWith(".0") || address.endsWith(".255")
    ? freshLoopbackAddress()
    : address;
}

/** fetch whose connections start from `address` (kept alive, as a browser's would be). */
export function fetchFrom(address: string): typeof fetch {
  // undici's own Agent, which Node's fetch takes (its types are undici-types' copy of them).
  const dispatcher = new Agent({ localAddress: address }) as unknown as RequestInit["dispatcher"];
  return (input, init) => fetch(input, { ...init, dispatcher });
}
