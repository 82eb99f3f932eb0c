// A request on the service's own sample that fails for another reason names only that reason:
// the sample passes the address rules in the list of problems as it does when the job is made
// (edge/sources.ts), even where private addresses are refused and the origin is loopback.
import { env } from "cloudflare:workers";
import { afterEach, expect, it } from "vitest";
import { api, createAccount } from "./support/api.ts";

const settings = env as unknown as Record<string, string | undefined>;
const publicBaseUrl = settings.PUBLIC_BASE_URL;
afterEach(() => {
  settings.PUBLIC_BASE_URL = publicBaseUrl;
});

it("lists a bad every on the sample without calling the sample's loopback address a problem", async () => {
  settings.PUBLIC_BASE_URL = "http://127.0.0.1:8787";
  expect(settings.STILLS_ALLOW_PRIVATE_NETWORK).toBe("0");
  const { auth } = await createAccount({ plan: "starter" });
  const sample = await api("POST", "/v1/jobs", {
    body: { url: "http://127.0.0.1:8787/samples/intro.mp4", every: 0.05 },
    headers: auth,
  });
  expect(sample.status).toBe(400);
  expect(sample.body.data.name).toBe("InvalidRequest");
  expect(sample.body.data.errors.map((e: { param: string }) => e.param)).toEqual(["every"]);
  // Any other loopback link is still named, first.
  const other = await api("POST", "/v1/jobs", {
    body: { url: "http://127.0.0.1:8787/elsewhere.mp4", every: 0.05 },
    headers: auth,
  });
  expect(other.status).toBe(400);
  expect(other.body.data.name).toBe("InvalidUrl");
  expect(other.body.data.errors.map((e: { param: string }) => e.param)).toEqual(["url", "every"]);
});
