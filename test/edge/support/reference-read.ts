// What GET /v1/jobs/{id} answered before its read was tuned: a plain drizzle select of the job
// and its frames, through the serializer. The read tests compare the route's answer with it
// byte for byte.
import { env } from "cloudflare:workers";
import { asc, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { edgeConfig } from "../../../edge/config.ts";
import { fileLinker } from "../../../edge/files.ts";
import { jobToApi } from "../../../edge/serialize.ts";
import { frames, jobs } from "../../../schema/db.ts";
import { ORIGIN } from "./api.ts";

export async function answerFromDrizzle(jobId: string): Promise<string> {
  const db = drizzle(env.DB);
  const [row] = await db.select().from(jobs).where(eq(jobs.id, jobId));
  const frameRows = await db
    .select()
    .from(frames)
    .where(eq(frames.jobId, jobId))
    .orderBy(asc(frames.index));
  const config = edgeConfig(env);
  const linker = fileLinker(
    config.secrets.fileUrlSecret,
    config.publicBaseUrl ?? ORIGIN,
    row.expiresAt ?? "",
  );
  return JSON.stringify(await jobToApi(row, frameRows, linker));
}
