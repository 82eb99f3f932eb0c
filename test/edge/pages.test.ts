// Every page the edge renders starts with the doctype (else browsers fall back to quirks mode)
// and carries the strict Content-Security-Policy.
import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { ORIGIN } from "./support/api.ts";

it.each(["/", "/docs", "/sign-in", "/sign-in/code?email=a%40example.com"])(
  "%s is a standards-mode page with a CSP",
  async (path) => {
    const res = await exports.default.fetch(`${ORIGIN}${path}`, {
      headers: { "cf-connecting-ip": "198.51.100.77" },
    });
    const html = await res.text();
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html.slice(0, 15).toLowerCase()).toBe("<!doctype html>");
    expect(html.match(/<!doctype/gi)).toHaveLength(1);
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
  },
);
