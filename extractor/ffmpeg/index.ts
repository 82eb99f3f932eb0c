// ffmpeg and ffprobe, wrapped once: argument builders (pure), the process shell, the probe.
export * from "./args.ts";
export * from "./probe.ts";
export * from "./process.ts";
