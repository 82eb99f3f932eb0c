// The local stack's front door (decision 0104). Cloudflare sets CF-Connecting-IP from the
// connection and overwrites what a client sent; `wrangler dev` believes a client's header, so
// the stack puts this proxy on its public port in front of `wrangler dev` (on a private
// loopback port). Each request goes on with CF-Connecting-IP set to the socket's address, and
// with every address header the client sent (X-Forwarded-*, X-Real-IP, True-Client-IP,
// Forwarded, CF-*) taken out. Bodies stream both ways as they come (uploads, ZIP downloads,
// long waits, MCP's event streams); status, Host and every other header pass unchanged,
// repeated ones (Set-Cookie) included. Connections are kept alive on both sides.
import { randomUUID } from "node:crypto";
import { Agent, createServer, request as httpRequest } from "node:http";

/** What a client may not tell the edge about its own address. */
function isAddressHeader(name) {
  return (
    name.startsWith("cf-") ||
    name.startsWith("x-forwarded-") ||
    name === "x-real-ip" ||
    name === "true-client-ip" ||
    name === "forwarded"
  );
}

/** Headers about one hop (RFC 9110 §7.6.1), plus those the `Connection` header names. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  // Answered here already: Node sends `100 Continue` to the client itself.
  "expect",
]);

function hopByHop(headers) {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  return new Set([...HOP_BY_HOP, ...named]);
}

/** A raw header list ([name, value, name, value …]) without the names `drop` refuses. */
function keepHeaders(raw, drop) {
  const kept = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!drop(raw[i].toLowerCase())) kept.push(raw[i], raw[i + 1]);
  }
  return kept;
}

/** The socket's address as Cloudflare writes it: IPv4 without its IPv6-mapped prefix. */
export function clientAddress(socket) {
  const address = socket.remoteAddress ?? "";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/** 502 in the API's error shape (schema/api.ts ErrorBodySchema), for an edge that did not answer. */
function badGateway(res, origin, err) {
  const requestId = randomUUID();
  const message = `The local edge (wrangler dev) did not answer: ${err.code ?? err.message}`;
  const body = JSON.stringify({
    name: "BadGateway",
    message,
    code: 502,
    className: "bad-gateway",
    data: {
      name: "ServiceUnavailable",
      userMessage: "The service is starting or restarting. Try again in a few seconds.",
      errors: [{ param: null, message }],
      request_id: requestId,
      doc_url: `${origin}/docs/errors#ServiceUnavailable`,
    },
  });
  res.writeHead(502, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId,
    "retry-after": "1",
  });
  res.end(body);
}

/**
 * Listens on host:port and hands every request to `upstream` (an http://host:port origin).
 * Resolves once listening, with `close()` (ends every connection) and the `url` it serves.
 */
export async function startClientAddressProxy({ host = "127.0.0.1", port, upstream }) {
  const target = new URL(upstream);
  const origin = `http://${host}:${port}`;
  const agent = new Agent({ keepAlive: true });

  function forward(req, res, retried) {
    const drop = hopByHop(req.headers);
    const headers = keepHeaders(req.rawHeaders, (name) => drop.has(name) || isAddressHeader(name));
    headers.push("cf-connecting-ip", clientAddress(req.socket));
    const upstreamReq = httpRequest({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers,
      agent,
    });
    upstreamReq.on("socket", (socket) => socket.setNoDelay(true));
    upstreamReq.on("response", (upstreamRes) => {
      const dropped = hopByHop(upstreamRes.headers);
      dropped.add("transfer-encoding"); // Node frames the answer to the client itself
      res.writeHead(
        upstreamRes.statusCode ?? 502,
        upstreamRes.statusMessage,
        keepHeaders(upstreamRes.rawHeaders, (name) => dropped.has(name)),
      );
      // A streamed answer (no length: events, a wait) shows its headers at once.
      if (upstreamRes.headers["content-length"] === undefined) res.flushHeaders();
      upstreamRes.pipe(res);
      // The edge broke off its answer: so does the client's, rather than end it short.
      upstreamRes.on("close", () => {
        if (!upstreamRes.complete) res.destroy();
      });
    });
    upstreamReq.on("error", (err) => {
      if (res.headersSent) return res.destroy();
      // A kept-alive connection the edge closed as it was reused: a request without a body
      // is sent again once on a new one (what Node's documentation advises for reusedSocket).
      const bodiless = req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS";
      if (!retried && upstreamReq.reusedSocket && err.code === "ECONNRESET" && bodiless) {
        return forward(req, res, true);
      }
      badGateway(res, origin, err);
      req.resume();
    });
    // The client went away before the answer ended: so does the edge's request.
    res.on("close", () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.on("error", () => upstreamReq.destroy());
    if (retried) upstreamReq.end();
    else req.pipe(upstreamReq);
  }

  // No request timeout: uploads and long waits take what they take, as under wrangler alone.
  const server = createServer({ requestTimeout: 0, noDelay: true }, (req, res) =>
    forward(req, res, false),
  );
  await new Promise((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  return {
    url: origin,
    close: () =>
      new Promise((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/**
 * The same proxy in a process of its own, as the stack runs it: in the process that started
 * the stack (a bench driving hundreds of jobs, a test decoding frames) every request would
 * wait on that process's own work. It leads a session of its own, so the kernel schedules it
 * as a group of its own too, not inside that process's (decision 0375). Resolves once it
 * listens; `close()` ends it. It also ends when its parent does (its stdin closes).
 */
export async function spawnClientAddressProxy({ host = "127.0.0.1", port, upstream }) {
  const { spawn } = await import("node:child_process");
  const child = spawn(
    process.execPath,
    [new URL(import.meta.url).pathname, "--host", host, "--port", String(port), upstream],
    { stdio: ["pipe", "pipe", "inherit"], detached: true },
  );
  const exited = new Promise((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  await new Promise((resolveListen, reject) => {
    let said = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      said += chunk;
      if (said.includes("listening\n")) resolveListen();
    });
    exited.then((code) =>
      reject(new Error(`the address proxy on ${host}:${port} exited (${code}): ${said.trim()}`)),
    );
  });
  return {
    url: `http://${host}:${port}`,
    child,
    close: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

// node client-address-proxy.mjs --host H --port P UPSTREAM: what spawnClientAddressProxy runs.
if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const { parseArgs } = await import("node:util");
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string" } },
  });
  try {
    const proxy = await startClientAddressProxy({
      host: values.host,
      port: Number(values.port),
      upstream: positionals[0],
    });
    const end = () => proxy.close().then(() => process.exit(0));
    process.on("SIGTERM", end);
    process.on("SIGINT", end);
    process.stdin.on("end", end);
    process.stdin.on("error", end);
    process.stdin.resume();
    process.stdout.write("listening\n");
  } catch (err) {
    process.stdout.write(`${err.code ?? err.message}\n`);
    process.exit(1);
  }
}
