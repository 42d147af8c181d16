import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeDataDirEntries, DataDirInUseError, lockDataDir, prepareDataDir } from "../src/data-dir.ts";
import { describeStartupError } from "../src/launch.ts";

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

  it("may be searched, not listed, when local sandboxes there run as their own host user; all else is closed", () => {
    const dir = join(base, "searchable");
    mkdirSync(join(dir, "pgdata", "base"), { recursive: true, mode: 0o755 });
    chmodSync(join(dir, "pgdata"), 0o755);
    writeFileSync(join(dir, "pgdata", "PG_VERSION"), "17\n", { mode: 0o644 });
    writeFileSync(join(dir, "identity.json"), "{}", { mode: 0o644 });
    mkdirSync(join(dir, "sandboxes"), { mode: 0o711 });
    chmodSync(join(dir, "sandboxes"), 0o711);
    prepareDataDir(dir, { searchable: true });
    expect(mode(dir)).toBe(0o711);
    expect(mode(join(dir, "pgdata"))).toBe(0o700);
    expect(mode(join(dir, "identity.json"))).toBe(0o600);
    // The sandboxes' own directory is the driver's to set (their host user searches it).
    expect(mode(join(dir, "sandboxes"))).toBe(0o711);
    // What a later step of the start makes is closed the same way.
    mkdirSync(join(dir, "agent"), { mode: 0o755 });
    chmodSync(join(dir, "agent"), 0o755);
    closeDataDirEntries(dir);
    expect(mode(join(dir, "agent"))).toBe(0o700);
    // A later start without sandboxes of their own user closes the directory itself again.
    prepareDataDir(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it("is held by one start at a time; a second one stops before opening it, naming the holder", async () => {
    const dir = join(base, "held");
    prepareDataDir(dir);
    // The holder is another live process, as a first `npm start` still running would be.
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
    try {
      const pid = other.pid!;
      const releaseOther = lockDataDir(dir, pid);
      expect(readFileSync(join(dir, "agentplane.pid"), "utf8")).toBe(`${pid}\n`);
      let refused: unknown;
      try {
        lockDataDir(dir);
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(DataDirInUseError);
      expect(describeStartupError(refused)).toBe(
        `the data directory ${dir} is in use by process ${pid} (another npm start?): stop that one, or set AGENTPLANE_DATA_DIR to another directory`,
      );
      // Its holder gone without releasing it (killed), the next start takes it over.
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
      const release = lockDataDir(dir);
      expect(readFileSync(join(dir, "agentplane.pid"), "utf8")).toBe(`${process.pid}\n`);
      // A release by a process that no longer holds it leaves the holder's file alone.
      releaseOther();
      expect(existsSync(join(dir, "agentplane.pid"))).toBe(true);
      release();
      expect(existsSync(join(dir, "agentplane.pid"))).toBe(false);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it.skipIf(!existsSync("/proc/self/cmdline"))("takes over a file naming a live process that is not Node", async () => {
    const dir = join(base, "reused");
    prepareDataDir(dir);
    // A pid reused after a restart by something else, as a container's init would be.
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, "agentplane.pid"), `${other.pid}\n`);
      lockDataDir(dir)();
      expect(existsSync(join(dir, "agentplane.pid"))).toBe(false);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("takes over a file it cannot read a holder from", () => {
    const dir = join(base, "garbled");
    prepareDataDir(dir);
    writeFileSync(join(dir, "agentplane.pid"), "");
    lockDataDir(dir)();
    expect(existsSync(join(dir, "agentplane.pid"))).toBe(false);
  });
});
