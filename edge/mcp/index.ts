// The remote MCP server at /mcp (issue 10). Being built.
import { createRouter } from "../app.ts";

export const mcpRouter = createRouter();
