// Reading a posted form. Only urlencoded and multipart bodies are forms; anything else reads as
// an empty one (every field then fails its schema, with a message). A body far larger than
// any of our forms is refused before it is parsed.
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";

const MAX_FORM_BYTES = 16 * 1024;

export async function formOf(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return {};
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > MAX_FORM_BYTES) {
    throw new ApiError("InvalidRequest", `Form bodies are at most ${MAX_FORM_BYTES} bytes`);
  }
  try {
    return await c.req.parseBody();
  } catch {
    throw new ApiError("InvalidRequest", "The form body could not be read");
  }
}
