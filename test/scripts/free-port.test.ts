// freePort picks below the kernel's ephemeral range, where no outgoing connection is given a
// port, and skips a port something already holds (decision 0376).
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, expect, it } from "vitest";
import { freePort, PORT_FLOOR, pickedPortSpan } from "../../scripts/lib/stack.mjs";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const ephemeralFirst = () =>
  Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

// Undefined where the kernel's range leaves no room below it: freePort leaves the pick to it.
const span = pickedPortSpan();

it.skipIf(span === undefined)(
  "picks ports between the floor and the ephemeral range, each one free to bind",
  async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(PORT_FLOOR);
      // Read here, not from freePort's module: the first port an outgoing connection may get.
      expect(port).toBeLessThan(ephemeralFirst());
    }
    // Random picks over thousands of ports: twenty are not all the same one.
    expect(new Set(ports).size).toBeGreaterThan(1);
    for (const port of ports) servers.push(await listen(port));
  },
);

it.skipIf(span === undefined)(
  "skips a port that is taken and answers the next free pick",
  async () => {
    const taken = await freePort();
    servers.push(await listen(taken));
    const next = await freePort();
    const picks = [taken, taken, next].map((port) => (port - PORT_FLOOR + 0.5) / (span as number));
    let asked = 0;
    const port = await freePort({ random: () => picks[asked++] });
    expect(asked).toBe(3);
    expect(port).toBe(next);
  },
);
