import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

// A child process that opens embedded databases through `openDatabase`, closes them and has nothing
// else to do. Its "closed" line marks the close; the time from there to its exit is what is measured.
const CHILD = `
import { sql } from "kysely";
import { openDatabase } from ${JSON.stringify(new URL("../src/index.ts", import.meta.url).href)};
const used = await openDatabase("pglite://memory");
await sql\`select 1\`.execute(used.kysely);
const unused = await openDatabase("pglite://memory");
await Promise.all([used.close(), unused.close()]);
process.stdout.write("closed\\n");
`;

describe("closing an embedded database", () => {
  it("leaves nothing behind that keeps the process alive", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "--eval", CHILD], {
      cwd: new URL("..", import.meta.url),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    let closedAt: number | undefined;
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      if (text.includes("closed")) closedAt ??= performance.now();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", resolve);
    });
    expect(code, stderr).toBe(0);
    expect(closedAt, "the child reported its close").toBeDefined();
    expect(performance.now() - (closedAt as number)).toBeLessThan(3_000);
  }, 60_000);
});
