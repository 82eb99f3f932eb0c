// What every MCP tool is made of, and how its answers are shaped. Inputs are validated with
// the zod schemas of schema/ (the REST API's own), so a constraint exists once; a failure is
// the same ApiError REST would throw, and every ApiError becomes a tool error that carries the
// spec's error body (data.name, data.userMessage) as structured content.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ContentBlock,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { type ZodType, z } from "zod";
import { ErrorBodySchema } from "../../schema/api.ts";
import { errorContext } from "../app.ts";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { errorFields, logEvent } from "../log.ts";
import type { ToolInput } from "./inputs.ts";
import { portableSchema } from "./portable-schema.ts";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type JsonSchemaObject = { type: "object"; [key: string]: unknown };

/**
 * Every tool states all four hints (MCP's defaults assume the worst: a tool that says nothing
 * is taken as destructive and open-world), so the type asks for each.
 */
export type ToolHints = Required<
  Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">
>;

/** A tool that only reads this account's data or the public price list. */
export const READS: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** A tool that starts jobs: it fetches a stranger's link and makes something new each call. */
export const STARTS_JOBS: ToolHints = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  annotations: ToolAnnotations;
  call(c: Context<AppEnv>, args: unknown, extra: ToolExtra): Promise<CallToolResult>;
}

/**
 * A tool whose arguments are shown and checked as `input` says (edge/mcp/inputs.ts) and whose
 * success is `output`-shaped structured content. Its outputSchema admits the spec's error body
 * too, because MCP clients validate structured content on errors as well.
 */
export function defineTool<In>(spec: {
  name: string;
  title: string;
  description: string;
  input: ToolInput<In>;
  output: ZodType;
  annotations: ToolHints;
  run(c: Context<AppEnv>, input: In, extra: ToolExtra): Promise<CallToolResult>;
}): Tool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: portableSchema(spec.input.json),
    outputSchema: portableSchema({
      type: "object",
      anyOf: [jsonSchemaOf(spec.output), jsonSchemaOf(ErrorBodySchema.loose())],
    }),
    annotations: { title: spec.title, ...spec.annotations },
    async call(c, args, extra) {
      try {
        return await spec.run(c, spec.input.parse(asObject(args)), extra);
      } catch (err) {
        if (err instanceof ApiError) return toolError(c, err);
        // As REST's onError: log what went wrong, tell the caller only that it did.
        logEvent("error", "mcp.tool_failed", { tool: spec.name, ...errorFields(err) });
        return toolError(
          c,
          new ApiError("ServiceUnavailable", "The service failed to handle this call", {
            userMessage: "Something went wrong on our side. Please try again.",
          }),
        );
      }
    },
  };
}

function asObject(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === "object" && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

/** JSON Schema (draft-07, which every MCP client's validator reads) of what a tool returns. */
function jsonSchemaOf(schema: ZodType): JsonSchemaObject {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: "output",
    target: "draft-7",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return { ...json, type: "object" };
}

/** A successful answer: a short summary an agent reads, and the structured result. */
export function toolResult(
  summary: string,
  structured: Record<string, unknown>,
  more: ContentBlock[] = [],
): CallToolResult {
  return {
    content: [{ type: "text", text: summary }, ...more],
    structuredContent: structured,
  };
}

/** An MCP tool error carrying the spec's error body, so agents can branch on data.name. */
export function toolError(
  c: Context<AppEnv>,
  error: ApiError,
  extra: Record<string, unknown> = {},
): CallToolResult {
  const body = error.toBody(errorContext(c));
  const more = body.data.errors.slice(1).map((problem) => problem.message);
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: [
          `${body.data.name}: ${body.data.userMessage}${body.message !== body.data.userMessage ? ` (${body.message})` : ""}`,
          ...(more.length > 0 ? [`Also: ${more.join("; ")}.`] : []),
          `Request id ${body.data.request_id}; see ${body.data.doc_url}`,
        ].join(" "),
      },
    ],
    structuredContent: { ...body, ...extra },
  };
}
