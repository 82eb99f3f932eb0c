import type { MiddlewareHandler } from "hono";
import { createRouter } from "../../app.ts";
import type { AppEnv } from "../../context.ts";
import { getFileHandler } from "./handlers.ts";
import { FILE_PATH } from "./routes.ts";

/**
 * Every answer of /files/* is read only as the type it says: captions come from uploaders, and
 * a browser that sniffed one as HTML would run it on our origin.
 */
const noSniffing: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  c.res.headers.set("X-Content-Type-Options", "nosniff");
};

export const filesRouter = createRouter().use(FILE_PATH, noSniffing).get(FILE_PATH, getFileHandler);
