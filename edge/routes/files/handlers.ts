import { eq } from "drizzle-orm";
import type { Handler } from "hono";
import { demoJobs, jobs } from "../../../schema/db.ts";
import { parseFileKey } from "../../../schema/job-files.ts";
import { edgeConfig } from "../../config.ts";
import type { AppEnv, Db } from "../../context.ts";
import {
  checkFileSignature,
  fileHeaders,
  fileLinker,
  THUMBNAIL_SPRITE_NAME,
  THUMBNAIL_TRACK_NAME,
  withSignedSprite,
} from "../../files.ts";
import { filesStillServed } from "../../jobs/reuse.ts";
import { baseUrl } from "../../request.ts";
import { filesAreLive } from "../../serialize.ts";
import type { FILE_PATH } from "./routes.ts";

async function ownerOf(db: Db, kind: "job" | "demo", id: string) {
  const table = kind === "job" ? jobs : demoJobs;
  const [row] = await db
    .select({ status: table.status, expiresAt: table.expiresAt })
    .from(table)
    .where(eq(table.id, id));
  return row;
}

const NOT_FOUND = { status: "", expiresAt: null };

const forbidden = (reason: string) =>
  new Response(JSON.stringify({ error: reason }), {
    status: 403,
    headers: { "content-type": "application/json" },
  });

/** The key a path names, or null when the path is not valid percent-encoding (`/files/%ZZ`). */
function keyOf(path: string): string | null {
  try {
    return decodeURIComponent(path.slice("/files/".length));
  } catch {
    return null;
  }
}

export const getFileHandler: Handler<AppEnv, typeof FILE_PATH> = async (c) => {
  const key = keyOf(c.req.path);
  if (key === null) {
    return new Response(JSON.stringify({ error: "the file path is not valid" }), {
      status: 400,
      headers: { "content-type": "application/json" },
    });
  }
  const parsed = parseFileKey(key);
  const check = await checkFileSignature(
    edgeConfig(c.env).secrets.fileUrlSecret,
    key,
    c.req.query("expires"),
    c.req.query("signature"),
  );
  if (!parsed || check === "bad-signature") return forbidden("invalid signature");
  if (check === "expired") return forbidden("this link has expired");
  // A job's files are also served to a later job that reused them (decision 0350) while it
  // lives; each URL still expires with the job it was minted for.
  const served =
    (await filesStillServed(c.env.DB, parsed.kind, parsed.jobId, Date.now())) ??
    filesAreLive((await ownerOf(c.get("db"), parsed.kind, parsed.jobId)) ?? NOT_FOUND);
  if (!served) return forbidden("the job's files are no longer available");
  const object = await c.env.FILES.get(key);
  if (!object) return forbidden("the job's files are no longer available");
  if (parsed.name === THUMBNAIL_TRACK_NAME) {
    // The sprite's URL expires with this one (the job's expires_at), whichever kind it is.
    const expiresAt = new Date(Number(c.req.query("expires")) * 1000).toISOString();
    const spriteKey = `${key.slice(0, -THUMBNAIL_TRACK_NAME.length)}${THUMBNAIL_SPRITE_NAME}`;
    const spriteUrl = await fileLinker(
      edgeConfig(c.env).secrets.fileUrlSecret,
      baseUrl(c),
      expiresAt,
    ).url(spriteKey);
    const track = new TextEncoder().encode(withSignedSprite(await object.text(), spriteUrl));
    return new Response(track, {
      headers: {
        ...fileHeaders(parsed),
        "content-length": String(track.byteLength),
        // Players load tracks with CORS (<video crossorigin>) from the customer's own site.
        "access-control-allow-origin": "*",
      },
    });
  }
  return new Response(object.body, {
    headers: {
      // The same headers presigned URLs ask R2 for (edge/files.ts).
      ...fileHeaders(parsed),
      "content-length": String(object.size),
      etag: object.httpEtag,
    },
  });
};
