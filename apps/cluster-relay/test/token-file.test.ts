// A rotated tunnel token is written beside the token file through a temporary file. Its name is
// not one another user of that directory can guess, and it is created new: a link planted there
// does not carry the token elsewhere.
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileTokenStore } from "../src/index.ts";

describe("the relay's token file", () => {
  const dir = mkdtempSync(join(tmpdir(), "relay-token-file-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes a rotated token through no link planted beside it, and leaves it the owner's alone", async () => {
    const path = join(dir, "token");
    writeFileSync(path, "apt_first\n", { mode: 0o600 });
    // Where the planted link points: a file its planter can read.
    const stolen = join(dir, "stolen");
    writeFileSync(stolen, "");
    chmodSync(stolen, 0o666);
    symlinkSync(stolen, `${path}.${process.pid}.tmp`);

    const store = new FileTokenStore(path);
    await store.write("apt_rotated");
    expect(readFileSync(stolen, "utf8")).toBe("");
    expect(await store.read()).toBe("apt_rotated");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Nothing of the write is left beside it (the planted link is not the store's to remove).
    expect(readdirSync(dir).sort()).toEqual(["stolen", "token", `token.${process.pid}.tmp`].sort());
  });
});
