// How ffmpeg, ffprobe and yt-dlp are started: they parse what strangers send, so they run
// with an environment that holds no secret, in their own process group (killed whole at a
// deadline), marked with the extractor that started them (extractor/leftovers.ts), and, when a
// media user is configured, as that unprivileged user: a compromised decoder then cannot read
// /proc/<extractor>/environ (INTERNAL_TOKEN) nor signal or trace the extractor.
import type { SpawnOptions } from "node:child_process";
import { readFileSync } from "node:fs";
import { OWNER_ID, OWNER_MARKER } from "./owner.ts";

export interface MediaIdentity {
  uid: number;
  gid: number;
  /** For logs: the user's name, or "uid:gid" when given by number. */
  label: string;
}

/** The user the container image creates for the media tools (extractor/Dockerfile). */
export const DEFAULT_MEDIA_USER = "stills-media";

let identity: MediaIdentity | null = null;

/** Set once at start (extractor/main.ts); tests set and reset it. null: run as ourselves. */
export function useMediaIdentity(next: MediaIdentity | null): void {
  identity = next;
}

export function mediaIdentity(): MediaIdentity | null {
  return identity;
}

/** Spawn options for a media tool: its own group, only `env` (plus our marker), our identity. */
export function mediaSpawnOptions(env: Record<string, string>): SpawnOptions {
  return {
    detached: true,
    env: { ...env, [OWNER_MARKER]: OWNER_ID },
    ...(identity ? { uid: identity.uid, gid: identity.gid } : {}),
  };
}

export type MediaUserChoice =
  | { identity: MediaIdentity; why: string }
  | { identity: null; why: string; warn: boolean };

/**
 * EXTRACTOR_MEDIA_USER: a user name, "uid:gid", or "self". Unset: the image's stills-media
 * user when we run as root and it exists, else ourselves (with a warning to log). A named
 * user that does not exist is a configuration error.
 */
export function chooseMediaUser(
  setting: string | undefined,
  runningUid: number | undefined = process.getuid?.(),
  passwd: () => string = () => readFileSync("/etc/passwd", "utf8"),
): MediaUserChoice {
  if (setting === "self") {
    return { identity: null, why: "EXTRACTOR_MEDIA_USER=self", warn: false };
  }
  const numeric = /^(\d+):(\d+)$/.exec(setting ?? "");
  if (numeric) {
    const [uid, gid] = [Number(numeric[1]), Number(numeric[2])];
    return { identity: { uid, gid, label: `${uid}:${gid}` }, why: "EXTRACTOR_MEDIA_USER" };
  }
  const name = setting ?? DEFAULT_MEDIA_USER;
  const found = lookupUser(name, passwd);
  if (setting !== undefined) {
    if (!found) throw new Error(`EXTRACTOR_MEDIA_USER names a user that does not exist: ${name}`);
    return { identity: found, why: "EXTRACTOR_MEDIA_USER" };
  }
  if (runningUid === 0 && found) return { identity: found, why: `running as root, ${name} exists` };
  return {
    identity: null,
    warn: true,
    why:
      runningUid === 0
        ? `no ${name} user: media tools run as root like the extractor (create the user, or set EXTRACTOR_MEDIA_USER)`
        : "not root: media tools run as the extractor's own user and could read its environment",
  };
}

function lookupUser(name: string, passwd: () => string): MediaIdentity | null {
  let text: string;
  try {
    text = passwd();
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const [user, , uid, gid] = line.split(":");
    if (user === name && /^\d+$/.test(uid ?? "") && /^\d+$/.test(gid ?? "")) {
      return { uid: Number(uid), gid: Number(gid), label: name };
    }
  }
  return null;
}
