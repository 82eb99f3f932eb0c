// The frame of every page the edge renders (landing, docs, sign-in, dashboard): one HTML
// shell, one stylesheet, and the security headers. Pages load scripts and styles only from
// our own origin, so the Content-Security-Policy can forbid everything else.

import { createMiddleware } from "hono/factory";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../context.ts";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Security headers of every HTML page. Mount it on each page router. */
export const pageHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  c.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Frame-Options", "DENY");
});

export function Page(props: {
  title: string;
  /** Same-origin script paths, e.g. "/assets/demo.js", loaded deferred. */
  scripts?: string[];
  children?: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/assets/site.css" />
        {props.scripts?.map((src) => (
          <script src={src} defer />
        ))}
      </head>
      <body>{props.children}</body>
    </html>
  );
}
