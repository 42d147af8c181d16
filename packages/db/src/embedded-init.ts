import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "./database.ts";

/**
 * Initialises an embedded (PGlite) data directory in a child process, so that a first start's
 * server opens an initialised directory as a restart does. PGlite's WebAssembly memory only grows:
 * initialising the cluster in the server itself left it about 90 MiB larger for its whole life
 * (about 340 MiB idle after a first start of the all-in-one, against about 250 after a restart).
 * Resolves false when the directory was initialised already; rejects with the child's last lines
 * when it fails.
 */
export async function initialiseEmbeddedInChild(dir: string): Promise<boolean> {
  if (existsSync(join(dir, "PG_VERSION"))) return false;
  // Liftoff alone: initdb runs once, and optimising PGlite's WebAssembly would cost more than it saves.
  const child = spawn(process.execPath, ["--liftoff-only", import.meta.filename, dir], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH ?? "" },
  });
  const errors: string[] = [];
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    errors.push(text);
    if (errors.length > 20) errors.shift();
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) {
    throw new Error(`initialising the embedded database in ${dir} failed (exit ${code}): ${errors.join("").trim()}`);
  }
  return true;
}

if (import.meta.main) {
  const dir = process.argv[2] as string;
  const database = await openDatabase(`pglite://${dir}`);
  await database.close();
}
