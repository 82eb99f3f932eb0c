// The settings the mail, billing, source and storage modules read through edge/config.ts
// instead of `env.X`: blank means unset, a bad value is refused naming it, a changed env is
// parsed again (withEnv swaps the values under one object), and what those modules log is one
// JSON line per event carrying the request id of the context it was written in.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { priceOf } from "../../edge/billing/stripe.ts";
import { edgeConfig, parseEdgeConfig } from "../../edge/config.ts";
import { withLogContext } from "../../edge/log.ts";
import { localSender } from "../../edge/mail/local.ts";
import { mailSenderFor } from "../../edge/mail/sender.ts";
import { allowsPrivateNetwork } from "../../edge/sources.ts";
import { setOutbound } from "./support/fake-extractor.ts";

const SECRETS = { INTERNAL_TOKEN: "a".repeat(32), FILE_URL_SECRET: "b".repeat(32) };
const ACCOUNT_ID = "0123456789abcdef0123456789abcdef";

async function loggedLines(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const keep = (line: unknown) => lines.push(String(line));
  vi.spyOn(console, "log").mockImplementation(keep);
  vi.spyOn(console, "error").mockImplementation(keep);
  try {
    await fn();
  } finally {
    vi.restoreAllMocks();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** edge/storage/r2-presign.ts evaluated afresh (its own `warned`), its imports shared. */
function freshR2Presign(): Promise<typeof import("../../edge/storage/r2-presign.ts")> {
  const fresh = `../../edge/storage/r2-presign.ts?fresh=${crypto.randomUUID()}`;
  return import(/* @vite-ignore */ fresh);
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return "(no error)";
}

afterEach(() => vi.restoreAllMocks());

describe("parsing", () => {
  it("reads blank values as unset, so a price of spaces turns buying off rather than on", () => {
    const config = parseEdgeConfig({ ...SECRETS, STRIPE_PRICE_SCALE: "  ", MAIL_FROM: " " });
    expect(config.stripe.prices.scale).toBeUndefined();
    expect(config.mail.from).toBe("Stills <sign-in@stills.dev>");
    expect(priceOf({ ...env, STRIPE_PRICE_PACK: " price_1 " } as Env, "pack")).toBe("price_1");
  });

  it("gives a job's lease 30 s unless JOB_LEASE_SECONDS says 1 to 600", () => {
    expect(parseEdgeConfig(SECRETS).jobLeaseSeconds).toBe(30);
    expect(parseEdgeConfig({ ...SECRETS, JOB_LEASE_SECONDS: "2" }).jobLeaseSeconds).toBe(2);
    for (const bad of ["0", "601", "1.5", "soon"]) {
      expect(messageOf(() => parseEdgeConfig({ ...SECRETS, JOB_LEASE_SECONDS: bad }))).toContain(
        "JOB_LEASE_SECONDS",
      );
    }
  });

  it("names an unknown mail carrier by its value and the known ones", () => {
    const message = messageOf(() => parseEdgeConfig({ ...SECRETS, MAIL_SENDER: "pigeon" }));
    expect(message).toBe('edge settings: MAIL_SENDER is "pigeon", not one of local, resend');
  });

  it("carries R2's credentials and refuses a malformed account id or bucket", () => {
    const config = parseEdgeConfig({
      ...SECRETS,
      R2_ACCESS_KEY_ID: "key-id",
      R2_SECRET_ACCESS_KEY: "secret",
      R2_ACCOUNT_ID: ACCOUNT_ID,
      R2_BUCKET_NAME: "stills-files",
    });
    expect(config.r2).toEqual({
      accessKeyId: "key-id",
      secretAccessKey: "secret",
      accountId: ACCOUNT_ID,
      s3Endpoint: undefined,
      bucketName: "stills-files",
    });
    expect(config.secrets).toEqual({
      internalToken: SECRETS.INTERNAL_TOKEN,
      fileUrlSecret: SECRETS.FILE_URL_SECRET,
    });
    const message = messageOf(() =>
      parseEdgeConfig({ ...SECRETS, R2_ACCOUNT_ID: "not-hex", R2_BUCKET_NAME: "Bad_Bucket" }),
    );
    expect(message).toContain("R2_ACCOUNT_ID must be a 32-hex account id");
    expect(message).toContain("R2_BUCKET_NAME must be an R2 bucket name");
  });

  it("parses an env again when its values change under the same object", () => {
    const vars = { ...env, STILLS_ALLOW_PRIVATE_NETWORK: "0" } as Env;
    expect(allowsPrivateNetwork(vars)).toBe(false);
    (vars as unknown as Record<string, string>).STILLS_ALLOW_PRIVATE_NETWORK = "1";
    expect(allowsPrivateNetwork(vars)).toBe(true);
    expect(edgeConfig(vars)).toBe(edgeConfig({ ...vars }));
  });
});

describe("the modules that read them", () => {
  it("mail: an unknown carrier is refused before anything is sent", () => {
    expect(() => mailSenderFor({ ...env, MAIL_SENDER: "pigeon" } as Env)).toThrowError(
      /MAIL_SENDER is "pigeon"/,
    );
  });

  it("mail: the local carrier logs one mail.kept_locally line in the request's context", async () => {
    const to = `${crypto.randomUUID()}@example.com`;
    const lines = await loggedLines(() =>
      withLogContext({ request: "req-mail-1" }, () =>
        localSender(env).send({ to, subject: "123456 is your code", text: "Code 123456" }),
      ),
    );
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        side: "edge",
        event: "mail.kept_locally",
        request: "req-mail-1",
        to,
        subject: "123456 is your code",
      }),
    ]);
  });

  it("mail: a refusal from Resend is one mail.refused line with its status, not the key", async () => {
    setOutbound(async () => Response.json({ message: "domain not verified" }, { status: 403 }));
    const resend = {
      ...env,
      MAIL_SENDER: "resend",
      RESEND_API_KEY: "re_secret_key_42",
      MAIL_FROM: "Stills <a@b.test>",
    } as Env;
    const lines = await loggedLines(() =>
      mailSenderFor(resend)
        .send({ to: "ada@example.com", subject: "Hi", text: "Body" })
        .catch(() => undefined),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", event: "mail.refused", status: 403 });
    expect(String(lines[0].detail)).toContain("domain not verified");
    expect(JSON.stringify(lines)).not.toContain("re_secret_key_42");
  });

  it("storage: half the R2 settings leave presigning off, saying so once as a JSON line", async () => {
    const half = { ...env, R2_ACCESS_KEY_ID: "key-id", R2_ACCOUNT_ID: ACCOUNT_ID } as Env;
    // "Once" is once per isolate, and the edge project's files share one (decision 0291): a
    // module instance of its own, which no other file has asked yet.
    const { r2S3Settings } = await freshR2Presign();
    let results: unknown[] = [];
    const lines = await loggedLines(async () => {
      results = [r2S3Settings(half), r2S3Settings(half)];
    });
    expect(results).toEqual([null, null]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", event: "config.presign_off" });
    expect(String(lines[0].reason)).toContain("R2_SECRET_ACCESS_KEY");
    const full = { ...half, R2_SECRET_ACCESS_KEY: "secret", R2_BUCKET_NAME: "stills-files" } as Env;
    expect(r2S3Settings(full)).toEqual({
      accessKeyId: "key-id",
      secretAccessKey: "secret",
      endpoint: `https://${ACCOUNT_ID}.r2.cloudflarestorage.com`,
      bucket: "stills-files",
    });
    expect(
      r2S3Settings({ ...full, R2_S3_ENDPOINT: "https://eu.example.test/" } as Env)?.endpoint,
    ).toBe("https://eu.example.test");
  });
});
