import type { Handler } from "hono";
import { findSample } from "../../../schema/samples.ts";
import { routeNotFound } from "../../app.ts";
import type { AppEnv } from "../../context.ts";
import { parseByteRange } from "../../samples/byte-range.ts";
import { openSample } from "../../samples/store.ts";
import type { SAMPLE_PATH } from "./routes.ts";

export const getSampleHandler: Handler<AppEnv, typeof SAMPLE_PATH> = async (c) => {
  const sample = findSample(c.req.param("name"));
  const file = sample ? await openSample(c.env, sample) : null;
  if (!sample || !file) throw routeNotFound(c.req.method, c.req.path);
  const headers: Record<string, string> = {
    "content-type": sample.contentType,
    "accept-ranges": "bytes",
    etag: file.etag,
    "cache-control": "public, max-age=3600",
    // Players on other sites may load it (<video crossorigin>); it is public anyway.
    "access-control-allow-origin": "*",
    "x-content-type-options": "nosniff",
  };
  if (c.req.header("if-none-match") === file.etag) {
    return new Response(null, { status: 304, headers });
  }
  // If-Range names the copy the client already has part of; another copy is sent whole.
  const ifRange = c.req.header("if-range");
  const range =
    ifRange === undefined || ifRange === file.etag
      ? parseByteRange(c.req.header("range"), file.size)
      : null;
  if (range === "unsatisfiable") {
    return new Response(null, {
      status: 416,
      headers: { ...headers, "content-range": `bytes */${file.size}` },
    });
  }
  const head = c.req.method === "HEAD";
  if (range) {
    const body = head ? null : await file.read(range);
    return new Response(body, {
      status: 206,
      headers: {
        ...headers,
        "content-length": String(range.length),
        "content-range": `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`,
      },
    });
  }
  return new Response(head ? null : await file.read(), {
    headers: { ...headers, "content-length": String(file.size) },
  });
};
