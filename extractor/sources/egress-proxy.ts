// yt-dlp makes its own requests, so it gets a proxy on loopback that applies our address rules
// to every one of them: plain http is forwarded to a checked address, https CONNECT tunnels
// open only to a checked address (TLS stays end to end). yt-dlp never resolves names itself.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { SourceError } from "./errors.ts";
import type { AddressPolicy } from "./policy.ts";
import { checkedLookup, checkHop, resolveChecked } from "./policy.ts";

export interface EgressProxy {
  url: string;
  /** Destinations refused so far, with the reason: they explain a failed yt-dlp run. */
  refusals: string[];
  close(): Promise<void>;
}

const HOP_BY_HOP = /^(proxy-.*|connection|keep-alive|te|trailer|transfer-encoding|upgrade)$/i;
const IDLE_MS = 60_000;

export async function startEgressProxy(policy: AddressPolicy): Promise<EgressProxy> {
  const refusals: string[] = [];
  // Only refusals by the address rules are recorded; a dead upstream is just a network error.
  const refuse = (error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof SourceError) refusals.push(reason);
    return reason;
  };
  const server = http.createServer((request, response) => {
    let target: URL;
    try {
      target = checkHop(request.url ?? "", policy);
      if (target.protocol !== "http:")
        throw new SourceError("DownloadFailed", "https needs CONNECT");
    } catch (error) {
      response.writeHead(403, { "content-type": "text/plain" }).end(refuse(error));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !HOP_BY_HOP.test(name)),
    );
    const upstream = http.request({
      hostname: target.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: target.port || 80,
      path: `${target.pathname}${target.search}`,
      method: request.method,
      headers,
      lookup: checkedLookup(policy),
      agent: false,
      timeout: IDLE_MS,
    });
    upstream.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on("timeout", () => upstream.destroy(new Error("upstream went silent")));
    upstream.on("error", (error) => {
      if (error instanceof SourceError) refuse(error);
      if (!response.headersSent) response.writeHead(502).end(String(error.message));
      else response.destroy();
    });
    request.pipe(upstream);
  });

  server.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on("error", () => {});
    tunnel(request.url ?? "", client, head).catch((error) => {
      const reason = refuse(error);
      const status = error instanceof SourceError ? "403 Forbidden" : "502 Bad Gateway";
      client.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\n\r\n${reason}`);
    });
  });

  async function tunnel(authority: string, client: net.Socket, head: Buffer) {
    const target = checkHop(`https://${authority}/`, policy);
    const [address] = await resolveChecked(target.hostname, policy);
    const upstream = net.connect({ host: address.address, port: Number(target.port || 443) });
    upstream.setTimeout(IDLE_MS, () => upstream.destroy());
    client.setTimeout(IDLE_MS, () => client.destroy());
    await once(upstream, "connect");
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refusals,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
