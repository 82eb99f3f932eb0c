// One MCP server per request (Workers keep no sessions between requests): the tools, bound to
// the request's Hono context, which carries the caller's account, database and limits.
//
// The SDK's low-level Server, not McpServer: McpServer answers invalid arguments with a bare
// text error, and here every error, invalid arguments included, must carry the spec's
// data.name and userMessage, as REST's do. Tools validate with schema/'s zod schemas themselves.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { IMAGES_PER_CALL } from "./frame-pages.ts";
import { PREVIEW_LONG_SIDE } from "./previews.ts";
import type { Tool } from "./tool.ts";
import { getPricing, getUsage } from "./tools/account.ts";
import { createBatchTool, getBatchTool, listBatchesTool } from "./tools/batches.ts";
import { createDemo, getDemo } from "./tools/demo.ts";
import { viewFrames } from "./tools/frames.ts";
import { extractFrames, getJob, listJobsTool } from "./tools/jobs.ts";
import { overview } from "./tools/overview.ts";
import { zoom } from "./tools/zoom.ts";

export const TOOLS: Tool[] = [
  overview,
  zoom,
  extractFrames,
  getJob,
  listJobsTool,
  viewFrames,
  createBatchTool,
  getBatchTool,
  listBatchesTool,
  getUsage,
  getPricing,
  createDemo,
  getDemo,
];
const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

const INSTRUCTIONS =
  "Stills turns a video link into still frames. To skim a video as a person would, call overview first (one contact sheet with times burned in, " +
  "and the captions and text on screen in each tile's span), then zoom into the spans that matter; both keep each answer under max_tokens " +
  "(default 15,000) and name what they left out with a cursor. For full control call extract_frames with a public video URL and a mode " +
  "(count: N evenly spaced frames; every: a frame every N seconds; timestamps: exact seconds). " +
  `It waits for the job; with images: true it also returns the first frames as JPEG images (at most ${PREVIEW_LONG_SIDE} px), ` +
  `and view_frames pages through all of them, ${IMAGES_PER_CALL} per call. For many videos at once (a list of links, or a playlist or channel link), ` +
  "create_batch makes one job per video and returns at once; follow it with get_batch. Jobs cost credits (get_pricing, get_usage); " +
  "failed jobs are free. Errors carry data.name (e.g. PrivateContent, InsufficientBalance) and a userMessage to show.";

export function createMcpServer(c: Context<AppEnv>): Server {
  const server = new Server(
    { name: "stills", title: "Stills — video frames", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map(({ call: _call, ...definition }) => definition),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = BY_NAME.get(request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${request.params.name}; tools/list names them`,
      );
    }
    return tool.call(c, request.params.arguments, extra);
  });
  return server;
}
