// Where `stills login` keeps the key: the user's config directory, the file readable by its
// owner only (0600, in a 0700 directory). STILLS_API_KEY, when set, wins over it.
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export interface StoredConfig {
  api_key?: string;
}

/** `$XDG_CONFIG_HOME/stills/config.json` (default ~/.config), or the platform's own place. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === "win32" && env.APPDATA)
    return join(env.APPDATA, "stills", "config.json");
  if (process.platform === "darwin" && !env.XDG_CONFIG_HOME) {
    return join(homedir(), "Library", "Application Support", "stills", "config.json");
  }
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "stills", "config.json");
}

export async function readConfig(file = configFile()): Promise<StoredConfig> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as StoredConfig;
  } catch {
    return {};
  }
}

export async function writeConfig(config: StoredConfig, file = configFile()): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFile is masked by the umask; chmod is not.
  await chmod(partial, 0o600);
  const { rename } = await import("node:fs/promises");
  await rename(partial, file);
}

export async function removeConfig(file = configFile()): Promise<void> {
  await rm(file, { force: true });
}
