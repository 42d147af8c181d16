import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "on-shutdown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SERVE = pathToFileURL(join(import.meta.dirname, "../src/serve.ts")).href;

describe("onShutdown", () => {
  it("finishes a cleanup whose last step waits on nothing that holds the process open", async () => {
    const marker = join(dir, "closed");
    // The cleanup's wait is an unreferenced timer, as a wait on an unreferenced worker thread is.
    const script = `
      import { writeFileSync } from "node:fs";
      const { onShutdown } = await import(${JSON.stringify(SERVE)});
      const alive = setInterval(() => {}, 1000);
      onShutdown(async () => {
        clearInterval(alive);
        await new Promise((resolve) => setTimeout(resolve, 300).unref());
        writeFileSync(${JSON.stringify(marker)}, "closed");
      });
      process.stdout.write("ready\\n");
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await once(child.stdout, "data");
    child.kill("SIGTERM");
    const [code] = (await once(child, "exit")) as [number | null];
    expect(existsSync(marker)).toBe(true);
    expect(code).toBe(0);
  });
});
