// freePort picks below the kernel's ephemeral range, where no outgoing connection is given a
// port, and skips a port something already holds (decision 0376).
import { createServer, type Server } from "node:net";
import { afterEach, expect, it } from "vitest";
import { ephemeralLow, freePort, PORT_FLOOR } from "../../scripts/lib/stack.mjs";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

const low = ephemeralLow();

it.skipIf(low === undefined || low - PORT_FLOOR < 1000)(
  "picks ports between the floor and the ephemeral range, each one free to bind",
  async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(PORT_FLOOR);
      expect(port).toBeLessThan(low as number);
    }
    // Random picks over thousands of ports: twenty are not all the same one.
    expect(new Set(ports).size).toBeGreaterThan(1);
    for (const port of ports) servers.push(await listen(port));
  },
);

it.skipIf(low === undefined || low - PORT_FLOOR < 1000)(
  "skips a port that is taken and answers the next free pick",
  async () => {
    const taken = await freePort();
    servers.push(await listen(taken));
    const next = await freePort();
    const span = (low as number) - PORT_FLOOR;
    const picks = [taken, taken, next].map((port) => (port - PORT_FLOOR + 0.5) / span);
    let asked = 0;
    const port = await freePort({ random: () => picks[asked++] });
    expect(asked).toBe(3);
    expect(port).toBe(next);
  },
);
