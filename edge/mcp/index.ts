// The remote MCP server at /mcp (issue 10): Streamable HTTP, stateless (each POST is answered
// by a fresh server; Workers keep nothing between requests), behind the same API-key check
// and rate limit as REST. An OAuth access token reaches here already exchanged for its
// connector's key (edge/oauth/tokens.ts), so this route knows one kind of credential.
import { StreamableHTTPTransport } from "@hono/mcp";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { createRouter } from "../app.ts";
import type { AppEnv } from "../context.ts";
import { requireApiKey } from "../middleware/auth.ts";
import { protectedResourceMetadataUrl } from "../oauth/server.ts";
import { createMcpServer } from "./server.ts";

export const MCP_PATH = "/mcp";

/**
 * A 401 names where OAuth discovery starts (MCP authorization, RFC 9728), so a client that
 * only speaks OAuth can sign in; the body stays the spec's error, as REST's 401s.
 */
const challenge = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.res.status === 401) {
    const presented = /^Bearer\s+\S/i.test(c.req.header("authorization") ?? "");
    c.res.headers.set(
      "WWW-Authenticate",
      `Bearer resource_metadata="${protectedResourceMetadataUrl(c)}"${presented ? ', error="invalid_token"' : ""}`,
    );
  }
});

export const mcpRouter = createRouter();

mcpRouter.use(
  MCP_PATH,
  // Credentials travel in headers, never cookies, so any origin may call (browser-based clients).
  cors({
    origin: "*",
    allowMethods: ["POST", "GET", "DELETE", "OPTIONS"],
    allowHeaders: [
      "authorization",
      "x-api-key",
      "content-type",
      "accept",
      "mcp-protocol-version",
      "mcp-session-id",
      "last-event-id",
    ],
    exposeHeaders: ["mcp-session-id", "www-authenticate", "x-ratelimit-remaining", "retry-after"],
  }),
  challenge,
  requireApiKey,
);

/**
 * One message per request. The limiter counts requests, and a JSON-RPC batch would carry
 * thousands of tool calls in one (the 256 KiB body holds about 2,000), so a batch is refused
 * before any of it runs: MCP 2025-06-18 removed batching, and the SDK and the Inspector never
 * send one. The refused request has been counted like any other.
 */
function batchRefused(c: Context<AppEnv>) {
  return c.json(
    {
      jsonrpc: "2.0",
      error: {
        code: ErrorCode.InvalidRequest,
        message:
          "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed batching); send one message per request",
      },
      id: null,
    },
    400,
  );
}

mcpRouter.post(MCP_PATH, async (c) => {
  // A body that is not JSON is left to the transport, which answers its own parse error.
  const message: unknown = await c.req.json().catch(() => undefined);
  if (Array.isArray(message)) return batchRefused(c);
  const server = createMcpServer(c);
  const transport = new StreamableHTTPTransport();
  await server.connect(transport);
  try {
    return (await transport.handleRequest(c, message)) ?? c.body(null, 202);
  } catch (err) {
    // The transport answers protocol faults (bad JSON, wrong Accept…) with ready JSON-RPC replies.
    if (err instanceof HTTPException && err.res) return err.getResponse();
    throw err;
  }
});

// Stateless: there is no session whose stream could be opened (GET) or ended (DELETE).
mcpRouter.on(["GET", "DELETE"], MCP_PATH, (c) =>
  c.json(
    {
      jsonrpc: "2.0",
      error: { code: ErrorCode.ConnectionClosed, message: "Method not allowed: POST to /mcp" },
      id: null,
    },
    405,
    { Allow: "POST, OPTIONS" },
  ),
);
