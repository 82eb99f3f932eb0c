// Types of media-tools.mjs for the TypeScript tests.
type Env = Record<string, string | undefined>;

export const INSTALL_COMMAND: string;
export function mediaToolCommands(env?: Env): { ffmpeg: string; ffprobe: string };
export function missingMediaTools(env?: Env): ("ffmpeg" | "ffprobe")[];
export function ensureMediaTools(options?: {
  env?: Env;
  install?: boolean;
  say?: (line: string) => void;
}): { installed: boolean };
export const TEXT_INSTALL_COMMAND: string;
export function tesseractReadsEnglish(env?: Env): boolean;
export function ensureTextTools(options?: {
  env?: Env;
  install?: boolean;
  say?: (line: string) => void;
}): { installed: boolean; missing: boolean };
