// A local HTTP server for the sources tests: serves files with or without Range support, and
// any route a test defines (redirects, error statuses, pages). Every request is logged so a test
// can check what was (and was not) fetched.
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Route = (request: http.IncomingMessage, response: http.ServerResponse) => unknown;

export interface TestServer {
  origin: string;
  port: number;
  requests: Array<{
    method: string;
    url: string;
    range: string | undefined;
    host: string | undefined;
  }>;
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startTestServer(host = "127.0.0.1", port = 0): Promise<TestServer> {
  const routes = new Map<string, Route>();
  const requests: TestServer["requests"] = [];
  const server = http.createServer((request, response) => {
    requests.push({
      method: request.method ?? "",
      url: request.url ?? "",
      range: request.headers.range,
      host: request.headers.host,
    });
    const path = (request.url ?? "/").split("?")[0];
    const handler = routes.get(path);
    if (!handler) {
      response.writeHead(404).end("not found");
      return;
    }
    Promise.resolve(handler(request, response)).catch(() => response.destroy());
  });
  server.listen(port, host);
  await once(server, "listening");
  const bound = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${bound}`,
    port: bound,
    requests,
    route: (path, handler) => routes.set(path, handler),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface FileRouteOptions {
  ranges: boolean;
  contentType?: string;
  /** Count of body bytes sent goes here. */
  onBytes?: (bytes: number) => void;
}

/** A route serving a file, honouring Range only when `ranges` is true. */
export function fileRoute(path: string, options: FileRouteOptions): Route {
  return async (request, response) => {
    const { size } = await stat(path);
    const contentType = options.contentType ?? "video/mp4";
    const match = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? "");
    let start = 0;
    let end = size - 1;
    if (options.ranges && match) {
      start = match[1] === "" ? size - Number(match[2]) : Number(match[1]);
      end = match[1] !== "" && match[2] !== "" ? Math.min(Number(match[2]), size - 1) : size - 1;
      if (start >= size) {
        response.writeHead(416, { "content-range": `bytes */${size}` }).end();
        return;
      }
      response.writeHead(206, {
        "content-type": contentType,
        "content-length": end - start + 1,
        "content-range": `bytes ${start}-${end}/${size}`,
        "accept-ranges": "bytes",
      });
    } else {
      response.writeHead(200, { "content-type": contentType, "content-length": size });
    }
    if (request.method === "HEAD") {
      response.end();
      return;
    }
    const stream = createReadStream(path, { start, end });
    stream.on("data", (chunk) => options.onBytes?.(chunk.length));
    stream.pipe(response);
    response.on("close", () => stream.destroy());
  };
}
