import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareDataDir } from "../src/data-dir.ts";

const mode = (path: string) => statSync(path).mode & 0o777;

describe("the all-in-one's data directory", () => {
  const base = mkdtempSync(join(tmpdir(), "data-dir-"));
  chmodSync(base, 0o755);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("is made readable by its owner only, with its parents", () => {
    const dir = join(base, "fresh", ".agentplane");
    prepareDataDir(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it("is closed to other users when an earlier start left it open", () => {
    const dir = join(base, "open");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    prepareDataDir(dir);
    expect(mode(dir)).toBe(0o700);
  });
});
