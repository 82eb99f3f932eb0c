// The job store's frames: the result's frames as settlement writes them, and as the reads
// return them (decision 0200).
import { asc, eq } from "drizzle-orm";
import { type FrameRow, frames } from "../../../schema/db.ts";
import type { Db } from "../../context.ts";
import { foldedRows } from "../../storage/prepared-select.ts";

/** The result's frames, from its JSON, in one statement. */
export function insertFrames(db: D1Database, jobId: string, framesJson: string) {
  return db
    .prepare(
      `INSERT OR REPLACE INTO frames (job_id, idx, timestamp, pts, status, r2_key, error,
         scene_score, moved_to, moved_reason, caption, thumb_key, score, score_parts, text,
         slide, captured_at, captured_at_source)
       SELECT ?1, value ->> '$.index', value ->> '$.timestamp', value ->> '$.pts',
              value ->> '$.status', value ->> '$.key', value ->> '$.error',
              value ->> '$.scene_score', value ->> '$.moved_to', value ->> '$.moved_reason',
              value ->> '$.caption', value ->> '$.thumb_key',
              value ->> '$.score', value -> '$.score_parts', value -> '$.text',
              value -> '$.slide', value ->> '$.captured_at', value ->> '$.captured_at_source'
       FROM json_each(?2)`,
    )
    .bind(jobId, framesJson);
}

export function frameRowsOf(db: Db, jobId: string): Promise<FrameRow[]> {
  return db.select().from(frames).where(eq(frames.jobId, jobId)).orderBy(asc(frames.index));
}

/** A job's frames folded in one column of its row (the read path's one statement). */
export const FRAMES_OF_THE_JOB = foldedRows(frames, `"frames"."job_id" = "jobs"."id"`, "index");
