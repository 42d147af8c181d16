// hosts.json holds tokens: whoever made it with looser permissions (a copy from another machine,
// a restored backup), the CLI makes it the owner's alone as soon as it reads it, and a rewrite
// leaves it 0600 in a 0700 directory.
import {
  chmodSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInProcess, tempConfigDir } from "./harness.ts";

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.platform === "win32")("permissions of the stored credentials (POSIX modes)", () => {
  const root = tempConfigDir();
  afterAll(() => root.remove());

  function looseStore(name: string): { dir: string; file: string } {
    const dir = join(root.dir, name);
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const file = join(dir, "hosts.json");
    const hosts = {
      "127.0.0.1:9": { url: "http://127.0.0.1:9", token: "apl_loose_secret", via: "token", savedAt: "" },
    };
    writeFileSync(file, JSON.stringify({ hosts }), { mode: 0o644 });
    chmodSync(file, 0o644);
    return { dir, file };
  }

  it("tightens a hosts.json others could read when a command only reads it", async () => {
    const { dir, file } = looseStore("read");
    const ran = await runInProcess(["auth", "token"], { AGENTPLANE_CONFIG_DIR: dir });
    expect(ran.stdout).toBe("apl_loose_secret\n");
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
  });

  it("leaves the file 0600 and the directory 0700 after a rewrite over a looser one", async () => {
    const { dir, file } = looseStore("rewrite");
    await runInProcess(["config", "set", "org", "org_1"], { AGENTPLANE_CONFIG_DIR: dir });
    const ran = await runInProcess(["auth", "logout", "--url", "http://127.0.0.1:9"], { AGENTPLANE_CONFIG_DIR: dir });
    expect(ran.code).toBe(0);
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(join(dir, "config.json"))).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
  });

  it("writes through no link planted in a directory others could write to", async () => {
    // A directory made by hand open to others: before the CLI tightens it, someone else plants
    // links where a rewrite's temporary file would go, pointing at a file of the owner's.
    const { dir, file } = looseStore("planted");
    chmodSync(dir, 0o777);
    const victim = join(root.dir, "notes.txt");
    writeFileSync(victim, "the owner's notes\n", { mode: 0o644 });
    for (const name of ["hosts.json", "config.json"]) symlinkSync(victim, join(dir, `${name}.${process.pid}.tmp`));
    expect((await runInProcess(["config", "set", "org", "org_1"], { AGENTPLANE_CONFIG_DIR: dir })).code).toBe(0);
    const ran = await runInProcess(["auth", "logout", "--url", "http://127.0.0.1:9"], { AGENTPLANE_CONFIG_DIR: dir });
    expect(ran.code).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("the owner's notes\n");
    expect(modeOf(victim)).toBe(0o644);
    for (const name of ["hosts.json", "config.json"]) {
      expect(lstatSync(join(dir, name)).isFile()).toBe(true);
      expect(modeOf(join(dir, name))).toBe(0o600);
    }
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8"))).toMatchObject({
      defaults: { "127.0.0.1:9": { org: "org_1" } },
    });
    expect(readFileSync(file, "utf8")).not.toContain("apl_loose_secret");
  });
});

// Root may run the CLI with a config directory of another user's (sudo keeping HOME): a link that
// user planted there must not make root change the mode of a file or directory it points at
// (/etc/passwd made 0600 would lock every other user out of name lookups).
describe.skipIf(process.getuid?.() !== 0)("tightening as root through links another user planted", () => {
  const STRANGER = 65531;
  const root = tempConfigDir();
  afterAll(() => root.remove());

  it("changes the mode of neither the file nor the directory a planted link names", async () => {
    const system = join(root.dir, "system");
    mkdirSync(system, { mode: 0o755 });
    chmodSync(system, 0o755);
    const target = join(system, "passwd");
    const hosts = { "127.0.0.1:9": { url: "http://127.0.0.1:9", token: "apl_x", via: "token", savedAt: "" } };
    writeFileSync(target, JSON.stringify({ hosts }), { mode: 0o644 });
    chmodSync(target, 0o644);
    const planted = join(system, "hosts.json");
    symlinkSync(target, planted);
    lchownSync(planted, STRANGER, STRANGER);
    const dirLink = join(root.dir, "agentplane");
    symlinkSync(system, dirLink);
    lchownSync(dirLink, STRANGER, STRANGER);
    const ran = await runInProcess(["auth", "token"], { AGENTPLANE_CONFIG_DIR: dirLink });
    expect(ran.stdout).toBe("apl_x\n");
    expect(modeOf(target)).toBe(0o644);
    expect(modeOf(system)).toBe(0o755);
    // Nor a write there (its own files are made 0600 all the same).
    expect((await runInProcess(["config", "set", "org", "org_1"], { AGENTPLANE_CONFIG_DIR: dirLink })).code).toBe(0);
    expect(modeOf(system)).toBe(0o755);
    expect(modeOf(join(system, "config.json"))).toBe(0o600);
  });
});
