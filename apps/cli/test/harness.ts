// Runs the CLI against the real platform: in-process through run() with streams that say whether
// they are terminals (for the output contract), or as a child process (exit codes, stdin, env).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Io } from "../src/context.ts";
import { run } from "../src/run.ts";

export { startTestPlatform, type TestPlatform } from "../../../packages/sdk/test/platform.ts";

export const MAIN = fileURLToPath(new URL("../bin/agentplane.mjs", import.meta.url));

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export function tempConfigDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "agentplane-cli-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A stream that says whether it is a terminal, and how wide; `text()` is what was written. */
export function stream(tty: boolean, columns = 100): NodeJS.WriteStream & { text(): string } {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text(): string };
  let out = "";
  s.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  Object.assign(s, { isTTY: tty, columns, rows: 40, text: () => out, hasColors: () => false, getColorDepth: () => 1 });
  return s;
}

/** Runs in this process; `tty` makes stdout claim to be a terminal `columns` wide (stderr stays a pipe). */
export async function runInProcess(
  argv: string[],
  env: Record<string, string>,
  tty = false,
  columns = 100,
): Promise<Ran> {
  const stdout = stream(tty, columns);
  const stderr = stream(false);
  const stdin = new PassThrough() as unknown as NodeJS.ReadStream;
  const io: Io = { env: { NO_COLOR: "1", ...env }, stdin, stdout, stderr };
  const code = await run(argv, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Runs `node apps/cli/src/main.ts` as a child with only the given environment (plus PATH, HOME). */
export function runCli(argv: string[], env: Record<string, string>, stdin?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...argv], {
      env: { PATH: process.env.PATH ?? "", HOME: env.HOME ?? tmpdir(), NO_COLOR: "1", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}
